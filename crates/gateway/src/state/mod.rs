//! The state layer: what every query and open reads, owned by [`GatewayState`] — the published
//! load-view snapshot ([`live`], built from the workers' last reported loads,
//! [`crate::upstream::loads`]), open streams ([`streams`]) and their tokens ([`token`]), the
//! active policy of every stream class and where it came from ([`policies`]), the
//! meta-policy's window counts ([`observer`]), the demand of the streams this gateway bound
//! since the last publication (its settings: [`crate::config::OwnBindingsSettings`]), the
//! retry budget's counts ([`retry_budget`]) and metrics. Deciding where a stream goes is the
//! decide layer's, forwarding a query the forward layer's; the front ends only translate.

pub(crate) mod live;
pub(crate) mod observer;
pub(crate) mod policies;
pub(crate) mod retry_budget;
pub(crate) mod streams;
pub(crate) mod token;

use crate::metrics::GatewayMetrics;
use crate::plan::Plan;
use crate::state::live::Snapshot;
use crate::state::observer::MetaObserver;
use crate::state::policies::ActivePolicies;
use crate::state::streams::{StreamTable, TokenBucket};
use crate::state::token::StreamKey;
use arc_swap::ArcSwap;
use continuum_core::mitigation::Mitigation;
use continuum_core::policy::{Policy, PolicyTable};
use continuum_core::rng::{Purpose, SimRng, stream_rng};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

/// Everything the request handlers and background tasks share.
pub struct GatewayState {
    /// The published snapshot, read by every query without a lock.
    snapshot: ArcSwap<Snapshot>,
    /// Open streams.
    streams: StreamTable,
    /// Metrics.
    metrics: GatewayMetrics,
    /// The active dispatch policy of every stream class; changed only through the methods
    /// below, which keep the metrics in step.
    policies: ActivePolicies,
    policy_gauge: Mutex<Vec<String>>,
    rng: Mutex<SimRng>,
    /// The streams this gateway bound since the view was published (docs/model.md §8).
    own: Mutex<continuum_core::load::OwnLoad>,
    opens: Mutex<TokenBucket>,
    /// The meta-policy's window observer (active when an agent is configured).
    meta: MetaObserver,
    started: Instant,
    queries: AtomicU64,
    key: RwLock<Arc<StreamKey>>,
    stats: dashmap::DashMap<String, Arc<TaskStats>>,
    app_classes: RwLock<Arc<Vec<Arc<str>>>>,
    /// The active tail-latency mitigation and whether an operator pinned it.
    mitigation: ArcSwap<(Mitigation, bool)>,
    /// Queries and retries counted for the retry budget (the forward layer's retry-on-reset).
    retry_budget: crate::state::retry_budget::RetryBudget,
}

impl GatewayState {
    /// State around a first snapshot, published at `started` (the clock's origin).
    pub fn new(snap: Snapshot, started: Instant) -> Self {
        let cfg = &snap.plan.cfg;
        let mitigation = cfg.mitigation();
        let policies = ActivePolicies::new(&snap.plan.policies);
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
            own: Mutex::new(cfg.own_bindings.accounting()),
            opens: Mutex::new(TokenBucket::new(
                cfg.stream_open_rate,
                cfg.stream_open_burst,
            )),
            snapshot: ArcSwap::from_pointee(snap),
            streams: StreamTable::default(),
            metrics: GatewayMetrics::new(),
            policies,
            policy_gauge: Mutex::new(Vec::new()),
            meta: MetaObserver::default(),
            started,
            queries: AtomicU64::new(0),
            stats: dashmap::DashMap::new(),
            key: RwLock::new(Arc::new(
                StreamKey::random().expect("the system random generator works"),
            )),
            app_classes: RwLock::new(Arc::new(app_classes)),
            mitigation: ArcSwap::from_pointee((mitigation, false)),
            retry_budget: Default::default(),
        };
        s.policies_changed();
        s
    }

    /// The open streams.
    pub(crate) fn streams(&self) -> &StreamTable {
        &self.streams
    }

    /// The gateway's metrics.
    pub(crate) fn metrics(&self) -> &GatewayMetrics {
        &self.metrics
    }

    /// The meta-policy's window observer (active when an agent is configured).
    pub(crate) fn meta(&self) -> &MetaObserver {
        &self.meta
    }

    /// The current published snapshot.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.snapshot.load_full()
    }

    /// Publishes a new snapshot.
    pub(crate) fn set_snapshot(&self, s: Snapshot) {
        self.metrics
            .load_view_age_seconds
            .set(s.max_age.as_secs_f64());
        self.snapshot.store(Arc::new(s));
    }

    /// Takes one stream open from the open-rate limiter: whether it was allowed.
    pub(crate) fn take_open(&self) -> bool {
        let now_s = self.started.elapsed().as_secs_f64();
        self.opens.lock().expect("bucket lock").take(now_s)
    }

    /// Counts a received query (the query count and the retry budget's deposits).
    pub(crate) fn count_query(&self) {
        self.queries.fetch_add(1, Ordering::Relaxed);
        self.retry_budget.deposit(self.started.elapsed().as_secs());
    }

    /// Takes one retry from the retry budget under `settings`: whether it was allowed.
    pub(crate) fn withdraw_retry(&self, settings: &crate::config::RetrySettings) -> bool {
        self.retry_budget
            .try_withdraw(self.started.elapsed().as_secs(), settings)
    }

    /// Runs `f` with the dispatch random stream and the demand of this gateway's own bindings
    /// (a binding decision: [`continuum_core::dispatch::bind`]).
    pub(crate) fn with_dispatch<R>(
        &self,
        f: impl FnOnce(&mut SimRng, &mut continuum_core::load::OwnLoad) -> R,
    ) -> R {
        let mut rng = self.rng.lock().expect("rng lock");
        let mut own = self.own.lock().expect("own-bindings lock");
        f(&mut rng, &mut own)
    }

    /// Runs `f` with the dispatch random stream alone (a retry's one-query decision).
    pub(crate) fn with_rng<R>(&self, f: impl FnOnce(&mut SimRng) -> R) -> R {
        f(&mut self.rng.lock().expect("rng lock"))
    }

    /// The class of a stream (its app if the classes name it, else its demand bucket) and that
    /// class's active policy ([`ActivePolicies::for_stream`]).
    pub(crate) fn class_policy(
        &self,
        app: Option<&str>,
        max_delay_ms: f64,
        rate_qps: f64,
    ) -> crate::state::policies::StreamPolicy {
        self.policies.for_stream(app, max_delay_ms, rate_qps)
    }

    /// The index of stream class `name`, if there is one.
    pub(crate) fn class_index(&self, name: &str) -> Option<usize> {
        self.policies.class_index(name)
    }

    /// The stream classes' names, in class order.
    pub(crate) fn class_names(&self) -> Vec<String> {
        self.policies.class_names()
    }

    /// Milliseconds since start (the gateway's clock for stream idleness and load views).
    pub(crate) fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// [`Self::now_ms`] with its fraction: the clock the load views are stamped with.
    pub(crate) fn clock_ms(&self) -> f64 {
        self.started.elapsed().as_secs_f64() * 1e3
    }

    /// Replaces the stream-open limiter (on reload).
    pub(crate) fn set_open_limit(&self, rate: f64, burst: f64) {
        *self.opens.lock().expect("bucket lock") = TokenBucket::new(rate, burst);
    }

    /// Every stream class's active policy and where it came from, in class order.
    pub(crate) fn class_policies(&self) -> Vec<crate::state::policies::ClassPolicy> {
        self.policies.list()
    }

    /// Pins `p` for class `class` (every class when `None`): the agent cannot change it.
    pub fn pin_policy(&self, class: Option<usize>, p: &'static dyn Policy) {
        self.policies.pin(class, p);
        self.policies_changed();
    }

    /// Removes the pins of `class` (every class when `None`): the configured policy applies
    /// until the agent's next decision.
    pub(crate) fn unpin_policy(&self, class: Option<usize>) {
        self.policies.unpin(class);
        self.policies_changed();
    }

    /// Applies the meta-policy's decision for this scheduler: class `c` gets
    /// `actions[row[c]]` unless pinned; the classes that changed.
    pub(crate) fn apply_decision(
        &self,
        actions: &[continuum_core::mitigation::Configuration],
        row: &[usize],
    ) -> Result<Vec<usize>, String> {
        let r = self.policies.apply_decision(actions, row);
        self.policies_changed();
        r
    }

    /// Replaces the classes and their configured policies (a reload); pins are dropped.
    pub(crate) fn reset_policies(&self, table: &PolicyTable) {
        self.policies.reset(table);
        self.policies_changed();
    }

    /// The active tail-latency mitigation.
    pub(crate) fn mitigation(&self) -> Mitigation {
        self.mitigation.load().0
    }

    /// The mitigation of the queries of stream class `class`: the operator's pin, else the
    /// meta-policy's choice for the class when it chooses one, else the configured one.
    pub(crate) fn mitigation_for(&self, class: &str) -> Mitigation {
        let (m, pinned) = **self.mitigation.load();
        if pinned {
            return m;
        }
        self.policies.agent_mitigation(class).unwrap_or(m)
    }

    /// Whether an operator pinned the mitigation.
    pub(crate) fn mitigation_pinned(&self) -> bool {
        self.mitigation.load().1
    }

    /// Sets the mitigation: `pinned` by an operator, or from the configuration (on reload;
    /// pins are dropped).
    pub(crate) fn set_mitigation(&self, m: Mitigation, pinned: bool) {
        self.mitigation.store(Arc::new((m, pinned)));
    }

    /// Brings the active-policy metric in step with the policies (one writer at a time, so
    /// the last state written is the current one).
    fn policies_changed(&self) {
        let mut shown = self.policy_gauge.lock().expect("policy gauge lock");
        let now: Vec<_> = self
            .policies
            .list()
            .into_iter()
            .map(|c| crate::metrics::ClassPolicyLabel {
                class: c.class,
                policy: c.policy,
            })
            .collect();
        self.metrics.set_policies(&now, &shown);
        *shown = now.into_iter().map(|c| c.class).collect();
    }

    /// The statistics of a task (created on first use; tasks come from the plan, so the
    /// set is bounded by the configuration).
    pub(crate) fn task_stats(&self, task: &str) -> Arc<TaskStats> {
        if let Some(s) = self.stats.get(task) {
            return s.clone();
        }
        self.stats.entry(task.to_string()).or_default().clone()
    }

    /// The key stream tokens are signed with.
    pub(crate) fn stream_key(&self) -> Arc<StreamKey> {
        self.key.read().expect("key lock").clone()
    }

    /// Replaces the stream key (at start, from the configuration).
    pub(crate) fn set_stream_key(&self, k: StreamKey) {
        *self.key.write().expect("key lock") = Arc::new(k);
    }

    /// Replaces the application classes that get their own metric label (on reload).
    pub(crate) fn set_app_classes(&self, classes: &[String]) {
        *self.app_classes.write().expect("classes lock") =
            Arc::new(classes.iter().map(|a| Arc::from(a.as_str())).collect());
    }

    /// The metric label of a client's application class: itself if configured, else `other`
    /// (`-` when the client named none), so the label set stays bounded whatever clients send.
    pub(crate) fn app_label(&self, app: Option<&str>) -> Arc<str> {
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
    pub(crate) fn query_count(&self) -> u64 {
        self.queries.load(Ordering::Relaxed)
    }
}

pub(super) fn res(result: &'static str) -> crate::metrics::ResultLabel {
    crate::metrics::ResultLabel { result }
}

/// The served tasks, for messages.
pub(crate) fn task_list(plan: &Plan) -> String {
    plan.tasks
        .iter()
        .map(|t| t.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A task's query statistics as the gateway saw them (Triton's statistics extension).
#[derive(Debug, Default)]
pub(crate) struct TaskStats {
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
    pub(crate) fn answered(
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
            .store(continuum_wire::oip_core::epoch_ms(), Ordering::Relaxed);
    }

    /// A refused or failed query.
    pub(crate) fn failed(&self, total: std::time::Duration) {
        self.fail.fetch_add(1, Ordering::Relaxed);
        self.fail_ns
            .fetch_add(total.as_nanos() as u64, Ordering::Relaxed);
    }

    /// As the OIP core's statistics of model `name`: one execution per forwarded query, its
    /// compute time the worker call.
    pub(crate) fn snapshot(&self, name: &str) -> continuum_wire::oip_core::ModelStats {
        use continuum_wire::oip_core::{Duration, ModelStats};
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
