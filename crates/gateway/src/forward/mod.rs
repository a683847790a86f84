//! The forward layer: one query of a bound stream on its way to a worker and back — the relay
//! ([`relay`]: the query and its answer in transit, the times its mitigation acts at), the
//! worker call and its hedge under `reissue@r` ([`hedge`]), retry-on-reset ([`retry`]) within
//! its budget (`crate::state::retry_budget`), and the query's deadline. This module judges
//! each query's outcome: every query that reaches here is counted once as success, failure or
//! rejected.

pub(crate) mod hedge;
pub(crate) mod relay;
pub(crate) mod retry;

use crate::decide::Decider;
use crate::error::ApiError;
use crate::forward::relay::{
    Answered, Outgoing, Relayed, Wire, age_at_receipt_ms, query_times, sleep_ms,
};
use crate::plan::TaskSpec;
use crate::state::streams::{Binding, Stream};
use crate::state::{GatewayState, res};
use crate::upstream::{Link, UpstreamError};
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
        r: Result<ParsedInfer, continuum_wire::query::QueryError>,
    ) -> Result<ParsedInfer, ApiError> {
        r.map_err(|e| {
            self.state
                .metrics
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
            .unwrap_or(stream.req.items.unwrap_or(1) as usize);
        let r = self.forward_once(stream, parsed, body, wire, t0).await;
        let stats = self.state.task_stats(&stream.req.task);
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
        self.state.meta.count_query(stream.bucket);
        let reject = |e: ApiError, b: Option<&Binding>| {
            match b {
                Some(b) => {
                    b.counters.rejected.inc();
                }
                None => self.state.metrics.query("rejected", &stream.app, "-", "-"),
            }
            e
        };
        let b = match self.decide().current_binding(&snap, stream) {
            Ok(b) => b,
            Err(e) => return Err(reject(e, None)),
        };
        let upstream = b.upstream.clone();
        let Ok(_permit) = upstream.permits.try_acquire() else {
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
        // Timed from the query's emission (its declared uplink before the receipt at `t0`):
        // under `discard@r` the worker's admission gets emission + r × the deadline, so it
        // drops what cannot answer by then (counted as rejected, and as discarded); under
        // `reissue@r` the hedge fires at emission + r × the deadline.
        let mitigation = self.state.mitigation_for(&b.class);
        let age_ms = age_at_receipt_ms(inject, stream.access_ms, stream.req.tx_ms.unwrap_or(0.0));
        let times = query_times(&mitigation, stream.req.max_delay_ms, age_ms);
        let worker_deadline_ms = times.answer_limit_ms - t0.elapsed().as_secs_f64() * 1e3 - down_ms;
        let deadline_us = (worker_deadline_ms * 1e3).clamp(1.0, f64::from(u32::MAX)) as u32;
        let task = snap.plan.task(&stream.req.task);
        // HTTP upstreams get the body as it came; QUIC needs the tensor's shape, and its data
        // as it lies in the body when it came in binary form (relayed without a copy). A hedge
        // may go to either, so it has both.
        let quic = matches!(b.upstream.link, Link::Quic(_));
        let parsed = match (task, parsed, wire) {
            (Some(task), None, Wire::Oip(header_len)) if quic || mitigation.reissues() => {
                Some(self.parse_with(oip::parse_infer_relay(&body, header_len, task))?)
            }
            (_, p, _) => p,
        };
        let out = Outgoing {
            stream,
            task,
            parsed: parsed.as_ref(),
            body: &body,
            wire,
        };
        let t_up = Instant::now();
        let (mut result, hedge) = match times.reissue_at_ms {
            Some(_) => {
                self.hedged(&snap, &out, &b, t0, times, down_ms, deadline_us)
                    .await
            }
            None => (self.call(&out, &b, deadline_us).await, None),
        };
        let hedged = hedge.is_some();
        // The binding that answered (or failed last): the copy's when it did, and then the way
        // back is from its worker.
        let mut down_ms = match &hedge {
            Some(h) if inject => stream.access_ms + self.net_sample(stream, h),
            _ => down_ms,
        };
        let mut b = hedge.unwrap_or(b);
        // Retry-on-reset: the worker died or reset under the query; once, to the stream's next
        // feasible binding, if the deadline and the retry budget allow ([`crate::forward::retry`]).
        if let (Err(e), false) = (&result, hedged) {
            let remaining_ms = times.answer_limit_ms - t0.elapsed().as_secs_f64() * 1e3 - down_ms;
            if let Some(b2) = self.retry_target(stream, &b, e, remaining_ms) {
                result = self.resend(&out, &b2, remaining_ms, inject).await;
                if result.is_ok() {
                    self.state.metrics.retry("answered");
                }
                if inject {
                    down_ms = stream.access_ms + self.net_sample(stream, &b2);
                }
                b = b2;
            }
        }
        let upstream_time = t_up.elapsed();
        let (body, header_len) = match result {
            Ok(x) => x,
            Err(UpstreamError::BadRequest(m)) => {
                // An invalid request, not a query: counted apart, as the gateway's own 400s.
                self.state
                    .metrics
                    .bad_requests
                    .get_or_create(&res("malformed"))
                    .inc();
                return Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    format!("worker `{}` refused the input: {m}", b.upstream.cfg.name),
                ));
            }
            Err(e) => {
                if mitigation.discards() && matches!(e, UpstreamError::Rejected(_)) {
                    self.state.metrics.mitigation("discarded");
                }
                return Err(reject(self.upstream_failed(&b, e), Some(&b)));
            }
        };
        if inject {
            injected += sleep_ms(down_ms).await;
        }
        let total = t0.elapsed();
        let outcome = if total.as_secs_f64() * 1e3 <= stream.req.max_delay_ms {
            b.counters.success.inc();
            "success"
        } else {
            b.counters.failure.inc();
            "failure"
        };
        self.state
            .metrics
            .answer_seconds
            .observe(total.as_secs_f64());
        self.state.metrics.added_latency_seconds.observe(
            total
                .saturating_sub(upstream_time)
                .saturating_sub(injected)
                .as_secs_f64(),
        );
        Ok(Relayed {
            body,
            header_len,
            upstream: upstream_time,
            outcome,
            variant: b.variant.clone(),
            cluster: b.cluster.clone(),
        })
    }

    /// Re-sends query `q` to `b` (retry-on-reset) with `remaining_ms` left for the worker:
    /// the network to it (injected in sim-to-live mode), no radio uplink again.
    async fn resend(
        &self,
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
        // A QUIC worker needs the tensor's shape: parsed now if the first worker did not.
        let reparsed;
        let parsed = match (q.parsed, q.task, q.wire) {
            (None, Some(task), Wire::Oip(header_len))
                if matches!(b.upstream.link, Link::Quic(_)) =>
            {
                reparsed = oip::parse_infer_relay(q.body, header_len, task)
                    .map_err(|e| UpstreamError::BadRequest(e.to_string()))?;
                Some(&reparsed)
            }
            (p, _, _) => p,
        };
        let out = Outgoing { parsed, ..*q };
        if inject {
            sleep_ms(self.net_sample(q.stream, b)).await;
        }
        let deadline_us = (remaining_ms * 1e3).clamp(1.0, f64::from(u32::MAX)) as u32;
        self.call(&out, b, deadline_us).await
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
        let mut rng = stream.rng.lock().expect("stream rng lock");
        match Normal::new(b.d_ms, b.sigma_ms) {
            Ok(n) => n.sample(&mut *rng).max(0.0),
            Err(_) => b.d_ms.max(0.0),
        }
    }
}
