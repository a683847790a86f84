//! The gateway's shared state: the published load-view snapshot, open streams, the active
//! policy and metrics. Its two operations live beside it: binding a stream
//! ([`super::binding`]) and forwarding one query ([`super::forward`]). The HTTP front end
//! ([`super::api`]) only translates.

pub use super::error::ApiError;
pub use super::forward::Relayed;
use super::live::Snapshot;
use super::metrics::GatewayMetrics;
use super::plan::Plan;
use super::streams::{StreamTable, TokenBucket};
use crate::observe::WindowObserver;
use crate::policy::{self, Policy};
use crate::rng::{Purpose, SimRng, stream_rng};
use std::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

/// Where the active policy came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum PolicySource {
    /// The configured static policy.
    Static = 0,
    /// Chosen by the meta-policy this window.
    Agent = 1,
    /// Pinned by an operator (`PUT /v1/policy`).
    Pinned = 2,
}

impl PolicySource {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Static => "static",
            Self::Agent => "agent",
            Self::Pinned => "pinned",
        }
    }
}

/// The meta-policy's live state: its window observer (the agent itself lives in the plan).
pub struct MetaState {
    /// Accumulates the window's observation.
    pub observer: WindowObserver,
}

/// Everything the request handlers and background tasks share.
pub struct GatewayState {
    pub(super) snapshot: RwLock<Arc<Snapshot>>,
    /// Open streams.
    pub streams: StreamTable,
    /// Metrics.
    pub metrics: GatewayMetrics,
    pub(super) policy: AtomicUsize,
    pub(super) source: AtomicU8,
    pub(super) rng: Mutex<SimRng>,
    pub(super) opens: Mutex<TokenBucket>,
    /// The meta-policy's observer (when an agent is configured).
    pub meta: Mutex<Option<MetaState>>,
    pub(super) started: Instant,
    pub(super) queries: AtomicU64,
}

fn registry_index(p: &dyn Policy) -> usize {
    policy::REGISTRY
        .iter()
        .position(|q| q.name() == p.name())
        .expect("registered policy")
}

impl GatewayState {
    /// State around a first snapshot.
    pub fn new(snap: Snapshot) -> Self {
        let cfg = &snap.plan.cfg;
        let p = policy::by_name(&cfg.policy).expect("validated policy name");
        let s = Self {
            rng: Mutex::new(stream_rng(
                cfg.seed,
                Purpose::Policy,
                snap.plan.sched as u64,
                0,
            )),
            opens: Mutex::new(TokenBucket::new(
                cfg.stream_open_rate,
                cfg.stream_open_burst,
            )),
            snapshot: RwLock::new(Arc::new(snap)),
            streams: StreamTable::default(),
            metrics: GatewayMetrics::new(),
            policy: AtomicUsize::new(registry_index(p)),
            source: AtomicU8::new(PolicySource::Static as u8),
            meta: Mutex::new(None),
            started: Instant::now(),
            queries: AtomicU64::new(0),
        };
        s.metrics.set_policy(p.name());
        s
    }

    /// The current published snapshot.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.snapshot.read().expect("snapshot lock").clone()
    }

    /// Publishes a new snapshot.
    pub fn set_snapshot(&self, s: Snapshot) {
        self.metrics
            .load_view_age_seconds
            .set(s.max_age.as_secs_f64());
        *self.snapshot.write().expect("snapshot lock") = Arc::new(s);
    }

    /// Milliseconds since start (the gateway's clock for stream idleness and load views).
    pub fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Replaces the stream-open limiter (on reload).
    pub fn set_open_limit(&self, rate: f64, burst: f64) {
        *self.opens.lock().expect("bucket lock") = TokenBucket::new(rate, burst);
    }

    /// The active policy and where it came from.
    pub fn policy(&self) -> (&'static dyn Policy, PolicySource) {
        let p = policy::REGISTRY[self.policy.load(Ordering::Acquire)];
        let src = match self.source.load(Ordering::Acquire) {
            1 => PolicySource::Agent,
            2 => PolicySource::Pinned,
            _ => PolicySource::Static,
        };
        (p, src)
    }

    /// Sets the active policy, unless it is pinned and `src` is not an operator's.
    pub fn set_policy(&self, p: &'static dyn Policy, src: PolicySource) -> bool {
        if src != PolicySource::Pinned && self.policy().1 == PolicySource::Pinned {
            return false;
        }
        self.policy.store(registry_index(p), Ordering::Release);
        self.source.store(src as u8, Ordering::Release);
        self.metrics.set_policy(p.name());
        true
    }

    /// Removes an operator's pin: the configured policy applies until the agent's next choice.
    pub fn unpin(&self, fallback: &'static dyn Policy) {
        self.source
            .store(PolicySource::Static as u8, Ordering::Release);
        self.set_policy(fallback, PolicySource::Static);
    }

    /// Queries forwarded or refused since start.
    pub fn query_count(&self) -> u64 {
        self.queries.load(Ordering::Relaxed)
    }
}

pub(super) fn res(result: &'static str) -> super::metrics::ResultLabel {
    super::metrics::ResultLabel { result }
}

/// The served tasks, for messages.
pub fn task_list(plan: &Plan) -> String {
    plan.tasks
        .iter()
        .map(|t| t.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
