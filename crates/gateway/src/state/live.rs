//! The gateway's load view (docs/model.md §8): the snapshot published every Δ from the workers'
//! last reported loads ([`crate::upstream::loads`]) — the same [`LoadView`] and
//! reach list the simulator's policies read, restricted to the workers that are up, with
//! d_n^s / σ_n^s blended from measured round-trip times.

use crate::config::stall_after;
use crate::plan::Plan;
pub(crate) use crate::upstream::loads::LiveLoads;
use crate::upstream::{RttStats, Upstream};
use continuum_core::load::LoadView;
use continuum_core::topology::Reach;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What one decision reads: a consistent published state.
pub struct Snapshot {
    /// The plan it was built from.
    pub(crate) plan: Arc<Plan>,
    /// Live workers, indexed like `plan.cfg.workers`.
    pub(crate) upstreams: Arc<Vec<Arc<Upstream>>>,
    /// Loads, indexed like the topology's workers.
    pub(crate) view: LoadView,
    /// The workers this scheduler can use now (up and served), nearest first, with live
    /// network figures.
    pub reach: Vec<Reach>,
    /// Age of the oldest report in the view, for the workers in `reach`.
    pub(crate) max_age: Duration,
    /// Plan generation (changes on reload).
    pub(crate) generation: u64,
}

/// Builds the snapshot of `plan` from the live loads and upstream health, at `now`. `now_ms`
/// stamps the view (the gateway's clock, ms since start).
pub fn publish(
    plan: &Arc<Plan>,
    upstreams: &Arc<Vec<Arc<Upstream>>>,
    loads: &LiveLoads,
    generation: u64,
    now: Instant,
    now_ms: f64,
) -> Snapshot {
    let topo = &plan.topology;
    let stall = stall_after(plan.cfg.publish_ms);
    let mut view = LoadView::idle(topo.workers.len());
    view.published_ms = now_ms;
    let mut max_age = Duration::ZERO;
    let usable = |w: usize| -> Option<&Arc<Upstream>> {
        let u = &upstreams[plan.served_by[w]?];
        let fresh = u.report_age().is_some_and(|a| a <= stall);
        (u.is_up() && fresh && !u.is_retired()).then_some(u)
    };
    let mut reach = Vec::with_capacity(topo.schedulers[plan.sched].reach.len());
    for r in &topo.schedulers[plan.sched].reach {
        let w = r.worker as usize;
        let Some(u) = usable(w) else { continue };
        if let Some(l) = loads.get(&u.cfg.name, plan.variant_name(w)) {
            view.workers[w] = l.load;
            max_age = max_age.max(now.saturating_duration_since(l.at));
        } else {
            // Up, but this variant is not in its reports: the worker does not serve it.
            continue;
        }
        reach.push(blend(
            *r,
            &u.rtt(),
            plan.cfg.rtt_weight,
            plan.cfg.inject_delays,
        ));
    }
    reach.sort_by(Reach::by_distance);
    Snapshot {
        plan: plan.clone(),
        upstreams: upstreams.clone(),
        view,
        reach,
        max_age,
        generation,
    }
}

/// `r` with its one-way delay and jitter blended, by weight `a`, with the measured round trips
/// `rtt` (halved for one way); when the gateway injects the topology's delays (`injected`),
/// the measured figures add to them. Unchanged before the first sample.
fn blend(mut r: Reach, rtt: &RttStats, a: f64, injected: bool) -> Reach {
    if rtt.samples == 0 {
        return r;
    }
    let base = if injected { r.d_ms } else { 0.0 };
    // RFC 6298's RTTVAR is a mean deviation; ×1.25 turns it into a standard deviation of a
    // normal (σ = √(π/2) · mean deviation ≈ 1.25), halved for one way.
    let one_way_sigma = 1.25 * rtt.rttvar_ms / 2.0;
    let measured_sigma = if injected {
        r.sigma_ms.hypot(one_way_sigma)
    } else {
        one_way_sigma
    };
    r.d_ms = (1.0 - a) * r.d_ms + a * (base + rtt.srtt_ms / 2.0);
    r.sigma_ms = (1.0 - a) * r.sigma_ms + a * measured_sigma;
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reach(d_ms: f64, sigma_ms: f64) -> Reach {
        Reach {
            worker: 0,
            cluster: 0,
            variant: 0,
            d_ms,
            sigma_ms,
        }
    }

    #[test]
    fn measured_round_trips_blend_into_the_topology_figures() {
        let rtt = RttStats {
            srtt_ms: 10.0,
            rttvar_ms: 4.0,
            samples: 3,
        };
        // Weight ½, nothing injected: d = ½·20 + ½·(10 / 2) = 12.5; σ = ½·2 + ½·(1.25·4 / 2) = 2.25.
        let b = blend(reach(20.0, 2.0), &rtt, 0.5, false);
        assert!((b.d_ms - 12.5).abs() < 1e-12 && (b.sigma_ms - 2.25).abs() < 1e-12);
        // Injected delays add to the loopback's: d = ½·20 + ½·(20 + 5) = 22.5;
        // σ = ½·2 + ½·hypot(2, 2.5).
        let b = blend(reach(20.0, 2.0), &rtt, 0.5, true);
        assert!((b.d_ms - 22.5).abs() < 1e-12);
        assert!((b.sigma_ms - (1.0 + 0.5 * 2.0f64.hypot(2.5))).abs() < 1e-12);
        // Weight 0 keeps the topology; no sample keeps it whatever the weight.
        assert_eq!(blend(reach(20.0, 2.0), &rtt, 0.0, false), reach(20.0, 2.0));
        assert_eq!(
            blend(reach(20.0, 2.0), &RttStats::default(), 1.0, true),
            reach(20.0, 2.0)
        );
    }
}
