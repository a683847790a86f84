//! `closest`: the cluster with the least d + 2σ from the scheduler; any feasible variant there
//! (the least loaded, by the common tie-break).

use super::{Policy, pick_min};
use crate::feasibility::Candidate;
use crate::rng::SimRng;

/// Binds to the nearest cluster.
pub(super) struct Closest;

impl Policy for Closest {
    fn name(&self) -> &'static str {
        "closest"
    }
    fn choose(&self, c: &[Candidate], _: &mut SimRng) -> usize {
        pick_min(c, |x| x.net_ms)
    }
}
