//! Open client streams: what each asked for, where it is bound, when it was last heard from.
//! A concurrent map (dashmap) keyed by stream id; idle streams are reaped.

use super::upstream::Upstream;
use crate::rng::SimRng;
use dashmap::DashMap;
use serde::Deserialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A stream open request (`POST /v1/streams`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenRequest {
    /// Task name.
    pub task: String,
    /// Application class, for the per-app counts.
    #[serde(default)]
    pub app: Option<String>,
    /// Max end-to-end delay D^i, ms.
    pub max_delay_ms: f64,
    /// Min accuracy A^i.
    pub min_accuracy: f64,
    /// Frame rate ρ_i, qps.
    pub rate_fps: f64,
    /// Query size ζ_i, KB.
    pub frame_kb: f64,
    /// One-way access delay δ_i, ms (default: the gateway's `default_access_ms`).
    #[serde(default)]
    pub access_ms: Option<f64>,
    /// Transmission time t_i, ms (default 0: the query is already at the gateway).
    #[serde(default)]
    pub tx_ms: Option<f64>,
}

impl OpenRequest {
    /// Checks the numbers: the error names the field and what was expected.
    pub fn validate(&self) -> Result<(), String> {
        let checks = [
            ("max_delay_ms", self.max_delay_ms, false),
            ("rate_fps", self.rate_fps, false),
            ("frame_kb", self.frame_kb, false),
            ("min_accuracy", self.min_accuracy, true),
            ("access_ms", self.access_ms.unwrap_or(0.0), true),
            ("tx_ms", self.tx_ms.unwrap_or(0.0), true),
        ];
        for (k, v, zero_ok) in checks {
            if !v.is_finite() || v < 0.0 || (!zero_ok && v == 0.0) {
                let want = if zero_ok { ">= 0" } else { "> 0" };
                return Err(format!("{k}: expected a number {want}, got {v}"));
            }
        }
        if self.min_accuracy > 1.0 {
            return Err(format!(
                "min_accuracy: expected a number in [0, 1], got {}",
                self.min_accuracy
            ));
        }
        Ok(())
    }
}

/// Where a stream is bound.
#[derive(Clone)]
pub struct Binding {
    /// Topology worker index, valid in plan generation `generation`.
    pub worker: u32,
    /// Plan generation the index refers to.
    pub generation: u64,
    /// The live worker.
    pub upstream: Arc<Upstream>,
    /// Variant name.
    pub variant: Arc<str>,
    /// Cluster id.
    pub cluster: Arc<str>,
    /// The topology's one-way delay to the worker, ms (injected in sim-to-live mode).
    pub d_ms: f64,
    /// The topology's jitter to the worker, ms.
    pub sigma_ms: f64,
    /// Expected end-to-end delay: 2(δ + d + 2σ) + t + D_v(ζ), ms.
    pub expected_ms: f64,
    /// The stream's query counters on this binding: success, failure, rejected.
    pub counters: Arc<[prometheus_client::metrics::counter::Counter; 3]>,
}

/// One open stream.
pub struct Stream {
    /// Its id.
    pub id: u64,
    /// What it asked for.
    pub req: OpenRequest,
    /// Application class label.
    pub app: Arc<str>,
    /// One-way access delay δ_i, ms.
    pub access_ms: f64,
    /// Demand bucket index of the meta-policy's state.
    pub bucket: usize,
    /// Current binding (`None`: re-bind on the next query).
    pub binding: Mutex<Option<Binding>>,
    /// Last time it was used, ms since the gateway started.
    pub last_ms: AtomicU64,
    /// Its own random stream (injected network delays).
    pub rng: Mutex<SimRng>,
}

impl Stream {
    /// The binding now.
    pub fn binding(&self) -> Option<Binding> {
        self.binding.lock().expect("binding lock").clone()
    }

    /// Replaces the binding.
    pub fn set_binding(&self, b: Option<Binding>) {
        *self.binding.lock().expect("binding lock") = b;
    }

    /// Marks it used at `now_ms`.
    pub fn touch(&self, now_ms: u64) {
        self.last_ms.store(now_ms, Ordering::Relaxed);
    }
}

/// Every open stream.
#[derive(Default)]
pub struct StreamTable {
    map: DashMap<u64, Arc<Stream>>,
    next: AtomicU64,
}

impl StreamTable {
    /// A fresh stream id (ids start at 1).
    pub fn next_id(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Adds a stream.
    pub fn insert(&self, s: Arc<Stream>) {
        self.map.insert(s.id, s);
    }

    /// The stream of this id.
    pub fn get(&self, id: u64) -> Option<Arc<Stream>> {
        self.map.get(&id).map(|s| s.clone())
    }

    /// Removes a stream; whether it was open.
    pub fn remove(&self, id: u64) -> bool {
        self.map.remove(&id).is_some()
    }

    /// Open streams.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether no stream is open.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Closes streams last used before `cutoff_ms`; returns how many.
    pub fn reap(&self, cutoff_ms: u64) -> usize {
        let before = self.map.len();
        self.map
            .retain(|_, s| s.last_ms.load(Ordering::Relaxed) >= cutoff_ms);
        before - self.map.len()
    }

    /// Every open stream (for re-binding after a reload).
    pub fn all(&self) -> Vec<Arc<Stream>> {
        self.map.iter().map(|e| e.value().clone()).collect()
    }
}

/// A token bucket: `rate` tokens per second up to `burst`.
pub struct TokenBucket {
    rate: f64,
    burst: f64,
    state: Mutex<(f64, f64)>,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(rate: f64, burst: f64) -> Self {
        Self {
            rate,
            burst,
            state: Mutex::new((burst, 0.0)),
        }
    }

    /// Takes one token at time `now_s`, if there is one.
    pub fn take(&self, now_s: f64) -> bool {
        let mut st = self.state.lock().expect("bucket lock");
        let (tokens, last) = *st;
        let tokens = (tokens + (now_s - last).max(0.0) * self.rate).min(self.burst);
        if tokens >= 1.0 {
            *st = (tokens - 1.0, now_s);
            true
        } else {
            *st = (tokens, now_s);
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req() -> OpenRequest {
        OpenRequest {
            task: "t".into(),
            app: None,
            max_delay_ms: 100.0,
            min_accuracy: 0.3,
            rate_fps: 15.0,
            frame_kb: 48.0,
            access_ms: None,
            tx_ms: None,
        }
    }

    #[test]
    fn open_requests_are_checked_field_by_field() {
        assert!(req().validate().is_ok());
        let mut r = req();
        r.rate_fps = 0.0;
        assert!(r.validate().unwrap_err().starts_with("rate_fps"));
        let mut r = req();
        r.min_accuracy = 1.5;
        assert!(r.validate().unwrap_err().starts_with("min_accuracy"));
        let mut r = req();
        r.access_ms = Some(f64::NAN);
        assert!(r.validate().unwrap_err().starts_with("access_ms"));
    }

    #[test]
    fn token_bucket_limits_bursts_and_refills() {
        let b = TokenBucket::new(10.0, 3.0);
        assert!((0..3).all(|_| b.take(0.0)));
        assert!(!b.take(0.0));
        assert!(b.take(0.1));
        assert!(!b.take(0.1));
    }
}
