//! What schedulers observe over a window (the inputs of docs/model.md §9): each worker's load view
//! averaged over the window, and each scheduler's incoming queries counted by demand bucket
//! (max-delay range × rate range). Sans-IO: the simulator feeds it in virtual time, the gateway
//! from live traffic, and the agent's state encoder reads it.

use crate::load::{LoadView, WorkerLoad};
use serde::{Deserialize, Serialize};

/// Bucket edges for incoming demand: a stream falls in the delay range whose upper edge is the
/// first above its deadline, and likewise for its rate (the last range is open-ended).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DemandBuckets {
    /// Upper edges of the max-delay ranges, ms, increasing.
    pub delay_edges_ms: Vec<f64>,
    /// Upper edges of the rate ranges, qps, increasing.
    pub rate_edges_qps: Vec<f64>,
}

impl Default for DemandBuckets {
    /// Ranges that split the default workload's classes: deadlines ≤ 100, ≤ 250, ≤ 500 ms
    /// and longer; rates ≤ 10, ≤ 20 qps and faster (assumption: chosen to separate the AR,
    /// analytics, assistance and surveillance classes of `workloads/default.yaml`).
    fn default() -> Self {
        Self {
            delay_edges_ms: vec![100.0, 250.0, 500.0],
            rate_edges_qps: vec![10.0, 20.0],
        }
    }
}

impl DemandBuckets {
    /// Number of buckets.
    pub fn len(&self) -> usize {
        (self.delay_edges_ms.len() + 1) * (self.rate_edges_qps.len() + 1)
    }

    /// Whether there are no buckets (never: there is always at least one).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The bucket of a stream with deadline `max_delay_ms` and rate `rate_qps`.
    pub fn index(&self, max_delay_ms: f64, rate_qps: f64) -> usize {
        let d = self.delay_edges_ms.partition_point(|e| *e < max_delay_ms);
        let r = self.rate_edges_qps.partition_point(|e| *e < rate_qps);
        d * (self.rate_edges_qps.len() + 1) + r
    }

    /// Checks that the edges increase and are positive.
    pub fn validate(&self) -> Result<(), String> {
        for (name, e) in [
            ("delay_edges_ms", &self.delay_edges_ms),
            ("rate_edges_qps", &self.rate_edges_qps),
        ] {
            if e.iter().any(|x| !(*x > 0.0 && x.is_finite())) || e.windows(2).any(|w| w[0] >= w[1])
            {
                return Err(format!(
                    "{name}: expected increasing numbers > 0, got {e:?}"
                ));
            }
        }
        Ok(())
    }
}

/// Accumulates observations during a window.
#[derive(Debug, Clone)]
pub struct WindowObserver {
    buckets: DemandBuckets,
    schedulers: usize,
    load_sums: Vec<WorkerLoad>,
    load_samples: u32,
    incoming: Vec<f64>,
    unbound: Vec<Unbound>,
    started_ms: f64,
}

/// A stream that found no binding: its queries are counted as they fall into windows.
#[derive(Debug, Clone, Copy)]
struct Unbound {
    slot: usize,
    from_ms: f64,
    to_ms: f64,
    rate_qps: f64,
}

/// What one window showed: per-worker means, and per-scheduler incoming rates by bucket.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowObservation {
    /// Per worker: the load view averaged over the window's publications.
    pub loads: Vec<WorkerLoad>,
    /// `incoming[s * buckets + b]`: queries per second offered at scheduler `s` in bucket `b`.
    pub incoming_qps: Vec<f64>,
    /// Number of buckets per scheduler.
    pub buckets: usize,
}

impl WindowObservation {
    /// Incoming rates by bucket at scheduler `s`.
    pub fn incoming(&self, s: usize) -> &[f64] {
        &self.incoming_qps[s * self.buckets..(s + 1) * self.buckets]
    }
}

impl WindowObserver {
    /// An observer of `workers` workers and `schedulers` schedulers, starting at `now_ms`.
    pub fn new(buckets: DemandBuckets, workers: usize, schedulers: usize, now_ms: f64) -> Self {
        let n = buckets.len();
        Self {
            buckets,
            schedulers,
            load_sums: vec![WorkerLoad::default(); workers],
            load_samples: 0,
            incoming: vec![0.0; schedulers * n],
            unbound: Vec::new(),
            started_ms: now_ms,
        }
    }

    /// The bucket edges.
    pub fn buckets(&self) -> &DemandBuckets {
        &self.buckets
    }

    /// A query arrived at scheduler `s` from a stream in bucket `bucket`.
    #[inline]
    pub fn incoming_query(&mut self, s: usize, bucket: usize) {
        self.incoming[s * self.buckets.len() + bucket] += 1.0;
    }

    /// `n` queries arrived at scheduler `s` in bucket `bucket` (a live driver's batched count).
    #[inline]
    pub fn incoming_queries(&mut self, s: usize, bucket: usize, n: f64) {
        self.incoming[s * self.buckets.len() + bucket] += n;
    }

    /// A stream at scheduler `s` in bucket `bucket` found no binding: its queries, at
    /// `rate_qps` from `from_ms` to `to_ms`, still count as incoming in the windows they fall in.
    pub fn incoming_unbound(
        &mut self,
        s: usize,
        bucket: usize,
        from_ms: f64,
        to_ms: f64,
        rate_qps: f64,
    ) {
        self.unbound.push(Unbound {
            slot: s * self.buckets.len() + bucket,
            from_ms,
            to_ms,
            rate_qps,
        });
    }

    /// A load view was published.
    pub fn load_published(&mut self, view: &LoadView) {
        for (sum, w) in self.load_sums.iter_mut().zip(&view.workers) {
            sum.load_qps += w.load_qps;
            sum.throughput_qps += w.throughput_qps;
            sum.streams += w.streams;
        }
        self.load_samples += 1;
    }

    /// Closes the window at `now_ms`: returns its observation and starts the next one. With no
    /// publication during the window, `fallback` (the current view) stands for the mean.
    pub fn close(&mut self, now_ms: f64, fallback: &LoadView) -> WindowObservation {
        let n = self.load_samples.max(1) as f64;
        let loads = if self.load_samples == 0 {
            fallback.workers.clone()
        } else {
            self.load_sums
                .iter()
                .map(|s| WorkerLoad {
                    load_qps: s.load_qps / n,
                    throughput_qps: s.throughput_qps / n,
                    streams: (f64::from(s.streams) / n).round() as u32,
                })
                .collect()
        };
        let start = self.started_ms;
        for u in &self.unbound {
            let overlap_ms = (u.to_ms.min(now_ms) - u.from_ms.max(start)).max(0.0);
            self.incoming[u.slot] += u.rate_qps * overlap_ms / 1000.0;
        }
        self.unbound.retain(|u| u.to_ms > now_ms);
        let secs = ((now_ms - self.started_ms) / 1000.0).max(1e-9);
        let incoming_qps = self.incoming.iter().map(|c| c / secs).collect();
        self.load_sums
            .iter_mut()
            .for_each(|s| *s = WorkerLoad::default());
        self.load_samples = 0;
        self.incoming.iter_mut().for_each(|c| *c = 0.0);
        self.started_ms = now_ms;
        WindowObservation {
            loads,
            incoming_qps,
            buckets: self.buckets.len(),
        }
    }

    /// Number of schedulers observed.
    pub fn schedulers(&self) -> usize {
        self.schedulers
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_split_by_delay_then_rate() {
        let b = DemandBuckets::default();
        assert_eq!(b.len(), 12);
        assert_eq!(b.index(60.0, 30.0), 2);
        assert_eq!(b.index(100.0, 10.0), 0);
        assert_eq!(b.index(800.0, 5.0), 9);
        assert_eq!(b.index(300.0, 15.0), 7);
    }

    #[test]
    fn window_means_and_rates() {
        let mut o = WindowObserver::new(DemandBuckets::default(), 1, 2, 0.0);
        let mut v = LoadView::idle(1);
        v.workers[0].load_qps = 10.0;
        o.load_published(&v);
        v.workers[0].load_qps = 30.0;
        o.load_published(&v);
        for _ in 0..10 {
            o.incoming_query(1, 3);
        }
        // 4 qps from 2.5 s to 7.5 s: 10 queries in this window, 10 in the next.
        o.incoming_unbound(0, 5, 2500.0, 7500.0, 4.0);
        let w = o.close(5000.0, &v);
        assert_eq!(w.loads[0].load_qps, 20.0);
        assert_eq!(w.incoming(1)[3], 2.0);
        assert_eq!(w.incoming(0)[5], 2.0);
        assert_eq!(w.incoming(0).iter().sum::<f64>(), 2.0);
        // The next window starts empty but for the rest of the unbound stream.
        let w = o.close(10_000.0, &v);
        assert_eq!(w.incoming(1)[3], 0.0);
        assert_eq!(w.incoming(0)[5], 2.0);
        let w = o.close(15_000.0, &v);
        assert_eq!(w.incoming(0)[5], 0.0);
        assert_eq!(w.loads[0].load_qps, 30.0);
    }
}
