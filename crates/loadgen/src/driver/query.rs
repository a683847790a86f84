//! One query of a stream: sent to the gateway holding the stream (again to the next one when
//! that gateway does not answer, while the deadline allows) or over QUIC, and judged once.

use super::{RunState, send};
use crate::answer::Answer;
use crate::body::{HEADER_LEN, InferBody};
use crate::fleet::{Move, Route};
use crate::quic;
use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Uri};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// How a query is judged: its app, deadline and the radio delay added to its latency.
#[derive(Debug, Clone, Copy)]
pub(super) struct Judge {
    pub(super) app: u16,
    pub(super) max_delay_ms: f64,
    pub(super) extra_ms: f64,
}

/// The infer request of stream `id` at gateway `base`.
fn infer_request(base: &str, id: &str, body: &InferBody) -> Request<Full<Bytes>> {
    let uri: Uri = format!("{base}/v1/streams/{id}/infer")
        .parse()
        .expect("valid URI");
    let mut r = Request::builder()
        .method(Method::POST)
        .uri(uri)
        .header(CONTENT_TYPE, HeaderValue::from_static(body.content_type));
    if let Some(n) = body.header_len {
        r = r.header(HEADER_LEN, HeaderValue::from(n));
    }
    r.body(Full::new(body.bytes.clone()))
        .expect("valid request")
}

/// One query: send to the gateway holding its stream, read the whole answer, judge it. When
/// that gateway does not answer at all, the stream moves to the next one ([`Route`]) and the
/// query is sent again there while its deadline allows; it is judged once, on the last answer,
/// with its latency from the first send.
pub(super) async fn query(
    ctx: Arc<RunState>,
    route: Arc<Route>,
    id: Arc<str>,
    body: InferBody,
    j: Judge,
) {
    let sent = Instant::now();
    let mut tried = 0;
    let mut first_failure = None;
    loop {
        let g = route.current();
        let req = infer_request(&ctx.opts.gateways[g], &id, &body);
        let a = send(&ctx.client, req, ctx.opts.timeout).await;
        tried += 1;
        if !matches!(a, Answer::Transport(_)) {
            let mut rec = ctx.rec();
            rec.answered_at(g);
            if g == route.current() {
                if let Some(d) = route.answered(Instant::now()) {
                    rec.failover(d.as_micros() as u64);
                }
            }
        } else if ctx.opts.gateways.len() > 1 {
            let now = Instant::now();
            let since = *first_failure.get_or_insert(now);
            let (m, handover) = route.failed(g, tried, since);
            let mut rec = ctx.rec();
            rec.unreachable_at(g);
            match m {
                Move::To(next) => {
                    if handover {
                        rec.handover_to(next);
                    }
                    let spent_ms = sent.elapsed().as_secs_f64() * 1e3 + j.extra_ms;
                    if spent_ms < j.max_delay_ms {
                        rec.resent();
                        continue;
                    }
                }
                Move::Lost(first) => {
                    if first {
                        rec.stream_lost();
                    }
                }
            }
        }
        record(&ctx, &a, sent.elapsed(), j);
        return;
    }
}

/// One query over QUIC: the frame's head and tensor bytes on a new stream of the connection.
pub(super) async fn quic_query(ctx: Arc<RunState>, head: Bytes, data: Bytes, judge: Judge) {
    let (client, _) = ctx.quic.as_ref().expect("a QUIC connection");
    let sent = Instant::now();
    let a = quic::send(client, head, data, ctx.opts.timeout).await;
    record(&ctx, &a, sent.elapsed(), judge);
}

/// Counts one query's answer and judges its latency.
fn record(ctx: &RunState, a: &Answer, latency: Duration, j: Judge) {
    let latency_ms = latency.as_secs_f64() * 1000.0;
    let (status, outcome) = match a {
        Answer::Response {
            status, outcome, ..
        } => (Some(*status), *outcome),
        _ => (None, None),
    };
    let label = match a {
        Answer::Timeout => "timeout",
        _ => "transport",
    };
    let mut rec = ctx.rec();
    rec.query(
        j.app,
        status,
        label,
        latency.as_micros() as u64,
        latency_ms + j.extra_ms,
        j.max_delay_ms,
        outcome,
    );
    // Refusals, worker failures and timeouts are expected outcomes (counted by status);
    // anything else (404: the gateway closed the stream, 400, a broken connection) is kept.
    let expected = match a {
        Answer::Response { status, .. } => matches!(status, 200 | 429 | 502 | 503 | 504),
        Answer::Timeout => true,
        Answer::Transport(_) => false,
    };
    if !expected {
        rec.error(format!("infer: {}", a.describe()));
    }
}
