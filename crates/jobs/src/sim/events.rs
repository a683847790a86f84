//! What happens between steps: a job arrives (its first stages enter the queue, or it is
//! refused when a task of it fits no node), an attempt completes (its resources are released,
//! its stage may release the stages that wait for it, its job may complete or trigger the
//! mitigation), and the mitigation itself.

use super::state::{Event, JobPhase, Sim, TaskState};
use crate::mitigation::Mitigation;
use crate::resources::Res;
use crate::workload::sample::JOB_TAG;
use continuum_core::rng::{Purpose, stream_rng};
use std::cmp::Reverse;

impl Sim<'_> {
    /// Every arrival and completion at or before `t`, in time order (a completion before an
    /// arrival at the same time).
    pub(super) fn process_events(&mut self, t: f64) {
        loop {
            let arrival = self
                .arrival_order
                .get(self.next_arrival)
                .map(|&j| (j, self.specs[j as usize].arrival_s))
                .filter(|(_, a)| *a <= t);
            let completion = self.completions.peek().map(|e| e.0).filter(|e| e.t <= t);
            match (arrival, completion) {
                (None, None) => break,
                (Some((_, a)), Some(e)) if e.t <= a => self.complete_attempt(e),
                (None, Some(e)) => self.complete_attempt(e),
                (Some((j, _)), _) => {
                    self.next_arrival += 1;
                    self.arrive(j);
                }
            }
        }
    }

    /// The request and limits of `task`.
    pub(super) fn needs(&self, task: u32) -> (Res, Res) {
        let t = &self.tasks[task as usize];
        let s = &self.specs[t.job as usize].stages[t.stage as usize];
        (s.request, s.limit)
    }

    fn arrive(&mut self, j: u32) {
        let spec = &self.specs[j as usize];
        if !spec
            .stages
            .iter()
            .all(|s| self.nodes.could_hold(&s.request))
        {
            self.jobs[j as usize].phase = JobPhase::Rejected;
            self.counts.rejected += u64::from(self.jobs[j as usize].tasks);
            return;
        }
        self.jobs[j as usize].phase = JobPhase::Active;
        self.counts.created += u64::from(self.jobs[j as usize].tasks);
        self.active_jobs += 1;
        for k in 0..spec.stages.len() {
            if spec.stages[k].parents.is_empty() {
                self.release_stage(j, k);
            }
        }
    }

    /// Queues every task of stage `k` of job `j`.
    fn release_stage(&mut self, j: u32, k: usize) {
        let first = self.jobs[j as usize].first_task;
        let before: u32 = self.specs[j as usize].stages[..k]
            .iter()
            .map(|s| s.work_cpu_s.len() as u32)
            .sum();
        let n = self.specs[j as usize].stages[k].work_cpu_s.len() as u32;
        for task in first + before..first + before + n {
            self.enqueue(task);
        }
    }

    fn enqueue(&mut self, task: u32) {
        self.tasks[task as usize].state = TaskState::Waiting;
        self.tasks[task as usize].since_s = self.now;
        self.waiting.push(task);
        self.n_waiting += 1;
        self.dirty = true;
    }

    /// Releases what a running attempt holds on its node and in its job's allocation.
    fn free(&mut self, task: u32, node: u32) {
        let (req, _) = self.needs(task);
        let n = node as usize;
        self.node_running[n] -= 1;
        let t = self.tasks[task as usize];
        let cores = self.specs[t.job as usize].stages[t.stage as usize].allocated_cpu();
        self.node_cpu_use[n] = if self.node_running[n] == 0 {
            0.0
        } else {
            self.node_cpu_use[n] - cores
        };
        // An empty node holds exactly nothing: no rounding residue builds up over a run.
        self.slots[n].used = if self.node_running[n] == 0 {
            Res::ZERO
        } else {
            self.slots[n].used.sub(&req)
        };
        let job = &mut self.jobs[self.tasks[task as usize].job as usize];
        job.allocated = job.allocated.sub(&req);
        self.n_running -= 1;
        self.dirty = true;
    }

    /// Starts attempt `attempt` of `task` on `node` at `t` (its request already counted on the
    /// node): its completion time is work × slowdown / (allocated cores × node speed).
    pub(super) fn start(&mut self, task: u32, node: usize, t: f64) {
        let (req, _) = self.needs(task);
        let tk = self.tasks[task as usize];
        let spec = &self.specs[tk.job as usize];
        let cores = spec.stages[tk.stage as usize].allocated_cpu();
        let slowdown = match &self.workload.kinds[spec.kind].slowdown {
            None => 1.0,
            Some(d) => {
                let mut rng = stream_rng(
                    self.settings.seed,
                    Purpose::Other,
                    JOB_TAG ^ (u64::from(tk.job) << 1 | 1),
                    u64::from(task) << 24 | u64::from(tk.attempt),
                );
                d.sample(&mut rng).max(1e-9)
            }
        };
        let run_s = tk.work_cpu_s * slowdown / (cores * self.speeds[node]);
        self.tasks[task as usize].state = TaskState::Running(node as u32);
        self.tasks[task as usize].since_s = t;
        self.node_running[node] += 1;
        self.node_cpu_use[node] += cores;
        let job = &mut self.jobs[tk.job as usize];
        job.allocated = job.allocated.add(&req);
        self.n_waiting -= 1;
        self.n_running += 1;
        self.counts.placed += 1;
        self.seq += 1;
        self.completions.push(Reverse(Event {
            t: t + run_s,
            seq: self.seq,
            task,
            attempt: tk.attempt,
        }));
    }

    fn complete_attempt(&mut self, e: Event) {
        self.completions.pop();
        let tk = self.tasks[e.task as usize];
        let TaskState::Running(node) = tk.state else {
            return; // restarted or discarded since: a stale completion
        };
        if tk.attempt != e.attempt {
            return;
        }
        self.free(e.task, node);
        self.tasks[e.task as usize].state = TaskState::Done;
        self.counts.finished += 1;
        let (j, k) = (tk.job, tk.stage as usize);
        let job = &mut self.jobs[j as usize];
        job.done += 1;
        job.stage_left[k] -= 1;
        if job.stage_left[k] == 0 {
            for c in job.children[k].clone() {
                let job = &mut self.jobs[j as usize];
                job.parents_left[c as usize] -= 1;
                if job.parents_left[c as usize] == 0 {
                    self.release_stage(j, c as usize);
                }
            }
        }
        let job = &self.jobs[j as usize];
        if job.done == job.tasks {
            self.finish_job(j, e.t);
        } else if !job.mitigated
            && self.mitigation.triggers(
                job.done,
                job.tasks,
                self.specs[j as usize].has_dependencies(),
            )
        {
            self.mitigate(j, e.t);
        }
    }

    fn finish_job(&mut self, j: u32, t: f64) {
        let job = &mut self.jobs[j as usize];
        job.phase = JobPhase::Complete;
        job.completion_s = Some(t);
        self.active_jobs -= 1;
        self.completed.push(j);
    }

    /// Applies the mitigation to triggered job `j` at `t`.
    fn mitigate(&mut self, j: u32, t: f64) {
        self.jobs[j as usize].mitigated = true;
        let (first, n) = (
            self.jobs[j as usize].first_task,
            self.jobs[j as usize].tasks,
        );
        let discard = matches!(self.mitigation, Mitigation::Discard { .. });
        for task in first..first + n {
            match self.tasks[task as usize].state {
                TaskState::Running(node) => {
                    self.free(task, node);
                    if discard {
                        self.tasks[task as usize].state = TaskState::Discarded;
                        self.counts.discarded_running += 1;
                        self.jobs[j as usize].discarded += 1;
                    } else {
                        self.tasks[task as usize].attempt += 1;
                        self.counts.restarted += 1;
                        self.jobs[j as usize].restarted += 1;
                        self.enqueue(task);
                    }
                }
                TaskState::Waiting if discard => {
                    self.tasks[task as usize].state = TaskState::Discarded;
                    self.n_waiting -= 1;
                    self.counts.discarded_waiting += 1;
                    self.jobs[j as usize].discarded += 1;
                }
                _ => {}
            }
        }
        if discard {
            self.finish_job(j, t);
        }
    }
}
