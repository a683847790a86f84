//! Placing one task as kube-scheduler's scheduling cycle does: the filter step (NodeResourcesFit's
//! `Filter`: every request at most the node's free amount), then the score step (each plugin's
//! score times its weight, summed), the highest total winning and ties going to the lowest node
//! index (kube-scheduler draws among tied nodes at random; a fixed rule keeps runs
//! reproducible).

use super::Placement;
use super::plugins::Scoring;
use crate::resources::Res;

/// A node as placement sees it: its capacity and what running tasks have requested of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Slot {
    pub(crate) cap: Res,
    pub(crate) used: Res,
}

impl Slot {
    /// What is still free.
    #[inline]
    pub(crate) fn free(&self) -> Res {
        self.cap.sub(&self.used)
    }

    /// Whether `request` passes the filter on this node.
    #[inline]
    pub(crate) fn fits(&self, request: &Res) -> bool {
        request.fits_in(&self.free())
    }
}

impl Placement {
    /// The node a task with `request` and `limit` goes to, or `None` when no node passes the
    /// filter.
    pub(crate) fn choose(&self, slots: &[Slot], request: &Res, limit: &Res) -> Option<usize> {
        let mut best: Option<(usize, f64)> = None;
        for (i, s) in slots.iter().enumerate() {
            if !s.fits(request) {
                continue;
            }
            let score = self.score(s, request, limit);
            if best.is_none_or(|(_, b)| score > b) {
                best = Some((i, score));
            }
        }
        best.map(|(i, _)| i)
    }

    /// The weighted sum of the plugins' scores of the task on `slot`.
    pub(crate) fn score(&self, slot: &Slot, request: &Res, limit: &Res) -> f64 {
        let s = Scoring {
            cap: &slot.cap,
            used: &slot.used,
            request,
            limit,
            weights: &self.resource_weights,
        };
        self.plugins.iter().map(|(p, w)| w * p.score(&s)).sum()
    }
}
