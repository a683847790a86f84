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
use super::token::StreamKey;
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
    key: RwLock<Arc<StreamKey>>,
    stats: dashmap::DashMap<String, Arc<TaskStats>>,
    app_classes: RwLock<Arc<Vec<Arc<str>>>>,
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
        let app_classes = cfg
            .app_classes
            .iter()
            .map(|a| Arc::from(a.as_str()))
            .collect();
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
            stats: dashmap::DashMap::new(),
            key: RwLock::new(Arc::new(
                StreamKey::random().expect("the system random generator works"),
            )),
            app_classes: RwLock::new(Arc::new(app_classes)),
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

    /// The statistics of a task (created on first use; tasks come from the plan, so the
    /// set is bounded by the configuration).
    pub fn task_stats(&self, task: &str) -> Arc<TaskStats> {
        if let Some(s) = self.stats.get(task) {
            return s.clone();
        }
        self.stats.entry(task.to_string()).or_default().clone()
    }

    /// The key stream tokens are signed with.
    pub fn stream_key(&self) -> Arc<StreamKey> {
        self.key.read().expect("key lock").clone()
    }

    /// Replaces the stream key (at start, from the configuration).
    pub fn set_stream_key(&self, k: StreamKey) {
        *self.key.write().expect("key lock") = Arc::new(k);
    }

    /// Replaces the application classes that get their own metric label (on reload).
    pub fn set_app_classes(&self, classes: &[String]) {
        *self.app_classes.write().expect("classes lock") =
            Arc::new(classes.iter().map(|a| Arc::from(a.as_str())).collect());
    }

    /// The metric label of a client's application class: itself if configured, else `other`
    /// (`-` when the client named none), so the label set stays bounded whatever clients send.
    pub fn app_label(&self, app: Option<&str>) -> Arc<str> {
        let Some(app) = app else {
            return Arc::from("-");
        };
        let classes = self.app_classes.read().expect("classes lock");
        classes
            .iter()
            .find(|c| &***c == app)
            .cloned()
            .unwrap_or_else(|| Arc::from("other"))
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

/// A task's query statistics as the gateway saw them (Triton's statistics extension).
#[derive(Debug, Default)]
pub struct TaskStats {
    success: AtomicU64,
    success_ns: AtomicU64,
    fail: AtomicU64,
    fail_ns: AtomicU64,
    items: AtomicU64,
    upstream_ns: AtomicU64,
    last_ms: AtomicU64,
}

impl TaskStats {
    /// An answered query of `items` items that took `total`, `upstream` of it at the worker.
    pub fn answered(
        &self,
        items: usize,
        total: std::time::Duration,
        upstream: std::time::Duration,
    ) {
        self.success.fetch_add(1, Ordering::Relaxed);
        self.success_ns
            .fetch_add(total.as_nanos() as u64, Ordering::Relaxed);
        self.items.fetch_add(items as u64, Ordering::Relaxed);
        self.upstream_ns
            .fetch_add(upstream.as_nanos() as u64, Ordering::Relaxed);
        self.last_ms
            .store(crate::worker::oip_core::epoch_ms(), Ordering::Relaxed);
    }

    /// A refused or failed query.
    pub fn failed(&self, total: std::time::Duration) {
        self.fail.fetch_add(1, Ordering::Relaxed);
        self.fail_ns
            .fetch_add(total.as_nanos() as u64, Ordering::Relaxed);
    }

    /// As the OIP core's statistics of model `name`: one execution per forwarded query, its
    /// compute time the worker call.
    pub fn snapshot(&self, name: &str) -> crate::worker::oip_core::ModelStats {
        use crate::worker::oip_core::{Duration, ModelStats};
        let ld = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let ok = ld(&self.success);
        ModelStats {
            name: name.to_string(),
            last_inference_ms: ld(&self.last_ms),
            inference_count: ld(&self.items),
            execution_count: ok,
            success: Duration {
                count: ok,
                ns: ld(&self.success_ns),
            },
            fail: Duration {
                count: ld(&self.fail),
                ns: ld(&self.fail_ns),
            },
            queue: Duration { count: ok, ns: 0 },
            compute_infer: Duration {
                count: ok,
                ns: ld(&self.upstream_ns),
            },
        }
    }
}
