//! Open client streams: what each asked for, where it is bound, when it was last heard from.
//! A concurrent map (dashmap) keyed by the stream token's nonce ([`crate::state::token`]); idle
//! streams are dropped from memory (their token re-binds on next use), closed ones are
//! remembered for a while so that their token stays dead.

use crate::config::MAX_APP_LEN;
use crate::upstream::Upstream;
use continuum_core::rng::SimRng;
use dashmap::DashMap;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A stream open request (`POST /v1/streams`). Reads `rate_fps`, the deprecated name of
/// `rate_qps`, as `rate_qps` (the front warns about it, `OLD_RATE_KEY`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "OpenFields")]
pub struct OpenRequest {
    /// Task name.
    pub task: String,
    /// Application class (at most [`MAX_APP_LEN`] bytes): for the per-app counts (metrics
    /// label it `other` unless it is one of the configured `app_classes`) and for the stream's
    /// dispatch class (its own class if the gateway's classes name it, else the class of its
    /// demand bucket).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
    /// Max end-to-end delay D^i, ms.
    pub max_delay_ms: f64,
    /// Min accuracy A^i.
    pub min_accuracy: f64,
    /// Query rate ρ_i, queries per second.
    pub rate_qps: f64,
    /// Query size ζ_i, KB.
    pub frame_kb: f64,
    /// One-way access delay δ_i, ms (default: the gateway's `default_access_ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_ms: Option<f64>,
    /// Transmission time t_i, ms (default 0: the query is already at the gateway).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx_ms: Option<f64>,
    /// Items (batch entries) per query (default 1): the stream's demand is items × rate, and
    /// only variants whose batch size holds them are feasible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<u32>,
}

/// The deprecated key of [`OpenRequest::rate_qps`], still accepted.
pub(crate) const OLD_RATE_KEY: &str = "rate_fps";

/// The fields of an open request as sent, the rate under either of its names.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OpenFields {
    task: String,
    #[serde(default)]
    app: Option<String>,
    max_delay_ms: f64,
    min_accuracy: f64,
    #[serde(default)]
    rate_qps: Option<f64>,
    #[serde(default)]
    rate_fps: Option<f64>,
    frame_kb: f64,
    #[serde(default)]
    access_ms: Option<f64>,
    #[serde(default)]
    tx_ms: Option<f64>,
    #[serde(default)]
    items: Option<u32>,
}

impl TryFrom<OpenFields> for OpenRequest {
    type Error = String;

    fn try_from(f: OpenFields) -> Result<Self, String> {
        let rate_qps = match (f.rate_qps, f.rate_fps) {
            (Some(r), None) | (None, Some(r)) => r,
            (Some(_), Some(_)) => {
                return Err(format!(
                    "give the rate once: `{OLD_RATE_KEY}` is the deprecated name of `rate_qps`"
                ));
            }
            (None, None) => return Err("missing field `rate_qps` (queries per second)".into()),
        };
        Ok(Self {
            task: f.task,
            app: f.app,
            max_delay_ms: f.max_delay_ms,
            min_accuracy: f.min_accuracy,
            rate_qps,
            frame_kb: f.frame_kb,
            access_ms: f.access_ms,
            tx_ms: f.tx_ms,
            items: f.items,
        })
    }
}

impl OpenRequest {
    /// Checks the numbers: the error names the field and what was expected.
    pub(crate) fn validate(&self) -> Result<(), String> {
        let checks = [
            ("max_delay_ms", self.max_delay_ms, false),
            ("rate_qps", self.rate_qps, false),
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
        if self.items == Some(0) {
            return Err("items: expected an integer >= 1, got 0".into());
        }
        let app_len = self.app.as_ref().map_or(0, String::len);
        if app_len > MAX_APP_LEN {
            return Err(format!(
                "app: expected at most {MAX_APP_LEN} bytes, got {app_len}"
            ));
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
    pub(crate) worker: u32,
    /// Plan generation the index refers to.
    pub(crate) generation: u64,
    /// The live worker.
    pub(crate) upstream: Arc<Upstream>,
    /// Variant name.
    pub(crate) variant: Arc<str>,
    /// Cluster id.
    pub(crate) cluster: Arc<str>,
    /// The topology's one-way delay to the worker, ms (injected in sim-to-live mode).
    pub(crate) d_ms: f64,
    /// The topology's jitter to the worker, ms.
    pub(crate) sigma_ms: f64,
    /// Expected end-to-end delay: 2(δ + d + 2σ) + t + D_v(ζ), ms.
    pub(crate) expected_ms: f64,
    /// The stream class it was bound as (`crate::state::policies`).
    pub(crate) class: Arc<str>,
    /// The policy that chose it (its class's active policy then).
    pub(crate) policy: &'static str,
    /// The stream's query counters on this binding.
    pub(crate) counters: Arc<crate::metrics::QueryCounters>,
}

/// One open stream.
pub struct Stream {
    /// A short id for logs, random streams and worker frames (the nonce's low 64 bits).
    id: u64,
    /// The nonce of its token (its key in the table).
    nonce: u128,
    /// The token the client names it by.
    token: Arc<str>,
    /// What it asked for.
    req: OpenRequest,
    /// Application class label.
    app: Arc<str>,
    /// One-way access delay δ_i, ms.
    access_ms: f64,
    /// Demand bucket index of the meta-policy's state.
    bucket: usize,
    /// Current binding (`None`: re-bind on the next query).
    binding: Mutex<Option<Binding>>,
    /// Last time it was used, ms since the gateway started.
    last_ms: AtomicU64,
    /// Its own random stream (injected network delays).
    rng: Mutex<SimRng>,
}

impl Stream {
    /// A stream not bound yet, last used at 0 (`touch`): token `token` of nonce `nonce`
    /// (its id is the nonce's low 64 bits), asking for `req`, with application label `app`,
    /// access delay `access_ms`, demand bucket `bucket` and its own random stream `rng`.
    pub fn new(
        nonce: u128,
        token: Arc<str>,
        req: OpenRequest,
        app: Arc<str>,
        access_ms: f64,
        bucket: usize,
        rng: SimRng,
    ) -> Self {
        Self {
            id: nonce as u64,
            nonce,
            token,
            req,
            app,
            access_ms,
            bucket,
            binding: Mutex::new(None),
            last_ms: AtomicU64::new(0),
            rng: Mutex::new(rng),
        }
    }

    /// A short id for logs, random streams and worker frames (the nonce's low 64 bits).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// The token the client names it by.
    pub(crate) fn token(&self) -> &Arc<str> {
        &self.token
    }

    /// What it asked for.
    pub(crate) fn req(&self) -> &OpenRequest {
        &self.req
    }

    /// Its application class label.
    pub(crate) fn app(&self) -> &Arc<str> {
        &self.app
    }

    /// Its one-way access delay δ_i, ms.
    pub(crate) fn access_ms(&self) -> f64 {
        self.access_ms
    }

    /// Its demand bucket index in the meta-policy's state.
    pub(crate) fn bucket(&self) -> usize {
        self.bucket
    }

    /// Runs `f` with the stream's own random stream (injected network delays).
    pub(crate) fn with_rng<R>(&self, f: impl FnOnce(&mut SimRng) -> R) -> R {
        f(&mut self.rng.lock().expect("stream rng lock"))
    }

    /// The binding now.
    pub(crate) fn binding(&self) -> Option<Binding> {
        self.binding.lock().expect("binding lock").clone()
    }

    /// Replaces the binding.
    pub(crate) fn set_binding(&self, b: Option<Binding>) {
        *self.binding.lock().expect("binding lock") = b;
    }

    /// Marks it used at `now_ms`.
    pub(crate) fn touch(&self, now_ms: u64) {
        self.last_ms.store(now_ms, Ordering::Relaxed);
    }
}

/// Every open stream, and the recently closed ones.
#[derive(Default)]
pub(crate) struct StreamTable {
    map: DashMap<u128, Arc<Stream>>,
    closed: DashMap<u128, u64>,
}

impl StreamTable {
    /// Adds a stream.
    pub(crate) fn insert(&self, s: Arc<Stream>) {
        self.map.insert(s.nonce, s);
    }

    /// The open stream of this nonce.
    pub(crate) fn get(&self, nonce: u128) -> Option<Arc<Stream>> {
        self.map.get(&nonce).map(|s| s.clone())
    }

    /// Whether the stream of this nonce was closed (its token must not re-bind).
    pub(crate) fn is_closed(&self, nonce: u128) -> bool {
        self.closed.contains_key(&nonce)
    }

    /// Closes a stream at `now_ms`: removes it and remembers its nonce; whether it was open.
    pub(crate) fn remove(&self, nonce: u128, now_ms: u64) -> bool {
        self.closed.insert(nonce, now_ms);
        self.map.remove(&nonce).is_some()
    }

    /// Open streams.
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    /// Drops streams last used before `cutoff_ms` from memory (a later query re-binds them
    /// from their token) and forgets closes older than `closed_cutoff_ms`; returns how many
    /// streams were dropped.
    pub(crate) fn reap(&self, cutoff_ms: u64, closed_cutoff_ms: u64) -> usize {
        let before = self.map.len();
        self.map
            .retain(|_, s| s.last_ms.load(Ordering::Relaxed) >= cutoff_ms);
        self.closed.retain(|_, t| *t >= closed_cutoff_ms);
        before - self.map.len()
    }

    /// Every open stream (for re-binding after a reload).
    pub(crate) fn all(&self) -> Vec<Arc<Stream>> {
        self.map.iter().map(|e| e.value().clone()).collect()
    }
}

/// A token bucket: `rate` tokens per second up to `burst`.
pub(crate) struct TokenBucket {
    rate: f64,
    burst: f64,
    state: Mutex<(f64, f64)>,
}

impl TokenBucket {
    /// A full bucket.
    pub(crate) fn new(rate: f64, burst: f64) -> Self {
        Self {
            rate,
            burst,
            state: Mutex::new((burst, 0.0)),
        }
    }

    /// Takes one token at time `now_s`, if there is one.
    pub(crate) fn take(&self, now_s: f64) -> bool {
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
            rate_qps: 15.0,
            frame_kb: 48.0,
            access_ms: None,
            tx_ms: None,
            items: None,
        }
    }

    #[test]
    fn open_requests_are_checked_field_by_field() {
        assert!(req().validate().is_ok());
        let mut r = req();
        r.rate_qps = 0.0;
        assert!(r.validate().unwrap_err().starts_with("rate_qps"));
        let mut r = req();
        r.min_accuracy = 1.5;
        assert!(r.validate().unwrap_err().starts_with("min_accuracy"));
        let mut r = req();
        r.access_ms = Some(f64::NAN);
        assert!(r.validate().unwrap_err().starts_with("access_ms"));
        let mut r = req();
        r.app = Some("a".repeat(MAX_APP_LEN + 1));
        assert!(r.validate().unwrap_err().starts_with("app"));
        let mut r = req();
        r.items = Some(0);
        assert!(r.validate().unwrap_err().starts_with("items"));
    }

    #[test]
    fn the_old_rate_key_reads_as_rate_qps_and_both_or_neither_is_refused() {
        let body = |rate: &str| {
            format!(
                r#"{{"task": "t", "max_delay_ms": 100, "min_accuracy": 0.3, {rate} "frame_kb": 48}}"#
            )
        };
        let parse = |rate: &str| serde_json::from_str::<OpenRequest>(&body(rate));
        assert_eq!(parse(r#""rate_qps": 15,"#).unwrap().rate_qps, 15.0);
        assert_eq!(parse(r#""rate_fps": 12,"#).unwrap().rate_qps, 12.0);
        let both = parse(r#""rate_qps": 15, "rate_fps": 12,"#).unwrap_err();
        assert!(both.to_string().contains("deprecated name"), "{both}");
        let neither = parse("").unwrap_err();
        assert!(
            neither.to_string().contains("missing field `rate_qps`"),
            "{neither}"
        );
        let unknown = parse(r#""rate_qps": 15, "rate": 1,"#).unwrap_err();
        assert!(
            unknown.to_string().contains("unknown field `rate`"),
            "{unknown}"
        );
        // What is written (a stream token's claims) uses the new name only.
        let out = serde_json::to_value(parse(r#""rate_fps": 12,"#).unwrap()).unwrap();
        assert_eq!(
            (out["rate_qps"].as_f64(), out.get(OLD_RATE_KEY)),
            (Some(12.0), None)
        );
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
