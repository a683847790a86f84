//! Node scoring plugins, each from its documented formula (docs/jobs.md, "Placement"): a score
//! in [0, 100] for one task on one node that passed the filter. "Requested" is the node's
//! requested amount *with the task placed*, as kube-scheduler's `resourceAllocationScorer`
//! computes it; scores stay fractional (kube-scheduler truncates each to an integer).
//!
//! Sources: kube-scheduler's `noderesources` plugins (`least_allocated.go`,
//! `most_allocated.go`, `requested_to_capacity_ratio.go`, `balanced_allocation.go`,
//! `resource_limits.go` of v1.19), the pre-framework `EqualPriority`, and Volcano's `binpack`
//! plugin (`BinPackingScore`).

use crate::resources::Res;

/// kube-scheduler's `MaxNodeScore`.
pub(crate) const MAX_SCORE: f64 = 100.0;
/// `MaxCustomPriorityScore`: the top of a RequestedToCapacityRatio shape's score axis.
const MAX_SHAPE_SCORE: f64 = 10.0;

/// A scoring plugin.
#[derive(Debug, Clone, PartialEq)]
pub enum Plugin {
    /// NodeResourcesFit, LeastAllocated strategy (formerly LeastRequestedPriority, "LRP"):
    /// Σ_r w_r · (cap_r − req_r) · 100 / cap_r / Σ_r w_r over resources with cap_r > 0.
    LeastAllocated,
    /// NodeResourcesFit, MostAllocated strategy (formerly MostRequestedPriority, "MRP"):
    /// Σ_r w_r · min(req_r, cap_r) · 100 / cap_r / Σ_r w_r over resources with cap_r > 0.
    MostAllocated,
    /// NodeResourcesFit, RequestedToCapacityRatio strategy: a broken-linear function of each
    /// resource's utilisation (points of utilisation 0–100 and score 0–10, scaled by 10),
    /// averaged with weights over the resources that score > 0.
    RequestedToCapacityRatio(Vec<(f64, f64)>),
    /// NodeResourcesBalancedAllocation (formerly BalancedResourceAllocation, "BRA"):
    /// (1 − std of the utilisation fractions min(req_r / cap_r, 1)) · 100.
    BalancedAllocation,
    /// EqualPriority ("EP"): every node scores 1.
    EqualPriority,
    /// ResourceLimits priority ("RLP"): 1 when the task's CPU limit or memory limit is given and
    /// at most the node's capacity, else 0 (a tie-breaker by design).
    ResourceLimits,
    /// Volcano's binpack: Σ_r w_r · (used_r + request_r) / cap_r (0 for a resource that would
    /// overflow or that the node lacks) / Σ_r w_r · 100, over the resources the task requests.
    Binpack,
}

/// What a plugin sees: the node's capacity and requested amount before the task, the task's
/// request and limits, and the per-resource weights.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scoring<'a> {
    pub(crate) cap: &'a Res,
    pub(crate) used: &'a Res,
    pub(crate) request: &'a Res,
    pub(crate) limit: &'a Res,
    pub(crate) weights: &'a Res,
}

impl Plugin {
    /// Its name in reports.
    pub fn name(&self) -> &'static str {
        match self {
            Self::LeastAllocated => "NodeResourcesFit/LeastAllocated",
            Self::MostAllocated => "NodeResourcesFit/MostAllocated",
            Self::RequestedToCapacityRatio(_) => "NodeResourcesFit/RequestedToCapacityRatio",
            Self::BalancedAllocation => "NodeResourcesBalancedAllocation",
            Self::EqualPriority => "EqualPriority",
            Self::ResourceLimits => "ResourceLimits",
            Self::Binpack => "volcano/binpack",
        }
    }

    /// The score in [0, 100] of placing the task on the node (clamped: sums of fractions may
    /// round a hair past the bounds).
    pub(crate) fn score(&self, s: &Scoring<'_>) -> f64 {
        self.raw_score(s).clamp(0.0, MAX_SCORE)
    }

    fn raw_score(&self, s: &Scoring<'_>) -> f64 {
        let (cap, used, req, w) = (s.cap.arr(), s.used.arr(), s.request.arr(), s.weights.arr());
        let after = |r: usize| used[r] + req[r];
        match self {
            Self::LeastAllocated => weighted(&cap, &w, |r| {
                let a = after(r);
                if a > cap[r] {
                    0.0
                } else {
                    (cap[r] - a) * MAX_SCORE / cap[r]
                }
            }),
            Self::MostAllocated => {
                weighted(&cap, &w, |r| after(r).min(cap[r]) * MAX_SCORE / cap[r])
            }
            Self::RequestedToCapacityRatio(shape) => {
                let (mut sum, mut wsum) = (0.0, 0.0);
                for r in 0..3 {
                    if cap[r] <= 0.0 || w[r] <= 0.0 {
                        continue;
                    }
                    let util = (after(r) / cap[r]).min(1.0) * 100.0;
                    let score = broken_linear(shape, util) * (MAX_SCORE / MAX_SHAPE_SCORE);
                    if score > 0.0 {
                        sum += score * w[r];
                        wsum += w[r];
                    }
                }
                if wsum > 0.0 { sum / wsum } else { 0.0 }
            }
            Self::BalancedAllocation => {
                let fractions: Vec<f64> = (0..3)
                    .filter(|&r| cap[r] > 0.0 && w[r] > 0.0)
                    .map(|r| (after(r) / cap[r]).min(1.0))
                    .collect();
                (1.0 - std_dev(&fractions)) * MAX_SCORE
            }
            Self::EqualPriority => 1.0,
            Self::ResourceLimits => {
                let fits = |l: f64, c: f64| l > 0.0 && c > 0.0 && l <= c;
                if fits(s.limit.cpu, s.cap.cpu) || fits(s.limit.mem_gb, s.cap.mem_gb) {
                    1.0
                } else {
                    0.0
                }
            }
            Self::Binpack => {
                let (mut sum, mut wsum) = (0.0, 0.0);
                for r in 0..3 {
                    if req[r] <= 0.0 || w[r] <= 0.0 {
                        continue;
                    }
                    if cap[r] > 0.0 && after(r) <= cap[r] {
                        sum += after(r) * w[r] / cap[r];
                    }
                    wsum += w[r];
                }
                if wsum > 0.0 {
                    sum / wsum * MAX_SCORE
                } else {
                    0.0
                }
            }
        }
    }
}

/// Σ_r w_r · f(r) / Σ_r w_r over the resources the node has (cap > 0) with weight > 0; 0 when
/// there are none.
fn weighted(cap: &[f64; 3], w: &[f64; 3], f: impl Fn(usize) -> f64) -> f64 {
    let (mut sum, mut wsum) = (0.0, 0.0);
    for r in 0..3 {
        if cap[r] > 0.0 && w[r] > 0.0 {
            sum += w[r] * f(r);
            wsum += w[r];
        }
    }
    if wsum > 0.0 { sum / wsum } else { 0.0 }
}

/// The population standard deviation, as BalancedAllocation takes it: |a − b| / 2 for two
/// fractions, 0 for fewer.
fn std_dev(x: &[f64]) -> f64 {
    match x.len() {
        0 | 1 => 0.0,
        2 => ((x[0] - x[1]) / 2.0).abs(),
        n => {
            let mean = x.iter().sum::<f64>() / n as f64;
            (x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n as f64).sqrt()
        }
    }
}

/// kube-scheduler's `BuildBrokenLinearFunction`: linear between the points (sorted by
/// utilisation), flat before the first and after the last.
pub(crate) fn broken_linear(points: &[(f64, f64)], x: f64) -> f64 {
    let Some(first) = points.first() else {
        return 0.0;
    };
    if x <= first.0 {
        return first.1;
    }
    for w in points.windows(2) {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        if x <= x1 {
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
        }
    }
    points[points.len() - 1].1
}

#[cfg(test)]
#[path = "plugins_tests.rs"]
mod tests;
