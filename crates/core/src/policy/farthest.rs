//! `farthest`: the cluster with the greatest (still feasible) d + 2σ, keeping the edge free.

use super::{Policy, pick_max};
use crate::feasibility::Candidate;
use crate::rng::SimRng;

/// Binds to the farthest feasible cluster.
pub(super) struct Farthest;

impl Policy for Farthest {
    fn name(&self) -> &'static str {
        "farthest"
    }
    fn choose(&self, c: &[Candidate], _: &mut SimRng) -> usize {
        pick_max(c, |x| x.net_ms)
    }
}
