//! The gateway's load view (SPEC §8): a concurrent map of every live worker variant's last
//! reported load, and the snapshot published from it every Δ — the same [`LoadView`] and
//! reach list the simulator's policies read, restricted to the workers that are up, with
//! d_n^s / σ_n^s blended from measured round-trip times.

use super::plan::Plan;
use super::upstream::Upstream;
use continuum_core::load::{LoadView, WorkerLoad};
use continuum_core::topology::Reach;
use continuum_wire::load_report::LoadReport;
use dashmap::DashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One worker variant's last report.
#[derive(Debug, Clone, Copy)]
pub struct LiveLoad {
    /// The load it reported.
    pub load: WorkerLoad,
    /// When the report arrived.
    pub at: Instant,
}

/// Last reported loads, keyed by (live worker name, variant name).
#[derive(Default)]
pub struct LiveLoads {
    map: DashMap<(String, String), LiveLoad>,
}

impl LiveLoads {
    /// Records every variant of a worker's QUIC load report; its variants that the report
    /// leaves out (unloaded) are forgotten, so no binding goes to them.
    pub fn apply_report(&self, worker: &str, r: &LoadReport) {
        let at = Instant::now();
        self.map
            .retain(|k, _| k.0 != worker || r.variants.iter().any(|v| v.variant == k.1));
        for v in &r.variants {
            self.set(
                worker,
                &v.variant,
                WorkerLoad {
                    load_qps: v.incoming_qps,
                    streams: v.open_streams as u32,
                    throughput_qps: v.throughput_qps,
                },
                at,
            );
        }
    }

    /// Records one variant's load.
    pub fn set(&self, worker: &str, variant: &str, load: WorkerLoad, at: Instant) {
        self.map.insert(
            (worker.to_string(), variant.to_string()),
            LiveLoad { load, at },
        );
    }

    /// The last report of (`worker`, `variant`).
    pub fn get(&self, worker: &str, variant: &str) -> Option<LiveLoad> {
        self.map
            .get(&(worker.to_string(), variant.to_string()))
            .map(|e| *e)
    }

    /// Forgets a worker's variants (it was removed by a reload).
    pub fn forget(&self, worker: &str) {
        self.map.retain(|k, _| k.0 != worker);
    }
}

/// What one decision reads: a consistent published state.
pub struct Snapshot {
    /// The plan it was built from.
    pub plan: Arc<Plan>,
    /// Live workers, indexed like `plan.cfg.workers`.
    pub upstreams: Arc<Vec<Arc<Upstream>>>,
    /// Loads, indexed like the topology's workers.
    pub view: LoadView,
    /// The workers this scheduler can use now (up and served), nearest first, with live
    /// network figures.
    pub reach: Vec<Reach>,
    /// Age of the oldest report in the view, for the workers in `reach`.
    pub max_age: Duration,
    /// Plan generation (changes on reload).
    pub generation: u64,
}

/// How long a worker may stay silent before it is treated as stalled. assumption: 10 load
/// periods, and at least 1 s.
pub fn stall_after(publish_ms: u64) -> Duration {
    Duration::from_millis((10 * publish_ms).max(1000))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_are_keyed_by_worker_and_variant() {
        let l = LiveLoads::default();
        let at = Instant::now();
        let load = WorkerLoad {
            load_qps: 3.0,
            streams: 2,
            throughput_qps: 2.5,
        };
        l.set("w1", "v", load, at);
        assert_eq!(l.get("w1", "v").map(|x| x.load), Some(load));
        assert!(l.get("w2", "v").is_none());
        l.forget("w1");
        assert!(l.get("w1", "v").is_none());
    }

    #[test]
    fn a_variant_left_out_of_a_report_is_forgotten() {
        let l = LiveLoads::default();
        let one = |v: &str| continuum_wire::load_report::VariantLoad {
            variant: v.into(),
            incoming_qps: 1.0,
            throughput_qps: 1.0,
            open_streams: 1,
            queue_len: 0,
            max_batch: 1,
            served_total: 0,
            rejected_total: 0,
        };
        let report = |vs: &[&str]| LoadReport {
            worker: "w1".into(),
            seq: 0,
            uptime_ms: 0,
            window_ms: 1000,
            variants: vs.iter().map(|v| one(v)).collect(),
        };
        l.apply_report("w1", &report(&["a", "b"]));
        l.set("w2", "a", WorkerLoad::default(), Instant::now());
        l.apply_report("w1", &report(&["b"]));
        assert!(l.get("w1", "a").is_none(), "unloaded");
        assert!(l.get("w1", "b").is_some());
        assert!(l.get("w2", "a").is_some(), "another worker's variant stays");
        l.apply_report("w1", &report(&["a", "b"]));
        assert!(l.get("w1", "a").is_some(), "loaded again");
    }
}
