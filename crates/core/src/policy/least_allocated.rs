//! `least-allocated`: Kubernetes' LeastAllocated node score (EdgeTuner's
//! LeastRequestedPriority, LRP) with a worker as the node — the greatest free share left once
//! the stream is placed, (C − L − demand) / C (docs/model.md §6).

use super::{Policy, pick_max};
use crate::feasibility::Candidate;
use crate::rng::SimRng;

/// The free share of the worker's capacity after the stream's demand is added (0 for a worker
/// with no capacity).
pub(crate) fn free_share_after(c: &Candidate) -> f64 {
    if c.capacity_qps > 0.0 {
        (c.capacity_qps - c.load_qps - c.demand_qps) / c.capacity_qps
    } else {
        0.0
    }
}

/// Spreads: binds to the worker left with the largest free share.
pub(super) struct LeastAllocated;

impl Policy for LeastAllocated {
    fn name(&self) -> &'static str {
        "least-allocated"
    }
    fn choose(&self, c: &[Candidate], _: &mut SimRng) -> usize {
        pick_max(c, free_share_after)
    }
}
