//! `cheaper`: the binding with the greatest e2e(v, n) that still meets the deadline — the
//! slowest acceptable resources, leaving fast ones to tighter streams.

use super::{Policy, pick_max};
use crate::feasibility::Candidate;
use crate::rng::SimRng;

/// Binds to the slowest feasible binding.
pub(super) struct Cheaper;

impl Policy for Cheaper {
    fn name(&self) -> &'static str {
        "cheaper"
    }
    fn choose(&self, c: &[Candidate], _: &mut SimRng) -> usize {
        pick_max(c, |x| x.e2e_ms)
    }
}
