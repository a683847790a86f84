//! `least-impedance`: the binding with the least e2e(v, n).

use super::{Policy, pick_min};
use crate::feasibility::Candidate;
use crate::rng::SimRng;

/// Binds to the fastest binding.
pub(super) struct LeastImpedance;

impl Policy for LeastImpedance {
    fn name(&self) -> &'static str {
        "least-impedance"
    }
    fn choose(&self, c: &[Candidate], _: &mut SimRng) -> usize {
        pick_min(c, |x| x.e2e_ms)
    }
}
