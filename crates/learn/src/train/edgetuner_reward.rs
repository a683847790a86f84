//! EdgeTuner's reward (eqs. 3–6 of Wen et al., "EdgeTuner", J. Cloud Computing 12:90, 2023) as
//! continuum reads it (docs/model.md §9.5). The paper gives the three terms and the signs of
//! their weights, α < 0 on a tail and β > 0 on work done; the forms below and the weights of
//! `config/edgetuner-k8s.yaml` are ours:
//!
//! - r_job = α1 · (mean JTL of the window's complete jobs, s) + β1 · (complete jobs / jobs),
//!   a job being a stream's queries in the window, complete when no task was rejected, its JTL
//!   its slowest answer (docs/model.md §12);
//! - r_run = α2 · (oldest running task's age at the window's end − at its start, s)
//!   + β2 · (tasks processed in the window / tasks offered in it, at most 1);
//! - r_wait = α3 · (oldest waiting task's age, the same change, s)
//!   + β3 · (tasks taken into batches / tasks offered, at most 1);
//! - r = r_job + r_run + r_wait.

use continuum_sim::{TaskAges, TaskFlow, WindowJobs};

/// What the simulation showed at one window's end.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct WindowEnd {
    /// The oldest running and waiting tasks.
    pub ages: TaskAges,
    /// Tasks batched and processed since the run began.
    pub flow: TaskFlow,
}

/// The reward of a window from its jobs, the window ends before and after it, and the tasks
/// offered in it.
pub(crate) fn reward(
    alpha: [f64; 3],
    beta: [f64; 3],
    jobs: &WindowJobs,
    before: &WindowEnd,
    after: &WindowEnd,
    offered: u64,
) -> f64 {
    let mean_jtl_s = if jobs.answered > 0 {
        jobs.tail_sum_ms / jobs.answered as f64 / 1000.0
    } else {
        0.0
    };
    let complete = if jobs.jobs > 0 {
        jobs.complete as f64 / jobs.jobs as f64
    } else {
        1.0
    };
    let per_offered = |n: u64| {
        if offered > 0 {
            (n as f64 / offered as f64).min(1.0)
        } else {
            1.0
        }
    };
    let r_job = alpha[0] * mean_jtl_s + beta[0] * complete;
    let r_run = alpha[1] * (after.ages.running_ms - before.ages.running_ms) / 1000.0
        + beta[1] * per_offered(after.flow.processed.saturating_sub(before.flow.processed));
    let r_wait = alpha[2] * (after.ages.waiting_ms - before.ages.waiting_ms) / 1000.0
        + beta[2] * per_offered(after.flow.batched.saturating_sub(before.flow.batched));
    r_job + r_run + r_wait
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_term_has_the_papers_sign() {
        let (a, b) = ([-1.0, -0.5, -0.5], [1.0, 0.5, 0.5]);
        let jobs = WindowJobs {
            jobs: 4,
            complete: 3,
            answered: 3,
            tail_sum_ms: 600.0,
        };
        let start = WindowEnd::default();
        let end = WindowEnd {
            ages: TaskAges {
                running_ms: 100.0,
                waiting_ms: 400.0,
            },
            flow: TaskFlow {
                batched: 90,
                processed: 80,
            },
        };
        // r_job = −0.2 + 0.75; r_run = −0.05 + 0.4; r_wait = −0.2 + 0.45.
        let r = reward(a, b, &jobs, &start, &end, 100);
        assert!((r - (0.55 + 0.35 + 0.25)).abs() < 1e-12, "{r}");
        // A longer job tail, an older queue, less work done: each lowers it.
        let slower = WindowJobs {
            tail_sum_ms: 1200.0,
            ..jobs
        };
        assert!(reward(a, b, &slower, &start, &end, 100) < r);
        let older = WindowEnd {
            ages: TaskAges {
                waiting_ms: 900.0,
                ..end.ages
            },
            ..end
        };
        assert!(reward(a, b, &jobs, &start, &older, 100) < r);
        let fewer = WindowJobs {
            complete: 1,
            ..jobs
        };
        assert!(reward(a, b, &fewer, &start, &end, 100) < r);
        // A queue that drains (ages fall) is rewarded; shares are capped at 1.
        let drained = WindowEnd {
            ages: TaskAges::default(),
            ..end
        };
        let before_old = WindowEnd {
            ages: end.ages,
            ..start
        };
        assert!(reward(a, b, &jobs, &before_old, &drained, 100) > r);
        let over = WindowEnd {
            flow: TaskFlow {
                batched: 500,
                processed: 500,
            },
            ..end
        };
        let capped = reward(a, b, &jobs, &start, &over, 100);
        let full = WindowEnd {
            flow: TaskFlow {
                batched: 100,
                processed: 100,
            },
            ..end
        };
        assert_eq!(capped, reward(a, b, &jobs, &start, &full, 100));
    }
}
