//! The gateway's shared state and its two operations: binding a stream (the core's
//! feasibility and policy over the published load view) and forwarding one query to the bound
//! worker, judging its outcome. The HTTP front end ([`super::api`]) only translates.

use super::live::Snapshot;
use super::metrics::GatewayMetrics;
use super::plan::{Plan, TaskSpec};
use super::streams::{Binding, OpenRequest, Stream, StreamTable, TokenBucket};
use super::upstream::{Link, UpstreamError};
use crate::feasibility::{Demand, bind, latency_bound_ms};
use crate::observe::WindowObserver;
use crate::policy::{self, Policy};
use crate::rng::{Purpose, SimRng, stream_rng};
use crate::worker::Answer;
use crate::worker::frame::InferFrame;
use crate::worker::oip::{self, ParsedInfer};
use bytes::Bytes;
use hyper::StatusCode;
use rand_distr::{Distribution, Normal};
use serde_json::{Value, json};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

/// An error answer: status and JSON body.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Body (`{"error": …}` and context).
    pub body: Value,
}

impl ApiError {
    /// An error with just a message.
    pub fn new(status: StatusCode, msg: impl std::fmt::Display) -> Self {
        Self {
            status,
            body: json!({"error": msg.to_string()}),
        }
    }

    /// A query the gateway or the worker refused (`"status": "rejected"`).
    pub fn rejected(status: StatusCode, msg: impl std::fmt::Display) -> Self {
        let mut e = Self::new(status, msg);
        e.body["status"] = json!("rejected");
        e
    }
}

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

/// A query's answer, ready to relay.
pub struct Relayed {
    /// Response body.
    pub body: Bytes,
    /// `Inference-Header-Content-Length` when the output is binary.
    pub header_len: Option<usize>,
    /// `success` or `failure`.
    pub outcome: &'static str,
    /// Variant that served it.
    pub variant: Arc<str>,
    /// Cluster that served it.
    pub cluster: Arc<str>,
}

/// Everything the request handlers and background tasks share.
pub struct GatewayState {
    snapshot: RwLock<Arc<Snapshot>>,
    /// Open streams.
    pub streams: StreamTable,
    /// Metrics.
    pub metrics: GatewayMetrics,
    policy: AtomicUsize,
    source: AtomicU8,
    rng: Mutex<SimRng>,
    opens: Mutex<TokenBucket>,
    /// The meta-policy's observer (when an agent is configured).
    pub meta: Mutex<Option<MetaState>>,
    started: Instant,
    queries: AtomicU64,
}

thread_local! {
    static SCRATCH: RefCell<Vec<crate::feasibility::Candidate>> = const { RefCell::new(Vec::new()) };
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

    /// Opens a stream: validates, rate-limits, binds.
    pub fn open(&self, req: OpenRequest) -> Result<(Arc<Stream>, Binding), ApiError> {
        let bad = |m: String| {
            self.metrics
                .stream_opens
                .get_or_create(&res("bad_request"))
                .inc();
            ApiError::new(StatusCode::BAD_REQUEST, m)
        };
        req.validate().map_err(bad)?;
        let snap = self.snapshot();
        let plan = &snap.plan;
        if plan.task(&req.task).is_none() {
            self.metrics
                .stream_opens
                .get_or_create(&res("unknown_task"))
                .inc();
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                format!(
                    "unknown task `{}`; served tasks: {}",
                    req.task,
                    task_list(plan)
                ),
            ));
        }
        let now_s = self.started.elapsed().as_secs_f64();
        let limited = !self.opens.lock().expect("bucket lock").take(now_s);
        if limited || self.streams.len() >= plan.cfg.max_streams {
            self.metrics
                .stream_opens
                .get_or_create(&res("limited"))
                .inc();
            let why = if limited {
                format!(
                    "too many stream opens: over {} per second",
                    plan.cfg.stream_open_rate
                )
            } else {
                format!(
                    "too many open streams: the limit is {}",
                    plan.cfg.max_streams
                )
            };
            return Err(ApiError::new(StatusCode::TOO_MANY_REQUESTS, why));
        }
        let id = self.streams.next_id();
        let bucket = self
            .meta
            .lock()
            .expect("meta lock")
            .as_ref()
            .map_or(0, |m| {
                m.observer.buckets().index(req.max_delay_ms, req.rate_fps)
            });
        let stream = Arc::new(Stream {
            id,
            app: Arc::from(req.app.as_deref().unwrap_or("-")),
            access_ms: req.access_ms.unwrap_or(plan.cfg.default_access_ms),
            bucket,
            binding: Mutex::new(None),
            last_ms: AtomicU64::new(self.now_ms()),
            rng: Mutex::new(stream_rng(
                plan.cfg.seed,
                Purpose::Uplink,
                plan.sched as u64,
                id,
            )),
            req,
        });
        let b = self.bind(&snap, &stream).inspect_err(|_| {
            self.metrics
                .stream_opens
                .get_or_create(&res("infeasible"))
                .inc();
        })?;
        stream.set_binding(Some(b.clone()));
        self.streams.insert(stream.clone());
        self.metrics.stream_opens.get_or_create(&res("bound")).inc();
        self.metrics.streams_open.set(self.streams.len() as i64);
        tracing::debug!(stream = id, variant = %b.variant, cluster = %b.cluster, "stream bound");
        Ok((stream, b))
    }

    /// Closes a stream; whether it was open.
    pub fn close(&self, id: u64) -> bool {
        let r = self.streams.remove(id);
        self.metrics.streams_open.set(self.streams.len() as i64);
        r
    }

    /// Binds `stream` with the active policy over snapshot `snap` (SPEC §5–6, the simulator's
    /// code); 503 naming the constraint no candidate met.
    pub fn bind(&self, snap: &Snapshot, stream: &Stream) -> Result<Binding, ApiError> {
        let plan = &snap.plan;
        let r = &stream.req;
        let task = plan.task(&r.task).ok_or_else(|| {
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("task `{}` is no longer served", r.task),
            )
        })?;
        let demand = Demand {
            task: task.id,
            rate_qps: r.rate_fps,
            size_kb: r.frame_kb,
            tx_ms: r.tx_ms.unwrap_or(0.0),
            access_ms: stream.access_ms,
            max_delay_ms: r.max_delay_ms,
            min_accuracy: r.min_accuracy,
        };
        let (policy, _) = self.policy();
        let t = Instant::now();
        let chosen = SCRATCH.with(|sc| {
            let mut rng = self.rng.lock().expect("rng lock");
            bind(
                &demand,
                &snap.reach,
                &plan.fleet,
                &snap.view,
                policy,
                &mut rng,
                &mut sc.borrow_mut(),
            )
        });
        self.metrics
            .decision_seconds
            .observe(t.elapsed().as_secs_f64());
        let c = chosen.map_err(|short| {
            let constraint = short.binding_constraint();
            let mut e = ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "no worker can serve this stream: every candidate fails the {constraint} constraint ({} reachable workers up; ruled out by task {}, accuracy {}, latency {}, load {})",
                    snap.reach.len(),
                    short.task,
                    short.accuracy,
                    short.latency,
                    short.load
                ),
            );
            e.body["constraint"] = json!(constraint);
            tracing::debug!(stream = stream.id, reach = snap.reach.len(), max_delay_ms = r.max_delay_ms,
                min_accuracy = r.min_accuracy, access_ms = stream.access_ms, tx_ms = ?r.tx_ms,
                frame_kb = r.frame_kb, constraint, "no feasible binding");
            e
        })?;
        let w = c.worker as usize;
        let up = plan.served_by[w].expect("reach holds served workers only");
        let topo = plan.topology.schedulers[plan.sched]
            .reach
            .iter()
            .find(|x| x.worker == c.worker)
            .expect("candidate comes from the scheduler's reach");
        let live = snap
            .reach
            .iter()
            .find(|x| x.worker == c.worker)
            .expect("candidate comes from the live reach");
        let proc_ms = plan.fleet.workers[w].delay_ms(r.frame_kb);
        let (variant, cluster) = (plan.variant_name(w), plan.cluster_id(w));
        let counters = Arc::new(
            ["success", "failure", "rejected"]
                .map(|o| self.metrics.counter(o, &stream.app, variant, cluster)),
        );
        Ok(Binding {
            counters,
            worker: c.worker,
            generation: snap.generation,
            upstream: snap.upstreams[up].clone(),
            variant: Arc::from(variant),
            cluster: Arc::from(cluster),
            d_ms: topo.d_ms,
            sigma_ms: topo.sigma_ms,
            expected_ms: latency_bound_ms(&demand, live, proc_ms),
        })
    }

    /// A usable binding for `stream` now: the current one if its worker is up (carried over
    /// to a new plan generation when the worker still serves it), otherwise a new one.
    fn current_binding(&self, snap: &Snapshot, stream: &Stream) -> Result<Binding, ApiError> {
        if let Some(mut b) = stream.binding() {
            if b.upstream.is_up() && !b.upstream.is_retired() {
                if b.generation == snap.generation {
                    return Ok(b);
                }
                let plan = &snap.plan;
                let same = (0..plan.topology.workers.len()).find(|&w| {
                    plan.cluster_id(w) == &*b.cluster
                        && plan.variant_name(w) == &*b.variant
                        && plan.served_by[w]
                            .is_some_and(|u| Arc::ptr_eq(&snap.upstreams[u], &b.upstream))
                });
                if let Some(w) = same {
                    b.worker = w as u32;
                    b.generation = snap.generation;
                    stream.set_binding(Some(b.clone()));
                    return Ok(b);
                }
            }
            self.metrics.rebinds.inc();
            tracing::info!(stream = stream.id, from = %b.upstream.cfg.name, "re-binding stream");
        }
        let b = self.bind(snap, stream)?;
        stream.set_binding(Some(b.clone()));
        Ok(b)
    }

    /// Parses a query body for the stream's task (400 on malformed input).
    pub fn parse(
        &self,
        task: &TaskSpec,
        body: &[u8],
        header_len: Option<usize>,
    ) -> Result<ParsedInfer, ApiError> {
        oip::parse_infer(body, header_len, task).map_err(|e| {
            self.metrics
                .bad_requests
                .get_or_create(&res("malformed"))
                .inc();
            ApiError::new(StatusCode::BAD_REQUEST, e)
        })
    }

    /// Forwards one query of `stream` (received at `t0`) and judges its outcome: every query
    /// that reaches here is counted exactly once as success, failure or rejected.
    pub async fn forward(
        &self,
        stream: &Stream,
        parsed: Option<ParsedInfer>,
        body: Bytes,
        header_len: Option<usize>,
        t0: Instant,
    ) -> Result<Relayed, ApiError> {
        stream.touch(self.now_ms());
        self.queries.fetch_add(1, Ordering::Relaxed);
        let snap = self.snapshot();
        if let Some(m) = self.meta.lock().expect("meta lock").as_mut() {
            m.observer
                .incoming_queries(snap.plan.sched, stream.bucket, 1.0);
        }
        let reject = |e: ApiError, b: Option<&Binding>| {
            match b {
                Some(b) => {
                    b.counters[2].inc();
                }
                None => self.metrics.query("rejected", &stream.app, "-", "-"),
            }
            e
        };
        let b = match self.current_binding(&snap, stream) {
            Ok(b) => b,
            Err(e) => return Err(reject(e, None)),
        };
        let Ok(_permit) = b.upstream.permits.try_acquire() else {
            let msg = format!(
                "worker `{}` has {} queries in flight, the limit",
                b.upstream.cfg.name, snap.plan.cfg.max_in_flight_per_worker
            );
            return Err(reject(
                ApiError::rejected(StatusCode::TOO_MANY_REQUESTS, msg),
                Some(&b),
            ));
        };
        let inject = snap.plan.cfg.inject_delays;
        let mut injected = Duration::ZERO;
        if inject {
            let up =
                stream.access_ms + self.net_sample(stream, &b) + stream.req.tx_ms.unwrap_or(0.0);
            injected += sleep_ms(up).await;
        }
        let down_ms = if inject {
            stream.access_ms + self.net_sample(stream, &b)
        } else {
            0.0
        };
        let budget_ms = stream.req.max_delay_ms - t0.elapsed().as_secs_f64() * 1e3 - down_ms;
        let deadline_us = (budget_ms * 1e3).clamp(1.0, f64::from(u32::MAX)) as u32;
        let task = snap.plan.task(&stream.req.task);
        // HTTP upstreams get the body as it came; QUIC needs the tensor.
        let parsed = match (&b.upstream.link, task, parsed) {
            (Link::Quic(_), Some(task), None) => Some(self.parse(task, &body, header_len)?),
            (_, _, p) => p,
        };
        let t_up = Instant::now();
        let result = match (&b.upstream.link, task) {
            (_, None) => Err(UpstreamError::NotFound(stream.req.task.clone())),
            (Link::Quic(q), Some(task)) => {
                let mut parsed = parsed.expect("parsed above for QUIC");
                let frame = InferFrame {
                    stream_id: stream.id,
                    deadline_us,
                    model: b.variant.to_string(),
                    input: crate::inference::Tensor {
                        shape: parsed.shape.clone(),
                        data: std::mem::take(&mut parsed.data),
                    },
                };
                q.infer(&frame).await.map(|a| {
                    let ans = Answer {
                        output: a.output,
                        queue_us: u64::from(a.queue_us),
                        compute_us: u64::from(a.compute_us),
                        batch_items: usize::from(a.batch_items),
                    };
                    let (bytes, hlen) = oip::encode_infer(task, &parsed, &ans);
                    (Bytes::from(bytes), hlen)
                })
            }
            (Link::Http(h), Some(_)) => h
                .infer(&b.variant, body, header_len)
                .await
                .map(|a| (a.body, a.header_len)),
        };
        let upstream_time = t_up.elapsed();
        let (body, header_len) = match result {
            Ok(x) => x,
            Err(UpstreamError::BadRequest(m)) => {
                // An invalid request, not a query: counted apart, as the gateway's own 400s.
                self.metrics
                    .bad_requests
                    .get_or_create(&res("malformed"))
                    .inc();
                return Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    format!("worker `{}` refused the input: {m}", b.upstream.cfg.name),
                ));
            }
            Err(e) => return Err(reject(self.upstream_failed(&b, e), Some(&b))),
        };
        if inject {
            injected += sleep_ms(down_ms).await;
        }
        let total = t0.elapsed();
        let outcome = if total.as_secs_f64() * 1e3 <= stream.req.max_delay_ms {
            "success"
        } else {
            "failure"
        };
        self.metrics
            .query(outcome, &stream.app, &b.variant, &b.cluster);
        self.metrics.added_latency_seconds.observe(
            total
                .saturating_sub(upstream_time)
                .saturating_sub(injected)
                .as_secs_f64(),
        );
        Ok(Relayed {
            body,
            header_len,
            outcome,
            variant: b.variant.clone(),
            cluster: b.cluster.clone(),
        })
    }

    /// Turns a worker error into the client's answer; a worker that is down is marked so and
    /// the stream re-binds on its next query.
    fn upstream_failed(&self, b: &Binding, e: UpstreamError) -> ApiError {
        if e.worker_down() {
            // Its streams (this one included) re-bind on their next query while it is down.
            b.upstream.mark_failed(&e.to_string());
        }
        let who = &b.upstream.cfg.name;
        match e {
            UpstreamError::Rejected(m) => ApiError::rejected(
                StatusCode::TOO_MANY_REQUESTS,
                format!("worker `{who}` rejected the query: {m}"),
            ),
            UpstreamError::BadRequest(m) => ApiError::new(
                StatusCode::BAD_REQUEST,
                format!("worker `{who}` refused the input: {m}"),
            ),
            UpstreamError::Timeout(d) => ApiError::rejected(
                StatusCode::GATEWAY_TIMEOUT,
                format!("worker `{who}` did not answer within {d:?}; the stream will be re-bound"),
            ),
            UpstreamError::Unavailable(m) => ApiError::rejected(
                StatusCode::BAD_GATEWAY,
                format!("worker `{who}` is unavailable ({m}); the stream will be re-bound"),
            ),
            e @ (UpstreamError::NotFound(_) | UpstreamError::Internal(_)) => ApiError::rejected(
                StatusCode::BAD_GATEWAY,
                format!("worker `{who}` failed: {e}"),
            ),
        }
    }

    /// One injected one-way network delay: max(0, N(d, σ)) from the stream's own random
    /// stream (SPEC §7).
    fn net_sample(&self, stream: &Stream, b: &Binding) -> f64 {
        let mut rng = stream.rng.lock().expect("stream rng lock");
        match Normal::new(b.d_ms, b.sigma_ms) {
            Ok(n) => n.sample(&mut *rng).max(0.0),
            Err(_) => b.d_ms.max(0.0),
        }
    }

    /// Queries forwarded or refused since start.
    pub fn query_count(&self) -> u64 {
        self.queries.load(Ordering::Relaxed)
    }
}

/// Sleeps `ms` (if positive) precisely; returns the time actually slept. tokio's timer has a
/// 1 ms granularity and fires up to a tick late, which would add 1–2 ms to every injected
/// delay: the last 2 ms are waited by yielding instead (only in sim-to-live mode).
async fn sleep_ms(ms: f64) -> Duration {
    if ms <= 0.0 {
        return Duration::ZERO;
    }
    let t = Instant::now();
    let target = t + Duration::from_secs_f64(ms / 1e3);
    let coarse = Duration::from_millis(2);
    if let Some(early) = target.checked_sub(coarse).filter(|e| *e > t) {
        tokio::time::sleep_until(early.into()).await;
    }
    while Instant::now() < target {
        tokio::task::yield_now().await;
    }
    t.elapsed()
}

fn res(result: &'static str) -> super::metrics::ResultLabel {
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
