//! The QUIC client endpoint (`quic:` in the gateway's configuration): a stream's queries in the
//! workers' framing ([`continuum_wire::frame`]), one bidirectional QUIC stream per query, so
//! that a client at the antenna speaks QUIC end to end.
//!
//! A client opens its stream over HTTP (`POST /v1/streams`) and then sends INFER frames whose
//! name field is the stream id it got; the gateway forwards each one to the stream's binding
//! like an HTTP query (same policy, admission, mitigation, outcome and metrics) and answers
//! with the worker's response frame. The tensor's bytes are relayed as they came to QUIC
//! workers, and wrapped in an OIP body for HTTP workers. The frame's stream id and deadline
//! fields are the gateway's to set towards the worker (the stream's latency bound gives the
//! deadline); what a client puts there is not read. Errors are error frames: `NOT_FOUND` for an
//! unknown or closed stream, `BAD_REQUEST` for a malformed frame (or a SUBSCRIBE: load reports
//! are the workers'), `TOO_LARGE` past `quic.max_frame_bytes`, `REJECTED` for what HTTP answers
//! with 429, `UNAVAILABLE` for 502/503/504, `INTERNAL` otherwise; the message is the one an HTTP
//! client would get. A client that stops its stream withdraws the query, as a dropped HTTP
//! request does.

use crate::control::ControlPlane;
use crate::error::ApiError;
use crate::forward::Forwarder;
use crate::forward::relay::Wire;
use crate::state::res;
use bytes::Bytes;
use continuum_wire::frame::{self, Response};
use continuum_wire::oip::ParsedInfer;
use continuum_wire::quic::{accept, reply, reply_bytes};
use hyper::StatusCode;
use quinn::{Endpoint, RecvStream, SendStream};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::watch;
use tracing::Instrument;

/// Accepts connections until `stop` turns true.
pub(crate) async fn serve(
    endpoint: Endpoint,
    ctx: Arc<ControlPlane>,
    limit: usize,
    stop: watch::Receiver<bool>,
) {
    accept(endpoint, stop, move |send, recv| {
        query(send, recv, ctx.clone(), limit)
    })
    .await
}

/// The error frame of an answer HTTP clients would get as `e`.
pub(crate) fn error_frame(e: &ApiError) -> Response {
    let status = match e.status {
        StatusCode::TOO_MANY_REQUESTS => frame::STATUS_REJECTED,
        StatusCode::BAD_REQUEST => frame::STATUS_BAD_REQUEST,
        StatusCode::NOT_FOUND => 3,
        StatusCode::PAYLOAD_TOO_LARGE => 4,
        StatusCode::BAD_GATEWAY | StatusCode::SERVICE_UNAVAILABLE | StatusCode::GATEWAY_TIMEOUT => {
            6
        }
        _ => 5,
    };
    let message = match e.body["error"].as_str() {
        Some(m) => m.to_string(),
        None => e.body.to_string(),
    };
    Response::Error { status, message }
}

async fn query(send: SendStream, mut recv: RecvStream, ctx: Arc<ControlPlane>, limit: usize) {
    let t0 = Instant::now();
    let buf = match recv.read_to_end(limit).await {
        Ok(b) => Bytes::from(b),
        Err(quinn::ReadToEndError::TooLong) => {
            let _ = recv.stop(0u32.into());
            let e = ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("request frame over the limit of {limit} bytes"),
            );
            return reply(send, &error_frame(&e)).await;
        }
        Err(e) => {
            tracing::debug!(error = %e, "QUIC stream read failed");
            return;
        }
    };
    // A requester that stops the stream withdraws the query (dropped here, as hyper drops
    // the handler of a closed HTTP request).
    let answer = tokio::select! {
        a = answer(&ctx, buf, t0) => a,
        _ = send.stopped() => return,
    };
    match answer {
        Ok(bytes) => reply_bytes(send, &bytes).await,
        Err(e) => reply(send, &error_frame(&e)).await,
    }
}

/// Forwards one INFER frame to its stream's binding; the answer is a response frame.
async fn answer(ctx: &ControlPlane, buf: Bytes, t0: Instant) -> Result<Bytes, ApiError> {
    let head = frame::decode_infer_head(&buf).map_err(|m| {
        ctx.state
            .metrics()
            .bad_requests
            .get_or_create(&res("malformed"))
            .inc();
        ApiError::new(StatusCode::BAD_REQUEST, format!("malformed frame: {m}"))
    })?;
    let stream = ctx.stream_of(&head.name)?;
    let parsed = ParsedInfer {
        id: None,
        shape: head.shape,
        data: Vec::new(),
        raw: Some(head.data),
        deadline: None,
        stream: None,
        binary_output: true,
        parameters: serde_json::Map::new(),
    };
    let span = tracing::debug_span!("query", stream = stream.id());
    let r = Forwarder::new(&ctx.state)
        .forward(&stream, Some(parsed), buf, Wire::Frame, t0)
        .instrument(span)
        .await?;
    Ok(r.body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_statuses_map_to_frame_statuses() {
        let cases = [
            (StatusCode::TOO_MANY_REQUESTS, 1),
            (StatusCode::BAD_REQUEST, 2),
            (StatusCode::NOT_FOUND, 3),
            (StatusCode::PAYLOAD_TOO_LARGE, 4),
            (StatusCode::INTERNAL_SERVER_ERROR, 5),
            (StatusCode::BAD_GATEWAY, 6),
            (StatusCode::SERVICE_UNAVAILABLE, 6),
            (StatusCode::GATEWAY_TIMEOUT, 6),
        ];
        for (http, code) in cases {
            let Response::Error { status, message } = error_frame(&ApiError::new(http, "why"))
            else {
                panic!("an error frame");
            };
            assert_eq!((status, &*message), (code, "why"), "{http}");
        }
    }
}
