//! The schedulers TapFinger compares with (TapFinger §V-A "Baselines"), as [`MlScheduler`]s of
//! a run (docs/jobs.md §11), and the loop that runs one ([`run_with`]).
//!
//! - `optimus` and `tiresias` re-decide, at every timestep and cluster by cluster, the
//!   allocation of every task bound to the cluster and of its pending set: they pre-empt and
//!   resize, paying the switching overhead. Clusters take turns in a rotating order (cluster
//!   t mod N first at timestep t) so that none is always first to the shared tasks
//!   (assumption: TapFinger runs them per cluster without saying how shared tasks are split).
//! - `random`, `min` and `prior-pull` place tasks from the pending sets in logical rounds
//!   ([`pull_rounds`], TapFinger's multi-task scheduling) and never change an allocation:
//!   `random` and `min` claim a pending task drawn uniformly with a random / the minimum valid
//!   allocation, conflicts drawn uniformly; `prior-pull` claims as `min` and settles conflicts
//!   by eq. 11's prior alone (the room for the task's minimum), TapFinger without its networks.
//! - `efficient` is continuum's own rule, not the paper's: the earliest pending task, at the
//!   allocation that finishes its work with the least resource-time — (cores / the cluster's
//!   cores + GPUs / its GPUs) × timesteps, from the task's speed curve as Optimus is given it —
//!   among those that fit (ties to the smaller allocation); placed in logical rounds, conflicts
//!   by eq. 11's prior, never resized. It is the strong simple rule a learned row must beat.

use super::claims::{Claim, Settle, pull_rounds};
use super::heuristics::{min_allocation, random_allocation};
use super::optimus::{OptimusTask, optimus};
use super::report::MlReport;
use super::run::{Interval, MlRun};
use super::tiresias::{Tiresias, TiresiasEntry};
use super::workload::MlSetting;
use continuum_core::rng::{Purpose, SimRng, stream_rng};
use rand::Rng;
use std::collections::BTreeMap;

/// A scheduler of TapFinger's problem: one call per timestep.
pub trait MlScheduler {
    /// Its name in reports.
    fn name(&self) -> String;
    /// The decisions of one timestep.
    fn schedule(&mut self, iv: &mut Interval<'_>, rng: &mut SimRng);
}

/// The rule baselines' names, as `continuum jobs ml --methods` takes them.
pub const RULES: [&str; 6] = [
    "optimus",
    "tiresias",
    "random",
    "min",
    "prior-pull",
    "efficient",
];

/// The rule baseline called `name` (one of [`RULES`]).
pub fn rule(name: &str) -> Option<Box<dyn MlScheduler + Send>> {
    Some(match name {
        "optimus" => Box::new(Optimus),
        "tiresias" => Box::new(TiresiasRule::default()),
        "random" => Box::new(Pick {
            name: "random",
            random_alloc: true,
            settle: Settle::Random,
        }),
        "min" => Box::new(Pick {
            name: "min",
            random_alloc: false,
            settle: Settle::Random,
        }),
        "prior-pull" => Box::new(Pick {
            name: "prior-pull",
            random_alloc: false,
            settle: Settle::Bayes,
        }),
        "efficient" => Box::new(Efficient),
        _ => return None,
    })
}

/// Runs `setting`'s tasks for `seed` under `sched` to the end; the scheduler's draws come from
/// its own stream of the seed.
pub fn run_with(setting: &MlSetting, seed: u64, sched: &mut dyn MlScheduler) -> MlReport {
    let mut run = MlRun::new(setting.clone(), seed);
    let mut rng = stream_rng(seed, Purpose::Policy, 0x6d6c, 0);
    while !run.finished() {
        run.admit();
        sched.schedule(&mut run.interval(), &mut rng);
        run.advance();
    }
    MlReport::of(&run)
}

/// Random or Min: a pending task drawn uniformly, a random / the minimum valid allocation.
struct Pick {
    name: &'static str,
    random_alloc: bool,
    settle: Settle,
}

impl MlScheduler for Pick {
    fn name(&self) -> String {
        self.name.into()
    }

    fn schedule(&mut self, iv: &mut Interval<'_>, rng: &mut SimRng) {
        let random_alloc = self.random_alloc;
        let claim = |run: &MlRun, n: u32, fit: &[u32], rng: &mut SimRng| {
            let j = fit[rng.random_range(0..fit.len())];
            let task = &run.tasks()[j as usize].spec.task;
            let alloc = if random_alloc {
                random_allocation(task, run.free(n), rng)
            } else {
                min_allocation(task, run.free(n))
            }?;
            Some(Claim {
                task: j,
                alloc,
                p: 1.0,
            })
        };
        pull_rounds(iv, self.settle, rng, claim, |_, _| {});
    }
}

/// The allocation of `task` that fits in `free` with the least resource-time on a cluster of
/// `capacity`: (c / C_cpu + g / C_gpu) × timesteps at (c, g); ties to fewer cores, then fewer
/// GPUs. `None` when the minimum does not fit.
pub fn efficient_allocation(
    task: &super::MlTask,
    capacity: super::Alloc,
    free: super::Alloc,
) -> Option<super::Alloc> {
    let cost = |a: &super::Alloc| {
        let share =
            f64::from(a.cpu) / f64::from(capacity.cpu) + f64::from(a.gpu) / f64::from(capacity.gpu);
        share * task.steps_at(a.cpu, a.gpu)
    };
    let mut best: Option<(f64, super::Alloc)> = None;
    for a in task.allocations().filter(|a| a.fits_in(free)) {
        let c = cost(&a);
        if best.is_none_or(|b| c < b.0 - 1e-12) {
            best = Some((c, a));
        }
    }
    best.map(|b| b.1)
}

/// `efficient`: the earliest fitting pending task at its least resource-time allocation.
struct Efficient;

impl MlScheduler for Efficient {
    fn name(&self) -> String {
        "efficient".into()
    }

    fn schedule(&mut self, iv: &mut Interval<'_>, rng: &mut SimRng) {
        let claim = |run: &MlRun, n: u32, fit: &[u32], _: &mut SimRng| {
            let j = fit[0];
            let task = &run.tasks()[j as usize].spec.task;
            let alloc = efficient_allocation(task, run.capacity(n), run.free(n))?;
            Some(Claim {
                task: j,
                alloc,
                p: 1.0,
            })
        };
        pull_rounds(iv, Settle::Bayes, rng, claim, |_, _| {});
    }
}

/// The clusters in the order they decide at the current timestep: t mod N first.
fn turns(run: &MlRun) -> impl Iterator<Item = u32> {
    let n = run.clusters() as u64;
    let first = run.now() % n;
    (0..n).map(move |k| ((first + k) % n) as u32)
}

/// Withdraws every task bound to cluster `n` (its resources all free again) and returns them.
fn withdraw_all(iv: &mut Interval<'_>, n: u32) -> Vec<u32> {
    let bound = iv.run().bound(n);
    for &j in &bound {
        iv.set_alloc(j, None)
            .expect("a bound task can always be withdrawn");
    }
    bound
}

/// Optimus: every timestep, per cluster, the bound tasks then the pending set get their
/// minimum in that order while it fits, then units by largest marginal gain
/// ([`optimus`](super::optimus::optimus)).
struct Optimus;

impl MlScheduler for Optimus {
    fn name(&self) -> String {
        "optimus".into()
    }

    fn schedule(&mut self, iv: &mut Interval<'_>, _rng: &mut SimRng) {
        replan(iv, |run, n, ids| {
            let offers: Vec<OptimusTask<'_>> = ids
                .iter()
                .map(|&j| {
                    let t = &run.tasks()[j as usize];
                    OptimusTask {
                        task: &t.spec.task,
                        remaining_work: t.remaining,
                    }
                })
                .collect();
            optimus(run.capacity(n), run.free(n), &offers)
        });
    }
}

/// Re-plans every cluster in turn: withdraws its bound tasks, asks `plan(run, n, ids)` for the
/// allocations of `ids` — its bound tasks, then its pending set — and applies them.
fn replan<P>(iv: &mut Interval<'_>, mut plan: P)
where
    P: FnMut(&MlRun, u32, &[u32]) -> Vec<Option<super::Alloc>>,
{
    let order: Vec<u32> = turns(iv.run()).collect();
    for n in order {
        let bound = withdraw_all(iv, n);
        let pending = iv.run().pending(n);
        let ids: Vec<u32> = bound.iter().chain(&pending).copied().collect();
        let p = plan(iv.run(), n, &ids);
        apply(iv, n, &ids, bound.len(), &p);
    }
}

/// Applies a plan for `ids` (the first `n_bound` bound to cluster `n`, the rest pending).
fn apply(
    iv: &mut Interval<'_>,
    n: u32,
    ids: &[u32],
    n_bound: usize,
    plan: &[Option<super::Alloc>],
) {
    for (k, (&j, a)) in ids.iter().zip(plan).enumerate() {
        let res = if k < n_bound {
            iv.set_alloc(j, *a)
        } else if let Some(a) = a {
            iv.place(j, n, *a)
        } else {
            Ok(())
        };
        res.unwrap_or_else(|e| panic!("a plan within the cluster's capacity: {e}"));
    }
}

/// Tiresias: every timestep, per cluster, the bound tasks and the pending set in the two-level
/// least-attained-service order, each given its minimum while it fits (TapFinger §V-B1:
/// "Tiresias ... only schedules tasks given the minimum resource requirements"); the others
/// wait (bound ones pre-empted).
#[derive(Default)]
struct TiresiasRule {
    queue: Tiresias,
    recorded: BTreeMap<u32, f64>,
}

impl TiresiasRule {
    /// Brings the attained service of `ids` up to date.
    fn record(&mut self, run: &MlRun, ids: &[u32]) {
        for &j in ids {
            let now = run.tasks()[j as usize].service;
            let was = self.recorded.insert(j, now).unwrap_or(0.0);
            self.queue.record(u64::from(j), (now - was).max(0.0));
        }
    }
}

impl MlScheduler for TiresiasRule {
    fn name(&self) -> String {
        "tiresias".into()
    }

    fn schedule(&mut self, iv: &mut Interval<'_>, _rng: &mut SimRng) {
        replan(iv, |run, n, ids| {
            self.record(run, ids);
            let entries: Vec<TiresiasEntry> = ids
                .iter()
                .map(|&j| {
                    let t = &run.tasks()[j as usize];
                    TiresiasEntry {
                        id: u64::from(j),
                        start: t.start.map(|s| s as f64),
                        arrival: t.spec.arrival as f64,
                    }
                })
                .collect();
            let mut free = run.free(n);
            let mut plan = vec![None; ids.len()];
            for id in self.queue.order(&entries) {
                let k = ids
                    .iter()
                    .position(|&j| u64::from(j) == id)
                    .expect("ranked from ids");
                let min = run.tasks()[ids[k] as usize].spec.task.min();
                if min.fits_in(free) {
                    free = super::Alloc::new(free.cpu - min.cpu, free.gpu - min.gpu);
                    plan[k] = Some(min);
                }
            }
            plan
        });
    }
}

#[cfg(test)]
#[path = "schedulers_tests.rs"]
mod tests;
