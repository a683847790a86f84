//! The worker's QUIC front end: one bidirectional stream per query, framed as in
//! [`continuum_wire::frame`]. A malformed or refused request gets an error frame on its own
//! stream; the connection and its other streams go on. SUBSCRIBE streams carry load reports.

use super::Inner;
use continuum_wire::frame::{self, Request, Response};
use continuum_wire::quic::{accept, error_frame, reply, report_period};
use continuum_wire::{InferRequest, QueryError};
use quinn::{Endpoint, RecvStream, SendStream};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// Accepts connections until `stop` turns true.
pub async fn serve(endpoint: Endpoint, inner: Arc<Inner>, stop: watch::Receiver<bool>) {
    let streams = stop.clone();
    accept(endpoint, stop, move |send, recv| {
        stream(send, recv, inner.clone(), streams.clone())
    })
    .await
}

async fn stream(
    send: SendStream,
    mut recv: RecvStream,
    inner: Arc<Inner>,
    stop: watch::Receiver<bool>,
) {
    // Counted in flight until the answer is delivered, so that shutdown waits for it.
    let _guard = inner.in_flight();
    let limit = inner.cfg.quic.max_frame_bytes;
    let buf = match recv.read_to_end(limit).await {
        Ok(b) => b,
        Err(quinn::ReadToEndError::TooLong) => {
            let _ = recv.stop(0u32.into());
            let e = QueryError::TooLarge(format!("request frame over the limit of {limit} bytes"));
            return reply(send, &error_frame(&e)).await;
        }
        Err(e) => {
            tracing::debug!(error = %e, "QUIC stream read failed");
            return;
        }
    };
    match frame::decode_request(&buf) {
        Err(msg) => {
            let e = QueryError::BadInput(format!("malformed frame: {msg}"));
            reply(send, &error_frame(&e)).await
        }
        Ok(Request::Infer(f)) => {
            let req = InferRequest {
                shape: f.input.shape,
                data: f.input.data,
                deadline: (f.deadline_us > 0)
                    .then(|| Duration::from_micros(u64::from(f.deadline_us))),
                stream: (f.stream_id > 0).then_some(f.stream_id),
            };
            // A requester that stops the stream (a gateway whose hedge was answered
            // elsewhere) withdraws the query: dropping it here leaves it out of its batch.
            let answer = tokio::select! {
                a = inner.infer(&f.model, req) => a,
                _ = send.stopped() => return,
            };
            let r = match answer {
                Ok(a) => Response::from(a),
                Err(e) => error_frame(&e),
            };
            reply(send, &r).await
        }
        Ok(Request::Subscribe { period_ms }) => {
            drop(_guard);
            subscribe(send, inner.clone(), stop, period_ms).await
        }
    }
}

async fn subscribe(
    mut send: SendStream,
    inner: Arc<Inner>,
    mut stop: watch::Receiver<bool>,
    period_ms: u32,
) {
    let period = report_period(
        period_ms,
        inner.cfg.load_report_ms,
        inner.cfg.quic.min_report_ms,
    );
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.changed() => break,
        }
        let json = serde_json::to_vec(&inner.report()).expect("reports serialise");
        let mut msg = (json.len() as u32).to_le_bytes().to_vec();
        msg.extend_from_slice(&json);
        if send.write_all(&msg).await.is_err() {
            return;
        }
    }
    let _ = send.finish();
}
