//! The workers' last reported loads: a concurrent map of every live worker variant's load,
//! written by the upstream tasks (QUIC reports, HTTP scrapes) and read when a snapshot is
//! published.

use continuum_core::load::WorkerLoad;
use continuum_wire::LoadReport;
use dashmap::DashMap;
use std::time::Instant;

/// One worker variant's last report.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LiveLoad {
    /// The load it reported.
    pub(crate) load: WorkerLoad,
    /// When the report arrived.
    pub(crate) at: Instant,
}

/// Last reported loads, keyed by (live worker name, variant name).
#[derive(Default)]
pub struct LiveLoads {
    map: DashMap<(String, String), LiveLoad>,
}

impl LiveLoads {
    /// Records every variant of a worker's QUIC load report; its variants that the report
    /// leaves out (unloaded) are forgotten, so no binding goes to them.
    pub(crate) fn apply_report(&self, worker: &str, r: &LoadReport) {
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
    pub(crate) fn get(&self, worker: &str, variant: &str) -> Option<LiveLoad> {
        self.map
            .get(&(worker.to_string(), variant.to_string()))
            .map(|e| *e)
    }

    /// Forgets a worker's variants (it was removed by a reload).
    pub(crate) fn forget(&self, worker: &str) {
        self.map.retain(|k, _| k.0 != worker);
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
        let one = |v: &str| continuum_wire::VariantLoad {
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
