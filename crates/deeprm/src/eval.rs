//! Measuring a scheduler (a trained policy or a heuristic) on jobsets run until every job has
//! finished: the paper's average slowdown, and the other objectives' figures.

use super::env::{End, Env, EnvParams, EpisodeSummary, JobSet};
use super::heuristics::Heuristic;
use super::net::Snapshot;
use super::objective::Objective;
use super::reinforce::rollout;
use continuum_core::rng::{Purpose, stream_rng};
use rayon::prelude::*;
use serde::Serialize;

/// Evaluation episodes run until every job has finished, up to this many timesteps (5× the
/// public code's 200, so that jobs a policy leaves waiting are measured, not cut off).
pub const EVAL_MAX_LENGTH: usize = 1000;

/// Who schedules.
#[derive(Debug, Clone, Copy)]
pub enum Scheduler<'a> {
    /// A trained policy: its weights, whether unplaceable slots are masked, whether it takes
    /// its most likely action (otherwise it samples, as the public code evaluates).
    Agent(&'a Snapshot, bool, bool),
    /// A hand-written baseline.
    Heuristic(Heuristic),
}

/// What a scheduler achieved over some jobsets.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct EvalFigures {
    /// Mean slowdown over the jobs (one left unfinished at its earliest possible completion).
    pub mean_slowdown: f64,
    /// Share of the jobs with slowdown ≤ 2.
    pub share_slowdown_le2: f64,
    /// Share of the jobs with slowdown ≤ 1.5.
    pub share_slowdown_le1_5: f64,
    /// Mean completion time over the jobs, timesteps.
    pub mean_completion: f64,
    /// Mean utilisation over the episodes.
    pub utilisation: f64,
    /// Mean makespan, timesteps.
    pub makespan: f64,
    /// Jobs measured.
    pub jobs: usize,
    /// Jobs left unfinished at the cap or dropped.
    pub unfinished: u32,
}

impl EvalFigures {
    /// The figure an objective is judged by, oriented so that higher is better.
    pub fn score(&self, o: Objective) -> f64 {
        match o {
            Objective::Slowdown => -self.mean_slowdown,
            Objective::Completion => -self.mean_completion,
            Objective::Utilisation => self.utilisation,
            Objective::Makespan => -self.makespan,
            Objective::Within2 => self.share_slowdown_le2,
            Objective::Within2Slowdown => -(self.mean_slowdown + 1.0 - self.share_slowdown_le2),
        }
    }
}

/// Evaluation jobsets of held-out `seed`: `n` jobsets from a stream training never draws from.
pub fn eval_jobsets(p: &EnvParams, seed: u64, n: usize) -> Vec<JobSet> {
    (0..n)
        .map(|i| {
            p.jobset(&mut stream_rng(
                seed,
                Purpose::Arrivals,
                0x6576_616c,
                i as u64,
            ))
        })
        .collect()
}

/// One episode of `who` on `jobs`, until all jobs are done.
pub fn episode(p: EnvParams, jobs: &JobSet, who: Scheduler, seed: u64, i: u64) -> EpisodeSummary {
    let p = EnvParams {
        episode_max_length: p.episode_max_length.max(EVAL_MAX_LENGTH),
        ..p
    };
    let mut rng = stream_rng(seed, Purpose::Policy, 0x6576_616c, i);
    match who {
        Scheduler::Agent(policy, mask, greedy) => {
            rollout(
                p,
                jobs,
                Objective::Slowdown,
                End::AllDone,
                policy,
                mask,
                greedy,
                &mut rng,
            )
            .summary
        }
        Scheduler::Heuristic(h) => {
            let mut env = Env::new(p, jobs.clone(), End::AllDone, Objective::Slowdown);
            while !env.step(h.act(&env, &mut rng)).done {}
            env.summary()
        }
    }
}

/// `who` on every jobset (in parallel; the result does not depend on the thread count): the
/// figures and every finished job's slowdown.
pub fn evaluate(
    p: EnvParams,
    jobsets: &[JobSet],
    who: Scheduler,
    seed: u64,
) -> (EvalFigures, Vec<f64>) {
    let runs: Vec<EpisodeSummary> = jobsets
        .par_iter()
        .enumerate()
        .map(|(i, j)| episode(p, j, who, seed, i as u64))
        .collect();
    figures(&runs)
}

/// Pools episodes' summaries.
pub fn figures(runs: &[EpisodeSummary]) -> (EvalFigures, Vec<f64>) {
    let slow: Vec<f64> = runs
        .iter()
        .flat_map(|r| r.slowdowns.iter().copied())
        .collect();
    let comp: Vec<f64> = runs
        .iter()
        .flat_map(|r| r.completion.iter().copied())
        .collect();
    let mean = |v: &[f64]| {
        if v.is_empty() {
            0.0
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    };
    let n = runs.len().max(1) as f64;
    let share = |limit: f64| {
        if slow.is_empty() {
            0.0
        } else {
            slow.iter().filter(|s| **s <= limit).count() as f64 / slow.len() as f64
        }
    };
    let f = EvalFigures {
        mean_slowdown: mean(&slow),
        share_slowdown_le2: share(2.0),
        share_slowdown_le1_5: share(1.5),
        mean_completion: mean(&comp),
        utilisation: runs.iter().map(|r| r.utilisation).sum::<f64>() / n,
        makespan: runs.iter().map(|r| f64::from(r.makespan)).sum::<f64>() / n,
        jobs: slow.len(),
        unfinished: runs.iter().map(|r| r.unfinished).sum(),
    };
    (f, slow)
}
