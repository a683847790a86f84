//! `random-proportional-latency`: at random, with probability ∝ 1 / e2e(v, n).

use super::{Policy, pick_weighted};
use crate::feasibility::Candidate;
use crate::rng::SimRng;

/// Favours fast bindings without always taking the fastest.
pub(super) struct RandomProportionalLatency;

impl Policy for RandomProportionalLatency {
    fn name(&self) -> &'static str {
        "random-proportional-latency"
    }
    fn choose(&self, c: &[Candidate], rng: &mut SimRng) -> usize {
        // e2e > 0 whenever a processing delay is > 0 (profiles require it); guard anyway.
        pick_weighted(c, rng, |x| 1.0 / x.e2e_ms.max(1e-9))
    }
}
