//! The forward layer: one query of a bound stream on its way to a worker and back — the relay
//! ([`relay`]: the answer in transit, the times its mitigation acts at), the worker call and
//! its hedge under `reissue@r` ([`hedge`]), retry-on-reset ([`retry`]) within its budget (the
//! state's retry budget), and the query's deadline. Where a query goes is the decide layer's
//! ([`Decider`]), how it is framed for its worker the upstream layer's
//! ([`crate::upstream::Upstream::infer`]). This module judges
//! each query's outcome: every query that reaches here is counted once as success, failure or
//! rejected.

pub(crate) mod hedge;
pub(crate) mod relay;
pub(crate) mod retry;

use crate::decide::Decider;
use crate::error::ApiError;
use crate::forward::relay::{Relayed, age_at_receipt_ms, query_times, sleep_ms};
use crate::plan::TaskSpec;
use crate::state::streams::{Binding, Stream};
use crate::state::{GatewayState, res};
use crate::upstream::{Answered, Outgoing, UpstreamError, Wire};
use bytes::Bytes;
use continuum_wire::oip::{self, ParsedInfer};
use hyper::StatusCode;
use rand_distr::{Distribution, Normal};
use std::time::{Duration, Instant};

/// The forward layer's owner: carries one query of a bound stream to its worker and back over
/// the state it borrows, asking the decide layer ([`Decider`]) where to re-bind, hedge or retry.
#[derive(Clone, Copy)]
pub(crate) struct Forwarder<'a> {
    state: &'a GatewayState,
}

impl<'a> Forwarder<'a> {
    /// The forward layer over `state`.
    pub(crate) fn new(state: &'a GatewayState) -> Self {
        Self { state }
    }

    /// The decide layer over the same state.
    fn decide(&self) -> Decider<'a> {
        Decider::new(self.state)
    }
}

impl Forwarder<'_> {
    /// Parses a query body for the stream's task (400 on malformed input).
    pub(crate) fn parse(
        &self,
        task: &TaskSpec,
        body: &[u8],
        header_len: Option<usize>,
    ) -> Result<ParsedInfer, ApiError> {
        self.parse_with(oip::parse_infer(body, header_len, task))
    }

    /// Counts a malformed query body as a bad request (400).
    fn parse_with(
        &self,
        r: Result<ParsedInfer, continuum_wire::QueryError>,
    ) -> Result<ParsedInfer, ApiError> {
        r.map_err(|e| {
            self.state
                .metrics()
                .bad_requests
                .get_or_create(&res("malformed"))
                .inc();
            ApiError::new(StatusCode::BAD_REQUEST, e)
        })
    }

    /// Forwards one query of `stream` (received at `t0`) and judges its outcome: every query
    /// that reaches here is counted exactly once as success, failure or rejected (and in the
    /// task's statistics).
    pub(crate) async fn forward(
        &self,
        stream: &Stream,
        parsed: Option<ParsedInfer>,
        body: Bytes,
        wire: Wire,
        t0: Instant,
    ) -> Result<Relayed, ApiError> {
        let items = parsed
            .as_ref()
            .and_then(|p| p.shape.first().copied())
            .unwrap_or(stream.req().items.unwrap_or(1) as usize);
        let r = self.forward_once(stream, parsed, body, wire, t0).await;
        let stats = self.state.task_stats(&stream.req().task);
        match &r {
            Ok(x) => stats.answered(items, t0.elapsed(), x.upstream),
            Err(_) => stats.failed(t0.elapsed()),
        }
        r
    }

    async fn forward_once(
        &self,
        stream: &Stream,
        parsed: Option<ParsedInfer>,
        body: Bytes,
        wire: Wire,
        t0: Instant,
    ) -> Result<Relayed, ApiError> {
        stream.touch(self.state.now_ms());
        self.state.count_query();
        let snap = self.state.snapshot();
        self.state.meta().count_query(stream.bucket());
        let b = match self.decide().current_binding(&snap, stream) {
            Ok(b) => b,
            Err(e) => return Err(self.rejected(stream, e, None)),
        };
        let upstream = b.upstream.clone();
        let Ok(_permit) = upstream.permits.try_acquire() else {
            let msg = format!(
                "worker `{}` has {} queries in flight, the limit",
                b.upstream.cfg.name, snap.plan.cfg.max_in_flight_per_worker
            );
            let e = ApiError::rejected(StatusCode::TOO_MANY_REQUESTS, msg);
            return Err(self.rejected(stream, e, Some(&b)));
        };
        let inject = snap.plan.cfg.inject_delays;
        let mut injected = Duration::ZERO;
        if inject {
            let up = stream.access_ms()
                + self.net_sample(stream, &b)
                + stream.req().tx_ms.unwrap_or(0.0);
            injected += sleep_ms(up).await;
        }
        let down_ms = if inject {
            stream.access_ms() + self.net_sample(stream, &b)
        } else {
            0.0
        };
        // Timed from the query's emission (its declared uplink before the receipt at `t0`):
        // under `discard@r` the worker's admission gets emission + r × the deadline, so it
        // drops what cannot answer by then (counted as rejected, and as discarded); under
        // `reissue@r` the hedge fires at emission + r × the deadline.
        let mitigation = self.state.mitigation_for(&b.class);
        let age_ms = age_at_receipt_ms(
            inject,
            stream.access_ms(),
            stream.req().tx_ms.unwrap_or(0.0),
        );
        let times = query_times(&mitigation, stream.req().max_delay_ms, age_ms);
        let worker_deadline_ms = times.answer_limit_ms - t0.elapsed().as_secs_f64() * 1e3 - down_ms;
        let deadline_us = (worker_deadline_ms * 1e3).clamp(1.0, f64::from(u32::MAX)) as u32;
        let task = snap.plan.task(&stream.req().task);
        // HTTP upstreams get the body as it came; QUIC needs the tensor's shape, and its data
        // as it lies in the body when it came in binary form (relayed without a copy). A hedge
        // may go to either, so it has both.
        let needs_parsed = b.upstream.needs_parsed();
        let parsed = match (task, parsed, wire) {
            (Some(task), None, Wire::Oip(header_len)) if needs_parsed || mitigation.reissues() => {
                Some(self.parse_with(oip::parse_infer_relay(&body, header_len, task))?)
            }
            (_, p, _) => p,
        };
        let out = Outgoing {
            stream: stream.id(),
            task_name: &stream.req().task,
            task,
            parsed: parsed.as_ref(),
            body: &body,
            wire,
        };
        let t_up = Instant::now();
        let (result, hedge) = match times.reissue_at_ms {
            Some(_) => {
                self.hedged(&snap, stream, &out, &b, t0, times, down_ms, deadline_us)
                    .await
            }
            None => (self.call(&out, &b, deadline_us).await, None),
        };
        let hedged = hedge.is_some();
        // The binding that answered (or failed last): the copy's when it did, and then the way
        // back is from its worker.
        let down_ms = match &hedge {
            Some(h) if inject => stream.access_ms() + self.net_sample(stream, h),
            _ => down_ms,
        };
        let b = hedge.unwrap_or(b);
        let (result, b, down_ms) = if hedged {
            (result, b, down_ms)
        } else {
            let remaining_ms = times.answer_limit_ms - t0.elapsed().as_secs_f64() * 1e3 - down_ms;
            self.retry_on_reset(stream, &out, result, b, down_ms, remaining_ms, inject)
                .await
        };
        let upstream_time = t_up.elapsed();
        let answer = self.settle(stream, &b, result, mitigation.discards())?;
        if inject {
            injected += sleep_ms(down_ms).await;
        }
        Ok(self.judge(stream, &b, t0, upstream_time, injected, answer))
    }

    /// Counts a query refused before or at its worker as rejected (on its binding when it has
    /// one) and returns the client's error.
    fn rejected(&self, stream: &Stream, e: ApiError, b: Option<&Binding>) -> ApiError {
        match b {
            Some(b) => {
                b.counters.rejected.inc();
            }
            None => self
                .state
                .metrics()
                .query("rejected", stream.app(), "-", "-"),
        }
        e
    }

    /// Retry-on-reset: after a failed call to `b`, once, to the stream's next feasible binding
    /// if the deadline (`remaining_ms`) and the retry budget allow ([`crate::forward::retry`]).
    /// Returns the result, the binding that answered or failed last, and the delay of the way
    /// back from its worker.
    #[allow(clippy::too_many_arguments)]
    async fn retry_on_reset(
        &self,
        stream: &Stream,
        out: &Outgoing<'_>,
        result: Result<Answered, UpstreamError>,
        b: Binding,
        down_ms: f64,
        remaining_ms: f64,
        inject: bool,
    ) -> (Result<Answered, UpstreamError>, Binding, f64) {
        let Err(e) = &result else {
            return (result, b, down_ms);
        };
        let Some(b2) = self.retry_target(stream, &b, e, remaining_ms) else {
            return (result, b, down_ms);
        };
        let result = self.resend(stream, out, &b2, remaining_ms, inject).await;
        if result.is_ok() {
            self.state.metrics().retry("answered");
        }
        let down_ms = if inject {
            stream.access_ms() + self.net_sample(stream, &b2)
        } else {
            down_ms
        };
        (result, b2, down_ms)
    }

    /// The worker's answer, or the client's error for its failure: an input the worker refused
    /// is a bad request (400, counted apart, as the gateway's own); any other failure counts
    /// the query rejected (and discarded under `discard@r` when the worker dropped it).
    fn settle(
        &self,
        stream: &Stream,
        b: &Binding,
        result: Result<Answered, UpstreamError>,
        discards: bool,
    ) -> Result<Answered, ApiError> {
        match result {
            Ok(x) => Ok(x),
            Err(UpstreamError::BadRequest(m)) => {
                self.state
                    .metrics()
                    .bad_requests
                    .get_or_create(&res("malformed"))
                    .inc();
                Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    format!("worker `{}` refused the input: {m}", b.upstream.cfg.name),
                ))
            }
            Err(e) => {
                if discards && matches!(e, UpstreamError::Rejected(_)) {
                    self.state.metrics().mitigation("discarded");
                }
                Err(self.rejected(stream, self.upstream_failed(b, e), Some(b)))
            }
        }
    }

    /// Judges an answered query by its deadline (success or failure, on binding `b`) and
    /// records its answer time and the latency the gateway added.
    fn judge(
        &self,
        stream: &Stream,
        b: &Binding,
        t0: Instant,
        upstream: Duration,
        injected: Duration,
        (body, header_len): Answered,
    ) -> Relayed {
        let total = t0.elapsed();
        let outcome = if total.as_secs_f64() * 1e3 <= stream.req().max_delay_ms {
            b.counters.success.inc();
            "success"
        } else {
            b.counters.failure.inc();
            "failure"
        };
        self.state
            .metrics()
            .answer_seconds
            .observe(total.as_secs_f64());
        self.state.metrics().added_latency_seconds.observe(
            total
                .saturating_sub(upstream)
                .saturating_sub(injected)
                .as_secs_f64(),
        );
        Relayed {
            body,
            header_len,
            upstream,
            outcome,
            variant: b.variant.clone(),
            cluster: b.cluster.clone(),
        }
    }

    /// Re-sends query `q` to `b` (retry-on-reset) with `remaining_ms` left for the worker:
    /// the network to it (injected in sim-to-live mode), no radio uplink again.
    async fn resend(
        &self,
        stream: &Stream,
        q: &Outgoing<'_>,
        b: &Binding,
        remaining_ms: f64,
        inject: bool,
    ) -> Result<Answered, UpstreamError> {
        let Ok(_permit) = b.upstream.permits.try_acquire() else {
            return Err(UpstreamError::Rejected(
                "the retry's worker has as many queries in flight as allowed".into(),
            ));
        };
        if inject {
            sleep_ms(self.net_sample(stream, b)).await;
        }
        let deadline_us = (remaining_ms * 1e3).clamp(1.0, f64::from(u32::MAX)) as u32;
        // A worker whose protocol needs the tensor parsed parses it there if the first did not.
        self.call(q, b, deadline_us).await
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
    /// stream (docs/model.md §7).
    pub(super) fn net_sample(&self, stream: &Stream, b: &Binding) -> f64 {
        match Normal::new(b.d_ms, b.sigma_ms) {
            Ok(n) => stream.with_rng(|rng| n.sample(rng).max(0.0)),
            Err(_) => b.d_ms.max(0.0),
        }
    }
}
