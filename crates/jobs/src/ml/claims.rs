//! Multi-task pulling (TapFinger §IV-C, §IV-D, Algorithm 1): within one timestep, logical rounds
//! in which every cluster still choosing claims one task of its pending set with an allocation;
//! a task claimed by several clusters goes to one of them ([`Settle`]); the losers choose again
//! in the next round, and a cluster stops for the timestep once it passes (a void choice) or
//! has no pending task whose minimum fits in what it has free.

use super::run::{Interval, MlRun};
use super::task::Alloc;
use continuum_core::rng::SimRng;
use rand::Rng;

/// One cluster's claim in a round.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Claim {
    /// The task claimed (from the cluster's pending set).
    pub task: u32,
    /// The allocation it would get.
    pub alloc: Alloc,
    /// The claimant's probability of choosing it, Pr(j | n) (1 for a rule).
    pub p: f64,
}

/// How a task claimed by several clusters is settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settle {
    /// TapFinger's eq. 11: the largest Pr(j | n) · Pr(n), Pr(n) the copies of the task's
    /// minimum that cluster n's free resources hold; ties to the lowest cluster.
    Bayes,
    /// A claimant drawn uniformly (the rules without a resolution of their own).
    Random,
    /// The lowest cluster (no resolution: the vanilla-MARL ablation).
    First,
}

/// How many copies of `min` fit in `free`.
pub fn copies(free: Alloc, min: Alloc) -> u32 {
    (free.cpu / min.cpu.max(1)).min(free.gpu / min.gpu.max(1))
}

/// Pending tasks of cluster `n` whose minimum fits in its free resources, by arrival.
pub fn fitting(run: &MlRun, n: u32) -> Vec<u32> {
    let free = run.free(n);
    run.pending(n)
        .into_iter()
        .filter(|&j| run.tasks()[j as usize].spec.task.min().fits_in(free))
        .collect()
}

/// Which claims win: one per claimed task, as `how` settles it. `claims[n]` is cluster n's.
pub fn winners(run: &MlRun, claims: &[Option<Claim>], how: Settle, rng: &mut SimRng) -> Vec<bool> {
    let mut won = vec![false; claims.len()];
    let mut tasks: Vec<u32> = claims.iter().flatten().map(|c| c.task).collect();
    tasks.sort_unstable();
    tasks.dedup();
    for j in tasks {
        let who: Vec<usize> = (0..claims.len())
            .filter(|&n| claims[n].is_some_and(|c| c.task == j))
            .collect();
        let min = run.tasks()[j as usize].spec.task.min();
        let pick = match how {
            Settle::First => who[0],
            Settle::Random => who[rng.random_range(0..who.len())],
            Settle::Bayes => {
                let score = |n: usize| {
                    let c = claims[n].expect("a claimant has a claim");
                    c.p * f64::from(copies(run.free(n as u32), min))
                };
                let mut best = who[0];
                for &n in &who[1..] {
                    if score(n) > score(best) {
                        best = n;
                    }
                }
                best
            }
        };
        won[pick] = true;
    }
    won
}

/// Runs the logical rounds of one timestep. `claim(run, n, fitting)` is cluster n's choice
/// given its fitting pending tasks (never empty): a claim, or `None` to pass. `settled(won)`
/// hears each round's outcome (per cluster, whether its claim won; false for a pass or a
/// cluster that sat the round out). Returns the number of tasks placed.
///
/// # Panics
/// When a claim names a task outside the cluster's fitting set or an allocation that does not
/// fit (a scheduler's bug).
pub fn pull_rounds<C, S>(
    iv: &mut Interval<'_>,
    how: Settle,
    rng: &mut SimRng,
    mut claim: C,
    mut settled: S,
) -> usize
where
    C: FnMut(&MlRun, u32, &[u32], &mut SimRng) -> Option<Claim>,
    S: FnMut(&[Option<Claim>], &[bool]),
{
    let n = iv.run().clusters();
    let mut active = vec![true; n];
    let mut placed = 0;
    loop {
        let mut claims = vec![None; n];
        for c in 0..n {
            if !active[c] {
                continue;
            }
            let fit = fitting(iv.run(), c as u32);
            if fit.is_empty() {
                active[c] = false;
                continue;
            }
            claims[c] = claim(iv.run(), c as u32, &fit, rng);
            if claims[c].is_none() {
                active[c] = false;
            }
        }
        if claims.iter().all(Option::is_none) {
            return placed;
        }
        let won = winners(iv.run(), &claims, how, rng);
        for (c, w) in won.iter().enumerate() {
            if *w {
                let k = claims[c].expect("a winner has a claim");
                iv.place(k.task, c as u32, k.alloc)
                    .unwrap_or_else(|e| panic!("cluster {c}'s claim: {e}"));
                placed += 1;
            }
        }
        settled(&claims, &won);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ml::workload::MlSetting;
    use continuum_core::rng::{Purpose, stream_rng};

    #[test]
    fn copies_count_whole_minimums() {
        assert_eq!(copies(Alloc::new(16, 16), Alloc::new(2, 1)), 8);
        assert_eq!(copies(Alloc::new(5, 1), Alloc::new(2, 1)), 1);
        assert_eq!(copies(Alloc::new(1, 16), Alloc::new(2, 1)), 0);
    }

    /// Two clusters claim the same task: eq. 11 gives it to the larger Pr(j|n)·copies, the
    /// rule without resolution to the lowest cluster.
    #[test]
    fn eq_11_weighs_the_claim_by_the_room() {
        let mut s = MlSetting::synthetic(2, 50.0);
        s.eligible_p = 1.0;
        let mut run = MlRun::new(s, 3);
        run.admit();
        // Cluster 0 keeps room for 2 copies of (2, 1), cluster 1 has 8.
        let t0 = run.pending(0)[0];
        run.interval().place(t0, 0, Alloc::new(12, 2)).unwrap();
        let j = run.pending(0)[0];
        let claim = |p| {
            Some(Claim {
                task: j,
                alloc: Alloc::new(2, 1),
                p,
            })
        };
        let mut rng = stream_rng(1, Purpose::Other, 0, 0);
        // 0.7 · 2 = 1.4 < 0.35 · 8 = 2.8: cluster 1 wins although it wanted the task less.
        let won = winners(&run, &[claim(0.7), claim(0.35)], Settle::Bayes, &mut rng);
        assert_eq!(won, vec![false, true]);
        // 0.9 · 2 = 1.8 > 0.2 · 8 = 1.6.
        let won = winners(&run, &[claim(0.9), claim(0.2)], Settle::Bayes, &mut rng);
        assert_eq!(won, vec![true, false]);
        let won = winners(&run, &[claim(0.1), claim(0.9)], Settle::First, &mut rng);
        assert_eq!(won, vec![true, false]);
    }
}
