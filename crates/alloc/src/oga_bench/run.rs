//! Running every allocator on one drawn setting and measuring rewards and regret.
//!
//! Each allocator runs on its own over the same trace (in parallel); then, at a few horizons
//! t, the best fixed allocation in hindsight for the first t slots is computed (in parallel)
//! and each allocator's regret is that comparator's summed reward minus its own. Everything is
//! a sequential computation per item, so the results do not depend on the number of threads.

use super::synthetic::{Instance, SyntheticConfig};
use crate::alloc::{self, Allocation, RewardScratch, StepSize, best_fixed, reward};
use rayon::prelude::*;
use std::collections::BTreeMap;

/// What to run (defaults: the paper's Table 2).
#[derive(Debug, Clone, PartialEq)]
pub struct BenchConfig {
    /// The synthetic setting.
    pub synthetic: SyntheticConfig,
    /// OGA's learning rate.
    pub step: StepSize,
    /// How many horizons to measure the regret at (evenly spaced up to T).
    pub regret_points: usize,
    /// Gradient steps of the hindsight comparator at each horizon (4 times as many first at
    /// T, the warm start of every horizon).
    pub hindsight_iterations: usize,
}

impl Default for BenchConfig {
    fn default() -> Self {
        BenchConfig {
            synthetic: SyntheticConfig::default(),
            step: StepSize::PAPER,
            regret_points: 20,
            hindsight_iterations: 2000,
        }
    }
}

/// One allocator's run.
#[derive(Debug, Clone)]
pub struct AllocatorRun {
    /// Its name.
    pub name: &'static str,
    /// q(x(t), y(t)) of every slot.
    pub rewards: Vec<f64>,
    /// Its time-averaged allocation (1/t) Σ_{s ≤ t} y(s) at each regret horizon (a point of Y,
    /// tried as a start of the hindsight ascent).
    pub mean_allocation: Vec<Allocation>,
}

impl AllocatorRun {
    /// Average reward per slot over the whole run.
    pub fn average(&self) -> f64 {
        self.rewards.iter().sum::<f64>() / self.rewards.len().max(1) as f64
    }
}

/// The regret of every allocator at one horizon.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RegretPoint {
    /// The horizon t (slots).
    pub t: usize,
    /// Σ_{s ≤ t} q(x(s), y*) of the best fixed allocation y* found.
    pub best_fixed: f64,
    /// Per allocator: best_fixed − Σ_{s ≤ t} q(x(s), y(s)).
    pub regret: BTreeMap<String, f64>,
}

/// Everything measured.
#[derive(Debug, Clone)]
pub struct BenchResult {
    /// Each allocator's run: [`alloc::NAMES`], then [`alloc::ABLATIONS`], in their order.
    pub runs: Vec<AllocatorRun>,
    /// The regret at each horizon, in increasing t.
    pub regret: Vec<RegretPoint>,
}

/// The horizons 1 ≤ t ≤ T at which the regret is measured: `points` evenly spaced, ending at T.
pub fn horizons(slots: usize, points: usize) -> Vec<usize> {
    let m = points.clamp(1, slots.max(1));
    let mut h: Vec<usize> = (1..=m).map(|i| (slots * i).div_ceil(m)).collect();
    h.dedup();
    h
}

/// Runs every registered allocator on `inst` and measures the regret.
pub fn run(cfg: &BenchConfig, inst: &Instance) -> BenchResult {
    let hs = horizons(inst.arrivals.len(), cfg.regret_points);
    let names: Vec<&str> = alloc::NAMES
        .iter()
        .chain(&alloc::ABLATIONS)
        .copied()
        .collect();
    let runs: Vec<AllocatorRun> = names
        .par_iter()
        .map(|name| run_one(name, cfg.step, inst, &hs))
        .collect();
    let p = &inst.problem;
    let demand_sums: Vec<Vec<f64>> = hs
        .iter()
        .map(|&t| {
            let mut n = vec![0.0; p.ports()];
            for x in &inst.arrivals[..t] {
                for (s, v) in n.iter_mut().zip(x) {
                    *s += v;
                }
            }
            n
        })
        .collect();
    let ascent = StepSize::InvSqrt {
        eta0: match cfg.step {
            StepSize::Geometric { eta0, .. } | StepSize::InvSqrt { eta0 } => eta0,
        },
    };
    // The horizons' problems differ only by the mean demand n(t)/t, so their optima are close:
    // solve the last one longer (4 × the iterations), then refine every horizon from it (and
    // from the runs' mean allocations) with the continuation of the step schedule.
    let last = hs.len() - 1;
    let warm_iterations = 4 * cfg.hindsight_iterations;
    let warm = {
        let starts: Vec<&Allocation> = runs.iter().map(|r| &r.mean_allocation[last]).collect();
        best_fixed(
            p,
            &demand_sums[last],
            hs[last],
            warm_iterations,
            ascent,
            0,
            &starts,
        )
    };
    let regret: Vec<RegretPoint> = hs
        .par_iter()
        .enumerate()
        .map(|(i, &t)| {
            let mut starts: Vec<&Allocation> = runs.iter().map(|r| &r.mean_allocation[i]).collect();
            starts.push(&warm.allocation);
            let best = best_fixed(
                p,
                &demand_sums[i],
                t,
                cfg.hindsight_iterations,
                ascent,
                warm_iterations as u64,
                &starts,
            );
            let regret = runs
                .iter()
                .map(|r| {
                    let own: f64 = r.rewards[..t].iter().sum();
                    (r.name.to_string(), best.value - own)
                })
                .collect();
            RegretPoint {
                t,
                best_fixed: best.value,
                regret,
            }
        })
        .collect();
    BenchResult { runs, regret }
}

fn run_one(name: &str, step: StepSize, inst: &Instance, horizons: &[usize]) -> AllocatorRun {
    let p = &inst.problem;
    let mut a = alloc::by_name(name, step).expect("a registered name");
    let mut y = Allocation::zeros(p);
    let mut sum = Allocation::zeros(p);
    let mut scratch = RewardScratch::default();
    let mut rewards = Vec::with_capacity(inst.arrivals.len());
    let mut mean_allocation = Vec::with_capacity(horizons.len());
    let mut next = horizons.iter().peekable();
    for (t, x) in inst.arrivals.iter().enumerate() {
        a.allocate(p, x, &mut y);
        rewards.push(reward(p, x, &y, &mut scratch));
        for (s, v) in sum.values_mut().iter_mut().zip(y.values()) {
            *s += v;
        }
        if next.peek() == Some(&&(t + 1)) {
            next.next();
            let mut m = sum.clone();
            for v in m.values_mut() {
                *v /= (t + 1) as f64;
            }
            mean_allocation.push(m);
        }
    }
    AllocatorRun {
        name: a.name(),
        rewards,
        mean_allocation,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oga_bench::synthetic::draw;

    #[test]
    fn horizons_are_even_and_end_at_t() {
        assert_eq!(horizons(2000, 4), vec![500, 1000, 1500, 2000]);
        assert_eq!(horizons(10, 3), vec![4, 7, 10]);
        assert_eq!(horizons(3, 20), vec![1, 2, 3]);
    }

    /// A case small enough to work out by hand: one port asking 2 units of one resource of one
    /// instance with 4; linear gain α = 1 and overhead β = 0.5, so a slot with a job earns
    /// 0.5 · y and the best fixed allocation is y = 2 (the port's cap), worth 1 per job. Jobs
    /// arrive in slots 1, 3 and 4 of 4; regret at t = 2 and t = 4.
    ///
    /// By hand: the best fixed allocation earns 1 (t = 2) and 3 (t = 4). DRF, FAIRNESS,
    /// BINPACKING and SPREADING (and their ablations) hand the job its whole request every time
    /// (1 per job: regret 0); `oga-lookahead` steps before allocating (η0 = 25: the first step
    /// already reaches the cap), so it earns 1 per job too; `oga` plays its starting point 0 in
    /// slot 1 and 2 from then on: rewards 0, 0, 1, 1, so regret 1 − 0 = 1 at t = 2 and
    /// 3 − 2 = 1 at t = 4.
    #[test]
    fn regret_matches_a_case_worked_out_by_hand() {
        use crate::alloc::{Gain, Problem, ProblemSpec, Utility};
        let problem = Problem::new(&ProblemSpec {
            requests: vec![vec![2.0]],
            capacities: vec![vec![4.0]],
            links: vec![(0, 0)],
            gains: vec![vec![Gain::new(Utility::Linear, 1.0)]],
            betas: vec![0.5],
        })
        .unwrap();
        let inst = Instance {
            problem,
            arrivals: vec![vec![1.0], vec![0.0], vec![1.0], vec![1.0]],
        };
        let cfg = BenchConfig {
            regret_points: 2,
            hindsight_iterations: 200,
            ..Default::default()
        };
        let res = run(&cfg, &inst);
        let rewards: BTreeMap<&str, [f64; 4]> = [
            ("oga", [0.0, 0.0, 1.0, 1.0]),
            ("oga-lookahead", [1.0, 0.0, 1.0, 1.0]),
            ("drf", [1.0, 0.0, 1.0, 1.0]),
            ("drf-per-channel", [1.0, 0.0, 1.0, 1.0]),
            ("fairness", [1.0, 0.0, 1.0, 1.0]),
            ("fairness-linked", [1.0, 0.0, 1.0, 1.0]),
            ("binpacking", [1.0, 0.0, 1.0, 1.0]),
            ("binpacking-per-channel", [1.0, 0.0, 1.0, 1.0]),
            ("spreading", [1.0, 0.0, 1.0, 1.0]),
            ("spreading-per-channel", [1.0, 0.0, 1.0, 1.0]),
        ]
        .into();
        assert_eq!(res.runs.len(), rewards.len());
        for r in &res.runs {
            assert_eq!(r.rewards, rewards[r.name], "{}", r.name);
        }
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        let want: [(usize, f64, f64); 2] = [(2, 1.0, 1.0), (4, 3.0, 1.0)];
        assert_eq!(res.regret.len(), want.len());
        for (pt, (t, best, oga)) in res.regret.iter().zip(want) {
            assert_eq!(pt.t, t);
            assert!(close(pt.best_fixed, best), "t = {t}: {}", pt.best_fixed);
            assert_eq!(pt.regret.len(), rewards.len());
            for (name, regret) in &pt.regret {
                let want = if name == "oga" { oga } else { 0.0 };
                assert!(
                    close(*regret, want),
                    "t = {t}, {name}: {regret}, by hand {want}"
                );
            }
        }
    }

    #[test]
    fn runs_are_complete_and_regret_uses_one_comparator() {
        let cfg = BenchConfig {
            synthetic: SyntheticConfig {
                ports: 3,
                instances: 6,
                slots: 60,
                ..Default::default()
            },
            regret_points: 3,
            hindsight_iterations: 200,
            ..Default::default()
        };
        let inst = draw(&cfg.synthetic);
        let res = run(&cfg, &inst);
        let names = alloc::NAMES.iter().chain(&alloc::ABLATIONS);
        assert_eq!(res.runs.len(), names.clone().count());
        for (r, n) in res.runs.iter().zip(names) {
            assert_eq!(r.name, *n);
            assert_eq!(r.rewards.len(), 60);
            assert_eq!(r.mean_allocation.len(), 3);
        }
        assert_eq!(
            res.regret.iter().map(|p| p.t).collect::<Vec<_>>(),
            vec![20, 40, 60]
        );
        let p = &inst.problem;
        let mut scratch = RewardScratch::default();
        for (i, pt) in res.regret.iter().enumerate() {
            let n: Vec<f64> = (0..p.ports())
                .map(|l| inst.arrivals[..pt.t].iter().map(|x| x[l]).sum())
                .collect();
            for r in &res.runs {
                // The ascent starts from each run's mean allocation: the comparator is at
                // least as good as playing that one every slot.
                let fixed = reward(p, &n, &r.mean_allocation[i], &mut scratch);
                assert!(
                    pt.best_fixed >= fixed - 1e-9 * fixed.abs().max(1.0),
                    "{}: {} < {fixed}",
                    r.name,
                    pt.best_fixed
                );
                let own: f64 = r.rewards[..pt.t].iter().sum();
                assert_eq!(pt.regret[r.name], pt.best_fixed - own);
            }
        }
    }
}
