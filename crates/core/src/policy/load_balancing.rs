//! `load-balancing`: the binding whose worker currently shows the least load L_vn(t).

use super::{Policy, pick_min};
use crate::feasibility::Candidate;
use crate::rng::SimRng;

/// Binds to the least loaded worker.
pub(super) struct LoadBalancing;

impl Policy for LoadBalancing {
    fn name(&self) -> &'static str {
        "load-balancing"
    }
    fn choose(&self, c: &[Candidate], _: &mut SimRng) -> usize {
        pick_min(c, |x| x.load_qps)
    }
}
