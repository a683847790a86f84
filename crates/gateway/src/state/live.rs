//! The gateway's load view (docs/model.md §8): the snapshot published every Δ from the workers'
//! last reported loads ([`crate::upstream::loads`]) — the same [`LoadView`] and
//! reach list the simulator's policies read, restricted to the workers that are up, with
//! d_n^s / σ_n^s blended from measured round-trip times.

use crate::config::stall_after;
use crate::plan::Plan;
use crate::upstream::Upstream;
pub(crate) use crate::upstream::loads::LiveLoads;
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
        let mut r = *r;
        let rtt = u.rtt();
        if rtt.samples > 0 {
            let a = plan.cfg.rtt_weight;
            let injected = if plan.cfg.inject_delays { r.d_ms } else { 0.0 };
            r.d_ms = (1.0 - a) * r.d_ms + a * (injected + rtt.srtt_ms / 2.0);
            // RFC 6298's RTTVAR is a mean deviation; ×1.25 turns it into a standard deviation
            // of a normal (σ = √(π/2) · mean deviation ≈ 1.25), halved for one way.
            let measured_sigma = if plan.cfg.inject_delays {
                r.sigma_ms.hypot(1.25 * rtt.rttvar_ms / 2.0)
            } else {
                1.25 * rtt.rttvar_ms / 2.0
            };
            r.sigma_ms = (1.0 - a) * r.sigma_ms + a * measured_sigma;
        }
        reach.push(r);
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
