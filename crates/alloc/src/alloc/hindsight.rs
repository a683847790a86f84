//! The best fixed allocation in hindsight, the comparator of OGASched's regret:
//!
//! max_{y ∈ Y} Σ_{t ≤ T} q(x(t), y) = max_{y ∈ Y} q(n, y),  n = Σ_{t ≤ T} x(t),
//!
//! (q is linear in the demand, so the summed reward is the reward of the summed demand). It is
//! found by the same projected (super)gradient ascent as OGA, run offline on q(n / T, y) (the
//! mean slot, so that steps have the scale of one slot's) with η_i = η0 / √(i + 1), keeping
//! the best iterate. Subgradient ascent approaches the maximum from below, so a regret measured
//! against it is a lower bound of the true regret, short by the ascent's remaining gap.

use super::problem::{Allocation, Problem};
use super::project::Projector;
use super::reward::{RewardScratch, gradient, reward};
use super::step::StepSize;

/// The comparator found: the allocation and its summed reward q(n, y).
#[derive(Debug, Clone)]
pub struct BestFixed {
    /// The allocation.
    pub allocation: Allocation,
    /// Σ_t q(x(t), y) for it.
    pub value: f64,
}

/// Maximises q(`demand_sum` / `slots`, y) over Y by `iterations` projected-gradient steps with
/// step sizes `step.at(first_step + i)`, i = 0, 1, …, starting from the best of `starts` (which
/// must be in Y; y = 0 is always tried); returns the best iterate and its summed reward
/// (× `slots`). A `first_step` > 0 continues a schedule: a refinement of a warm start.
pub fn best_fixed(
    p: &Problem,
    demand_sum: &[f64],
    slots: usize,
    iterations: usize,
    step: StepSize,
    first_step: u64,
    starts: &[&Allocation],
) -> BestFixed {
    let mean: Vec<f64> = demand_sum.iter().map(|n| n / slots.max(1) as f64).collect();
    let mut scratch = RewardScratch::default();
    let mut best = Allocation::zeros(p);
    let mut best_q = reward(p, &mean, &best, &mut scratch);
    for s in starts {
        let q = reward(p, &mean, s, &mut scratch);
        if q > best_q {
            best_q = q;
            best.clone_from(s);
        }
    }
    let mut y = best.clone();
    let mut grad = Allocation::zeros(p);
    let mut projector = Projector::default();
    for i in 0..iterations {
        gradient(p, &mean, &y, &mut grad, &mut scratch);
        let eta = step.at(first_step + i as u64);
        for (v, g) in y.values_mut().iter_mut().zip(grad.values()) {
            *v += eta * g;
        }
        projector.project(p, &mut y, None);
        let q = reward(p, &mean, &y, &mut scratch);
        if q > best_q {
            best_q = q;
            best.clone_from(&y);
        }
    }
    BestFixed {
        allocation: best,
        value: best_q * slots as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::problem::ProblemSpec;
    use crate::alloc::utility::{Gain, Utility};

    /// One instance with capacity 4.25 shared by two ports (caps 3 each), log gain α 1,
    /// β 0.2; port 0 arrives 30 times, port 1 10 times. KKT: 30/(y0+1) − 6 = μ = 10/(y1+1) − 2
    /// with y0 + y1 = 4.25 gives μ = 2, y = (2.75, 1.5).
    #[test]
    fn matches_a_grid_search_on_a_tiny_problem() {
        let p = Problem::new(&ProblemSpec {
            requests: vec![vec![3.0], vec![3.0]],
            capacities: vec![vec![4.25]],
            links: vec![(0, 0), (1, 0)],
            gains: vec![vec![Gain::new(Utility::Log, 1.0)]],
            betas: vec![0.2],
        })
        .unwrap();
        let n = [30.0, 10.0];
        let found = best_fixed(&p, &n, 40, 4000, StepSize::InvSqrt { eta0: 2.0 }, 0, &[]);
        // Continuing from it with a later part of the schedule cannot lose ground.
        let more = best_fixed(
            &p,
            &n,
            40,
            100,
            StepSize::InvSqrt { eta0: 2.0 },
            4000,
            &[&found.allocation],
        );
        assert!(more.value >= found.value - 1e-12);
        p.check_feasible(&found.allocation, None, 1e-12).unwrap();
        // Grid over the feasible square [0, 3]² ∩ {y0 + y1 ≤ 4.25}, step 0.001.
        let mut grid_best = f64::NEG_INFINITY;
        let mut s = RewardScratch::default();
        let mut y = Allocation::zeros(&p);
        for i in 0..=3000 {
            for j in 0..=3000 {
                let (a, b) = (i as f64 * 0.001, j as f64 * 0.001);
                if a + b > 4.25 + 1e-9 {
                    break;
                }
                y.set(0, 0, a);
                y.set(1, 0, b);
                grid_best = grid_best.max(reward(&p, &n, &y, &mut s));
            }
        }
        let exact = 30.0 * 3.75f64.ln() - 6.0 * 2.75 + 10.0 * 2.5f64.ln() - 2.0 * 1.5;
        assert!(
            (grid_best - exact).abs() < 1e-3,
            "grid {grid_best} vs {exact}"
        );
        assert!(
            (found.value - exact).abs() < 1e-6,
            "ascent {} vs {exact}",
            found.value
        );
        assert!((found.allocation.get(0, 0) - 2.75).abs() < 1e-3);
        assert!((found.allocation.get(1, 0) - 1.5).abs() < 1e-3);
    }
}
