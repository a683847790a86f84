//! Tiresias's two-level least-attained-service queue (Gu et al., "Tiresias: A GPU Cluster
//! Manager for Distributed Deep Learning", NSDI 2019) as TapFinger compares with it (TapFinger
//! §V-A, "Baselines"): "It divides the queue according to the GPU time thresholds and has the
//! tasks of each queue sorted in a First-In First-Out order of their start times. In our
//! implementation, we use a 2-level feedback queue as the original paper recommended and the
//! median GPU time as the threshold." docs/jobs.md §10.
//!
//! - A task's *attained service* is its GPUs × timesteps run, summed over its runs.
//! - The *threshold* is the median attained service of every task seen (every task recorded,
//!   finished ones at their total; with an even count, the mean of the two middle values).
//! - A task is at level 1 (demoted) once its attained service reaches the threshold, and at
//!   level 0 before. Assumption: a task that has not run (service 0) stays at level 0 even when
//!   the threshold is 0 (more than half the tasks seen have not run): Tiresias starts every job
//!   in its highest-priority queue.
//! - Order: level 0 first; within a level FIFO by start time (the task's first start), tasks
//!   that have not started after those that have, by arrival (assumption: TapFinger orders by
//!   start times and does not say where a task without one goes), then in the order given.

use std::collections::BTreeMap;

/// A task as Tiresias orders it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TiresiasEntry {
    /// The task's id, as given to [`Tiresias::record`].
    pub id: u64,
    /// When it first started running, `None` if it has not.
    pub start: Option<f64>,
    /// When it arrived.
    pub arrival: f64,
}

/// The attained service of every task seen, and the two-level queue it defines.
#[derive(Debug, Clone, Default)]
pub struct Tiresias {
    attained: BTreeMap<u64, f64>,
}

impl Tiresias {
    /// No task seen yet.
    pub fn new() -> Self {
        Tiresias::default()
    }

    /// Adds `service` (GPUs × timesteps run: 2 GPUs for half a timestep is 1.0) to `task`'s
    /// attained service; `record(task, 0.0)` makes a task seen before it runs.
    ///
    /// # Panics
    /// When `service` is negative or not finite.
    pub fn record(&mut self, task: u64, service: f64) {
        assert!(
            service.is_finite() && service >= 0.0,
            "attained service must be finite and non-negative, got {service} for task {task}"
        );
        *self.attained.entry(task).or_insert(0.0) += service;
    }

    /// `task`'s attained service; 0 for a task never recorded.
    pub fn attained(&self, task: u64) -> f64 {
        self.attained.get(&task).copied().unwrap_or(0.0)
    }

    /// The demotion threshold: the median attained service of the tasks seen; `None` before any.
    pub fn threshold(&self) -> Option<f64> {
        let mut v: Vec<f64> = self.attained.values().copied().collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        Some(if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        })
    }

    /// `task`'s level: 1 once its attained service is positive and at least the threshold,
    /// else 0.
    pub fn level(&self, task: u64) -> u8 {
        Self::level_at(self.attained(task), self.threshold())
    }

    fn level_at(service: f64, threshold: Option<f64>) -> u8 {
        match threshold {
            Some(th) if service > 0.0 && service >= th => 1,
            _ => 0,
        }
    }

    /// The ids of `tasks` in Tiresias's order: level, then start time (not started last), then
    /// arrival, then the order given.
    pub fn order(&self, tasks: &[TiresiasEntry]) -> Vec<u64> {
        let th = self.threshold();
        let mut keyed: Vec<(u8, f64, f64, usize, u64)> = tasks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let level = Self::level_at(self.attained(t.id), th);
                (level, t.start.unwrap_or(f64::INFINITY), t.arrival, i, t.id)
            })
            .collect();
        keyed.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then(a.1.total_cmp(&b.1))
                .then(a.2.total_cmp(&b.2))
                .then(a.3.cmp(&b.3))
        });
        keyed.into_iter().map(|k| k.4).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: u64, start: Option<f64>, arrival: f64) -> TiresiasEntry {
        TiresiasEntry { id, start, arrival }
    }

    #[test]
    fn demotion_exactly_at_the_threshold() {
        // Services 1, 3, 3, 5: median (3 + 3) / 2 = 3. Tasks 2 and 3 sit exactly on it and are
        // demoted; task 1 is below it.
        let mut q = Tiresias::new();
        for (id, s) in [(1, 1.0), (2, 3.0), (3, 3.0), (4, 5.0)] {
            q.record(id, s);
        }
        assert_eq!(q.threshold(), Some(3.0));
        assert_eq!(
            [q.level(1), q.level(2), q.level(3), q.level(4)],
            [0, 1, 1, 1]
        );
        // Services 1, 2.9, 3.1, 5: median (2.9 + 3.1) / 2 = 3.0. Task 2 just under it stays.
        let mut q = Tiresias::new();
        for (id, s) in [(1, 1.0), (2, 2.9), (3, 3.1), (4, 5.0)] {
            q.record(id, s);
        }
        assert!((q.threshold().unwrap() - 3.0).abs() < 1e-12);
        assert_eq!(
            [q.level(1), q.level(2), q.level(3), q.level(4)],
            [0, 0, 1, 1]
        );
    }

    #[test]
    fn service_accumulates_gpus_times_time() {
        // 2 GPUs for 1 timestep, then 4 GPUs for half a timestep: 2 + 2 = 4.
        let mut q = Tiresias::new();
        q.record(7, 2.0 * 1.0);
        q.record(7, 4.0 * 0.5);
        assert_eq!(q.attained(7), 4.0);
        assert_eq!(q.attained(8), 0.0);
        // Odd count: services 0, 4, 6 (task 8 seen, not run): the median is 4, task 7 demoted.
        q.record(8, 0.0);
        q.record(9, 6.0);
        assert_eq!(q.threshold(), Some(4.0));
        assert_eq!([q.level(7), q.level(8), q.level(9)], [1, 0, 1]);
    }

    #[test]
    fn a_task_that_has_not_run_stays_at_level_0() {
        // Services 0, 0, 2: the median is 0; only the task that ran is demoted.
        let mut q = Tiresias::new();
        for (id, s) in [(1, 0.0), (2, 0.0), (3, 2.0)] {
            q.record(id, s);
        }
        assert_eq!(q.threshold(), Some(0.0));
        assert_eq!([q.level(1), q.level(2), q.level(3)], [0, 0, 1]);
        assert_eq!(Tiresias::new().threshold(), None);
        assert_eq!(Tiresias::new().level(1), 0);
    }

    #[test]
    fn order_is_level_then_fifo_by_start() {
        // Services: 1 → 6 (level 1), 2 → 1, 3 → 0, 4 → 2, 5 → 0; median 1, so 1, 2 and 4 are
        // at level 1 and 3 and 5 at level 0. Level 0: 5 started at 2.0, 3 has not started (last
        // in its level). Level 1: by start 1 (0.5), 4 (1.0), 2 (3.0).
        let mut q = Tiresias::new();
        for (id, s) in [(1, 6.0), (2, 1.0), (3, 0.0), (4, 2.0), (5, 0.0)] {
            q.record(id, s);
        }
        assert_eq!(q.threshold(), Some(1.0));
        let tasks = [
            entry(1, Some(0.5), 0.0),
            entry(2, Some(3.0), 0.2),
            entry(3, None, 0.1),
            entry(4, Some(1.0), 0.3),
            entry(5, Some(2.0), 0.4),
        ];
        assert_eq!(q.order(&tasks), vec![5, 3, 1, 4, 2]);
    }

    #[test]
    fn unstarted_tasks_go_by_arrival_then_as_given() {
        let q = Tiresias::new();
        let tasks = [
            entry(10, None, 3.0),
            entry(11, None, 1.0),
            entry(12, None, 1.0),
            entry(13, Some(5.0), 4.0),
        ];
        assert_eq!(q.order(&tasks), vec![13, 11, 12, 10]);
    }

    #[test]
    #[should_panic(expected = "non-negative")]
    fn negative_service_is_refused() {
        Tiresias::new().record(1, -1.0);
    }
}
