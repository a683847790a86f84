//! The event loop (docs/jobs.md, "Time"): jobs arrive at their times; completions happen at
//! theirs; every `step_s` a scheduling step places waiting tasks. Virtual time only, one
//! thread, every draw from a stream keyed by the seed and the job: the same seed gives the same
//! report, whatever else runs. A step with nothing new to do (no arrival, no completion, no
//! mitigation since a step that placed nothing) would place nothing again, so the loop jumps
//! to the step of the next event.

mod events;
mod state;
mod step;
mod stepper;

pub use stepper::{Completed, NodeView, Observation, RunningView, Stepper, WaitingView};

use crate::error::JobsError;
use crate::mitigation::Mitigation;
use crate::nodes::Nodes;
use crate::placement::Placement;
use crate::report::Report;
use crate::workload::{JobSpec, JobsWorkload};
use state::Sim;

/// The settings of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimSettings {
    /// The seed of every draw.
    pub seed: u64,
    /// Jobs arrive in `[0, duration_s)`.
    pub duration_s: f64,
    /// How long after `duration_s` the run may go on for the last jobs to complete (infinite:
    /// until every job has completed or can never be placed).
    pub drain_s: f64,
    /// The scheduling period, s (Volcano's `--schedule-period` default, 1 s).
    pub step_s: f64,
    /// The queue is sampled at the end of every window of this length, s (EdgeTuner's
    /// time-step, 10 s).
    pub window_s: f64,
}

impl Default for SimSettings {
    fn default() -> Self {
        Self {
            seed: 1,
            duration_s: 3600.0,
            drain_s: f64::INFINITY,
            step_s: 1.0,
            window_s: 10.0,
        }
    }
}

impl SimSettings {
    fn check(&self) -> Result<(), JobsError> {
        let bad = |setting, message: String| Err(JobsError::Setting { setting, message });
        if !(self.duration_s.is_finite() && self.duration_s >= 0.0) {
            return bad(
                "duration_s",
                format!("expected a finite value >= 0, got {}", self.duration_s),
            );
        }
        if self.drain_s.is_nan() || self.drain_s < 0.0 {
            return bad(
                "drain_s",
                format!("expected a value >= 0, got {}", self.drain_s),
            );
        }
        if !(self.step_s.is_finite() && self.step_s > 0.0) {
            return bad(
                "step_s",
                format!("expected a finite value > 0, got {}", self.step_s),
            );
        }
        if !(self.window_s.is_finite() && self.window_s > 0.0) {
            return bad(
                "window_s",
                format!("expected a finite value > 0, got {}", self.window_s),
            );
        }
        Ok(())
    }
}

/// The most jobs a run may expect (the workload's mean rate × `duration_s`): every job is drawn
/// before the run with its tasks (a few hundred bytes each, tens of tasks a job). Assumption:
/// 200 000 jobs is about 470 hours of the shipped Night workload and a few GB at most.
pub const MAX_JOBS: f64 = 200_000.0;

/// Runs `workload`'s jobs for `settings` on `nodes` under `placement` and `mitigation`.
pub fn run(
    nodes: &Nodes,
    workload: &JobsWorkload,
    placement: &Placement,
    mitigation: Mitigation,
    settings: &SimSettings,
) -> Result<Report, JobsError> {
    settings.check()?;
    let expected = workload.mean_per_min() * settings.duration_s / 60.0;
    if expected > MAX_JOBS {
        return Err(JobsError::Setting {
            setting: "duration_s",
            message: format!(
                "{} s at {:.3} jobs/min expects {expected:.0} jobs; at most {MAX_JOBS:.0} (every \
                 job is drawn before the run): shorten the run",
                settings.duration_s,
                workload.mean_per_min()
            ),
        });
    }
    let jobs = workload.sample_jobs(settings.seed, settings.duration_s);
    run_jobs(nodes, workload, &jobs, placement, mitigation, settings)
}

/// Runs the given jobs (sampled, replayed from a trace, or built by hand; any order: they
/// arrive at their `arrival_s`, ties in list order). `workload` gives the kinds the jobs name
/// (their stragglers' slowdown); its arrivals are not used.
pub fn run_jobs(
    nodes: &Nodes,
    workload: &JobsWorkload,
    jobs: &[JobSpec],
    placement: &Placement,
    mitigation: Mitigation,
    settings: &SimSettings,
) -> Result<Report, JobsError> {
    settings.check()?;
    check_jobs(workload, jobs)?;
    let mut sim = Sim::new(nodes, workload, jobs, placement, mitigation, settings);
    sim.run();
    Ok(sim.report())
}

/// Refuses jobs a run cannot hold: 2^32 tasks or more, a malformed job, a kind not in
/// `workload`.
fn check_jobs(workload: &JobsWorkload, jobs: &[JobSpec]) -> Result<(), JobsError> {
    let tasks: usize = jobs.iter().map(JobSpec::tasks).sum();
    if tasks >= u32::MAX as usize {
        return Err(JobsError::Setting {
            setting: "jobs",
            message: format!("{tasks} tasks in all: a run holds fewer than 2^32"),
        });
    }
    for (i, j) in jobs.iter().enumerate() {
        j.check(i)?;
        if j.kind >= workload.kinds.len() {
            return Err(JobsError::Job {
                job: i,
                message: format!(
                    "kind {} is not in the workload ({} kinds)",
                    j.kind,
                    workload.kinds.len()
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
