//! What a run of TapFinger's problem reports (docs/jobs.md §11): TapFinger's objective, the
//! total completion time Σ (finish − arrival) over the tasks, with the mean and median task
//! completion time (JCT) and the makespan (TapFinger §V: completion time and task accumulation).

use super::run::{MlRun, TaskState};
use super::task::MlTaskKind;
use serde::Serialize;

/// A run's figures, in timesteps.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MlReport {
    /// Tasks of the workload.
    pub tasks: usize,
    /// Tasks that completed.
    pub completed: usize,
    /// Tasks that had not completed when the run stopped (counted until then in the totals).
    pub unfinished: usize,
    /// Σ (finish − arrival) over the tasks.
    pub total_completion: f64,
    /// Mean completion time per task.
    pub mean_jct: f64,
    /// Median completion time per task.
    pub median_jct: f64,
    /// The last completion (or the stop), from timestep 0.
    pub makespan: f64,
    /// Timesteps run.
    pub steps: u64,
    /// Mean cores and GPUs an insensitive task was first placed at (0 when none was placed).
    pub first_alloc_insensitive: [f64; 2],
    /// Mean cores and GPUs a sensitive task was first placed at (0 when none was placed).
    pub first_alloc_sensitive: [f64; 2],
}

/// Mean (cores, GPUs) of the first allocations of `run`'s tasks of `kind`.
fn first_alloc(run: &MlRun, kind: MlTaskKind) -> [f64; 2] {
    let (mut n, mut c, mut g) = (0.0, 0.0, 0.0);
    for a in run
        .tasks()
        .iter()
        .filter(|t| t.spec.task.kind() == kind)
        .filter_map(|t| t.first)
    {
        n += 1.0;
        c += f64::from(a.cpu);
        g += f64::from(a.gpu);
    }
    if n > 0.0 { [c / n, g / n] } else { [0.0, 0.0] }
}

impl MlReport {
    /// The figures of `run` as it stands.
    pub fn of(run: &MlRun) -> Self {
        let now = run.now() as f64;
        let mut jct = Vec::with_capacity(run.tasks().len());
        let mut makespan = 0.0f64;
        let mut unfinished = 0;
        for t in run.tasks() {
            let end = match t.state {
                TaskState::Done(f) => f,
                TaskState::Future => continue,
                _ => {
                    unfinished += 1;
                    now
                }
            };
            makespan = makespan.max(end);
            jct.push(end - t.spec.arrival as f64);
        }
        // Tasks that never arrived (a run stopped early) are unfinished too.
        let never = run.tasks().len() - jct.len();
        jct.sort_by(f64::total_cmp);
        let total: f64 = jct.iter().sum();
        let n = jct.len().max(1) as f64;
        let median = match jct.len() {
            0 => 0.0,
            k if k % 2 == 1 => jct[k / 2],
            k => (jct[k / 2 - 1] + jct[k / 2]) / 2.0,
        };
        Self {
            tasks: run.tasks().len(),
            completed: run.tasks().len() - unfinished - never,
            unfinished: unfinished + never,
            total_completion: total,
            mean_jct: total / n,
            median_jct: median,
            makespan,
            steps: run.now(),
            first_alloc_insensitive: first_alloc(run, MlTaskKind::Insensitive),
            first_alloc_sensitive: first_alloc(run, MlTaskKind::Sensitive),
        }
    }
}
