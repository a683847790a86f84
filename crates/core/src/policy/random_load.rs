//! `random-proportional-load`: at random, with probability ∝ C_v / L_vn(t); an idle worker
//! weighs as much as the largest finite weight among the others (docs/model.md §6), not infinitely.

use super::{Policy, pick_weighted};
use crate::feasibility::Candidate;
use crate::rng::SimRng;

/// Favours workers with spare capacity without always taking the emptiest.
pub(super) struct RandomProportionalLoad;

impl Policy for RandomProportionalLoad {
    fn name(&self) -> &'static str {
        "random-proportional-load"
    }
    fn choose(&self, c: &[Candidate], rng: &mut SimRng) -> usize {
        let finite_max = c
            .iter()
            .filter(|x| x.load_qps > 0.0)
            .map(|x| x.capacity_qps / x.load_qps)
            .fold(0.0_f64, f64::max);
        // With every candidate idle, all weigh the same.
        let idle_weight = if finite_max > 0.0 { finite_max } else { 1.0 };
        pick_weighted(c, rng, |x| {
            if x.load_qps > 0.0 {
                x.capacity_qps / x.load_qps
            } else {
                idle_weight
            }
        })
    }
}
