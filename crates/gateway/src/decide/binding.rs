//! Binding a stream: validating and rate-limiting opens, then the core's feasibility and the
//! active policy of the stream's class over the published load view (docs/model.md §5–6, the
//! simulator's code); re-binding a stream whose worker went away.

use crate::decide::Decider;
use crate::error::ApiError;
use crate::state::live::Snapshot;
use crate::state::policies::StreamPolicy;
use crate::state::streams::{Binding, OpenRequest, Stream};
use crate::state::{res, task_list};
use continuum_core::dispatch::{Placement, bind};
use continuum_core::feasibility::{Candidate, Demand, Shortfall, feasible, latency_bound_ms};
use continuum_core::load::{OwnBindings, OwnLoad};
use continuum_core::mitigation::{reissue_demand, reissue_target};
use continuum_core::rng::{Purpose, stream_rng};
use hyper::StatusCode;
use serde_json::json;
use std::cell::RefCell;
use std::sync::Arc;
use std::time::Instant;

thread_local! {
    static SCRATCH: RefCell<Vec<Candidate>> = const { RefCell::new(Vec::new()) };
}

impl Decider<'_> {
    /// Opens a stream: validates, rate-limits, issues its token, binds.
    pub(crate) fn open(&self, req: OpenRequest) -> Result<(Arc<Stream>, Binding), ApiError> {
        self.admit(req, None)
    }

    /// Re-binds a stream this gateway does not hold (it restarted, or the stream was dropped
    /// while idle) from its verified token: as an open, except that the open rate limit does
    /// not apply (a restart brings every live stream back at once) and the token is kept.
    pub(crate) fn resume(
        &self,
        token: &str,
        claims: crate::state::token::Claims,
    ) -> Result<(Arc<Stream>, Binding), ApiError> {
        let nonce = claims
            .nonce()
            .ok_or_else(|| ApiError::new(StatusCode::NOT_FOUND, "stream token without a nonce"))?;
        // Two first queries of one stream may race here: the first to insert wins.
        if let Some(s) = self.state.streams().get(nonce) {
            let b = self.current_binding(&self.state.snapshot(), &s)?;
            return Ok((s, b));
        }
        let r = self.admit(claims.req, Some((Arc::from(token), nonce)));
        if r.is_ok() {
            self.state.metrics().stream_resumes.inc();
        }
        r
    }

    /// Validates and admits a new stream (its task, the open rate and stream limits, its
    /// token) without binding it: the snapshot it was admitted on and the stream.
    pub(crate) fn admit_unbound(
        &self,
        req: OpenRequest,
        known: Option<(Arc<str>, u128)>,
    ) -> Result<(Arc<Snapshot>, Arc<Stream>), ApiError> {
        let bad = |m: String| {
            self.state
                .metrics()
                .stream_opens
                .get_or_create(&res("bad_request"))
                .inc();
            ApiError::new(StatusCode::BAD_REQUEST, m)
        };
        req.validate().map_err(bad)?;
        let snap = self.state.snapshot();
        let plan = &snap.plan;
        if plan.task(&req.task).is_none() {
            self.state
                .metrics()
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
        let limited = known.is_none() && !self.state.take_open();
        if limited || self.state.streams().len() >= plan.cfg.max_streams {
            self.state
                .metrics()
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
        let (token, nonce) = match known {
            Some(k) => k,
            None => {
                let (t, n) = self.state.stream_key().issue(&req).map_err(|e| {
                    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("{e:#}"))
                })?;
                (Arc::from(t), n)
            }
        };
        let id = nonce as u64;
        let bucket = self.state.meta().bucket_of(req.max_delay_ms, req.rate_qps);
        let app = self.state.app_label(req.app.as_deref());
        let access_ms = req.access_ms.unwrap_or(plan.cfg.default_access_ms);
        let stream = Arc::new(Stream::new(
            nonce,
            token,
            req,
            app,
            access_ms,
            bucket,
            stream_rng(plan.cfg.seed, Purpose::Uplink, plan.sched as u64, id),
        ));
        stream.touch(self.state.now_ms());
        Ok((snap, stream))
    }

    fn admit(
        &self,
        req: OpenRequest,
        known: Option<(Arc<str>, u128)>,
    ) -> Result<(Arc<Stream>, Binding), ApiError> {
        let (snap, stream) = self.admit_unbound(req, known)?;
        let b = self
            .bind(&snap, &stream)
            .inspect_err(|_| self.count_infeasible(&stream))?;
        self.register(&stream, &b);
        Ok((stream, b))
    }

    /// Counts an open refused for want of a feasible binding.
    pub(crate) fn count_infeasible(&self, stream: &Stream) {
        self.state
            .metrics()
            .stream_opens
            .get_or_create(&res("infeasible"))
            .inc();
        let app = crate::metrics::AppLabel {
            app: stream.app().to_string(),
        };
        self.state
            .metrics()
            .refused_qps
            .get_or_create(&app)
            .inc_by(stream.req().rate_qps);
    }

    /// Holds `stream`, bound by `b`, among the open streams.
    pub(crate) fn register(&self, stream: &Arc<Stream>, b: &Binding) {
        stream.set_binding(Some(b.clone()));
        self.state.streams().insert(stream.clone());
        self.state
            .metrics()
            .stream_opens
            .get_or_create(&res("bound"))
            .inc();
        self.state
            .metrics()
            .streams_open
            .set(self.state.streams().len() as i64);
        tracing::debug!(stream = stream.id(), variant = %b.variant, cluster = %b.cluster,
            class = %b.class, policy = b.policy, "stream bound");
    }

    /// Opens a stream under pull dispatch (docs/model.md §15): admitted as any open, refused at
    /// once when no worker could take it, otherwise put on `desk` until a decision step binds
    /// it or its patience runs out.
    pub(crate) async fn open_pulled(
        &self,
        desk: &crate::decide::pull::PullDesk,
        req: OpenRequest,
    ) -> Result<(Arc<Stream>, Binding), ApiError> {
        let (snap, stream) = self.admit_unbound(req, None)?;
        let demand = self.demand_of(&snap, &stream)?;
        let short = SCRATCH.with(|sc| {
            let sc = &mut sc.borrow_mut();
            let short = feasible(&demand, &snap.reach, &snap.plan.fleet, &snap.view, sc);
            sc.is_empty().then_some(short)
        });
        if let Some(short) = short {
            self.count_infeasible(&stream);
            return Err(self.no_binding(&snap, &stream, short));
        }
        let answer = desk.enqueue(demand).await.ok().flatten();
        let Some((c, at)) = answer else {
            self.count_infeasible(&stream);
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "no cluster took this stream within its patience ({} decision steps of {} ms)",
                    desk.patience(),
                    desk.step_ms
                ),
            ));
        };
        let class = self.policy_for(&stream);
        let placed = Placement::of(c, &at.reach);
        let b = self.binding_for(&at, &stream, &demand, &placed, class.name, desk.policy());
        self.register(&stream, &b);
        Ok((stream, b))
    }

    /// Closes a stream; whether it was open. Its token cannot re-bind afterwards (on this
    /// gateway, for `closed_stream_memory_ms`).
    pub(crate) fn close(&self, nonce: u128) -> bool {
        let r = self.state.streams().remove(nonce, self.state.now_ms());
        self.state
            .metrics()
            .streams_open
            .set(self.state.streams().len() as i64);
        r
    }

    /// The class of `stream` and the policy that binds it, by the core's rule
    /// ([`continuum_core::policy::StreamClasses`]): the class of the application the client named, if
    /// the classes name it, else the class of its demand bucket (deadline × rate); that
    /// class's active policy.
    pub(crate) fn policy_for(&self, stream: &Stream) -> StreamPolicy {
        let r = stream.req();
        self.state
            .class_policy(r.app.as_deref(), r.max_delay_ms, r.rate_qps)
    }

    /// What `stream` asks of a binding (docs/model.md §5); 503 when its task is no longer served.
    pub(crate) fn demand_of(&self, snap: &Snapshot, stream: &Stream) -> Result<Demand, ApiError> {
        let r = stream.req();
        let task = snap.plan.task(&r.task).ok_or_else(|| {
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("task `{}` is no longer served", r.task),
            )
        })?;
        Ok(Demand {
            task: task.id,
            rate_qps: r.rate_qps,
            frame_kb: r.frame_kb,
            tx_ms: r.tx_ms.unwrap_or(0.0),
            access_ms: stream.access_ms(),
            max_delay_ms: r.max_delay_ms,
            min_accuracy: r.min_accuracy,
            items: r.items.unwrap_or(1),
        })
    }

    /// Binds `stream` with its class's active policy over snapshot `snap` (docs/model.md §5–6, the
    /// simulator's code); 503 naming the constraint no candidate met.
    pub fn bind(&self, snap: &Snapshot, stream: &Stream) -> Result<Binding, ApiError> {
        let demand = self.demand_of(snap, stream)?;
        let class = self.policy_for(stream);
        let policy = class.policy;
        let t = Instant::now();
        let now_ms = self.state.clock_ms();
        let chosen = SCRATCH.with(|sc| {
            self.state.with_dispatch(|rng, own| {
                bind(
                    &demand,
                    &snap.reach,
                    &snap.plan.fleet,
                    &snap.view,
                    own,
                    now_ms,
                    policy,
                    rng,
                    &mut sc.borrow_mut(),
                )
            })
        });
        self.state
            .metrics()
            .decision_seconds
            .observe(t.elapsed().as_secs_f64());
        let placed = chosen.map_err(|short| self.no_binding(snap, stream, short))?;
        Ok(self.binding_for(snap, stream, &demand, &placed, class.name, policy.name()))
    }

    /// The answer to an open no worker can serve: 503 naming the constraint no candidate met.
    fn no_binding(&self, snap: &Snapshot, stream: &Stream, short: Shortfall) -> ApiError {
        let r = stream.req();
        let constraint = short.binding_constraint();
        let mut e = ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "no worker can serve this stream: every candidate fails the {constraint} constraint ({} reachable workers up; ruled out by task {}, accuracy {}, batch size {}, latency {}, load {})",
                snap.reach.len(),
                short.task,
                short.accuracy,
                short.batch,
                short.latency,
                short.load
            ),
        );
        e.body["constraint"] = json!(constraint);
        tracing::debug!(stream = stream.id(), reach = snap.reach.len(), max_delay_ms = r.max_delay_ms,
            min_accuracy = r.min_accuracy, access_ms = stream.access_ms(), tx_ms = ?r.tx_ms,
            frame_kb = r.frame_kb, constraint, "no feasible binding");
        e
    }

    /// Where a late query of `stream`, bound by `own`, is reissued with `remaining_ms` left
    /// before its deadline: the core's choice ([`continuum_core::mitigation::reissue_target`]) among
    /// the feasible bindings for the copy; `None` when no other worker can make it.
    pub(crate) fn hedge_binding(
        &self,
        snap: &Snapshot,
        stream: &Stream,
        own: &Binding,
        remaining_ms: f64,
    ) -> Option<Binding> {
        let demand = self.demand_of(snap, stream).ok()?;
        let copy = reissue_demand(&demand, remaining_ms);
        let own_worker = (own.generation == snap.generation).then_some(own.worker);
        let c = SCRATCH.with(|sc| {
            let sc = &mut sc.borrow_mut();
            feasible(&copy, &snap.reach, &snap.plan.fleet, &snap.view, sc);
            reissue_target(sc, own_worker.unwrap_or(u32::MAX)).copied()
        })?;
        let placed = Placement::of(c, &snap.reach);
        Some(self.binding_for(
            snap,
            stream,
            &demand,
            &placed,
            own.class.clone(),
            own.policy,
        ))
    }

    /// Where a query of `stream` whose worker (of `failed`) died or reset under it is re-sent
    /// with `remaining_ms` left (retry-on-reset): its class's policy over the workers that are
    /// up, other than the one of `failed`, for the copy's demand (the query is already at the
    /// gateway: no radio uplink again, [`reissue_demand`]); `None` when none is feasible.
    pub(crate) fn retry_binding(
        &self,
        snap: &Snapshot,
        stream: &Stream,
        failed: &Binding,
        remaining_ms: f64,
    ) -> Option<Binding> {
        let demand = self.demand_of(snap, stream).ok()?;
        let copy = reissue_demand(&demand, remaining_ms);
        let plan = &snap.plan;
        let reach: Vec<_> = snap
            .reach
            .iter()
            .filter(|r| {
                plan.served_by[r.worker as usize].is_some_and(|u| {
                    let u = &snap.upstreams[u];
                    u.is_up() && !u.is_retired() && !Arc::ptr_eq(u, &failed.upstream)
                })
            })
            .copied()
            .collect();
        let class = self.policy_for(stream);
        let now_ms = self.state.clock_ms();
        let placed = SCRATCH.with(|sc| {
            self.state.with_rng(|rng| {
                // One query, not a stream: nothing to count among the gateway's own bindings.
                let mut own = OwnLoad::new(OwnBindings::Off, 0.0);
                let sc = &mut sc.borrow_mut();
                bind(
                    &copy,
                    &reach,
                    &plan.fleet,
                    &snap.view,
                    &mut own,
                    now_ms,
                    class.policy,
                    rng,
                    sc,
                )
            })
        });
        let placed = placed.ok()?;
        Some(self.binding_for(
            snap,
            stream,
            &demand,
            &placed,
            class.name,
            class.policy.name(),
        ))
    }

    /// The binding of `stream` to `placed`, a placement on snapshot `snap`'s live reach.
    pub(crate) fn binding_for(
        &self,
        snap: &Snapshot,
        stream: &Stream,
        demand: &Demand,
        placed: &Placement,
        class: Arc<str>,
        policy: &'static str,
    ) -> Binding {
        let plan = &snap.plan;
        let c = &placed.candidate;
        let w = c.worker as usize;
        let up = plan.served_by[w].expect("reach holds served workers only");
        let topo = plan.topo_reach[w].expect("candidate comes from the scheduler's reach");
        let live = &placed.reach;
        let proc_ms = plan.fleet.workers[w].delay_ms(stream.req().frame_kb);
        let (variant, cluster) = (plan.variant_name(w), plan.cluster_id(w));
        let counters = Arc::new(self.state.metrics().query_counters(
            stream.app(),
            variant,
            cluster,
        ));
        Binding {
            counters,
            worker: c.worker,
            generation: snap.generation,
            upstream: snap.upstreams[up].clone(),
            variant: Arc::from(variant),
            cluster: Arc::from(cluster),
            d_ms: topo.d_ms,
            sigma_ms: topo.sigma_ms,
            expected_ms: latency_bound_ms(demand, live, proc_ms),
            class,
            policy,
        }
    }

    /// A usable binding for `stream` now: the current one if its worker is up (carried over
    /// to a new plan generation when the worker still serves it), otherwise a new one.
    pub(crate) fn current_binding(
        &self,
        snap: &Snapshot,
        stream: &Stream,
    ) -> Result<Binding, ApiError> {
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
            self.state.metrics().rebinds.inc();
            tracing::info!(stream = stream.id(), from = %b.upstream.cfg.name, "re-binding stream");
        }
        let b = self.bind(snap, stream)?;
        stream.set_binding(Some(b.clone()));
        Ok(b)
    }
}
