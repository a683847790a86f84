//! The ages of the tasks in the system at an instant (docs/model.md §12): how long the oldest
//! query in a batch and the oldest one waiting in a queue have been in the system since their
//! emission — the running and waiting tasks' tails of EdgeTuner's reward.

use super::Simulation;

/// The oldest running and waiting tasks' ages, ms (0 when there is none).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TaskAges {
    /// The oldest query in a batch: now − its emission.
    pub running_ms: f64,
    /// The oldest query waiting in a worker's queue.
    pub waiting_ms: f64,
}

impl Simulation {
    /// The oldest running and waiting tasks' ages now (copies count with their original's
    /// emission).
    pub fn task_ages(&self) -> TaskAges {
        let mut a = TaskAges::default();
        let age = |qid: u32| self.now - self.queries.get(qid).t_emit;
        for w in &self.workers {
            for s in &w.servers {
                for &qid in &s.batch {
                    a.running_ms = a.running_ms.max(age(qid));
                }
            }
            // FIFO: the front of a queue has waited longest, but copies and restarts join
            // queues late with an old emission, so every entry is looked at.
            for q in &w.queue {
                a.waiting_ms = a.waiting_ms.max(age(q.qid));
            }
        }
        a
    }
}
