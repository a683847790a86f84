//! The QUIC front end (quinn): one bidirectional stream per query, framed as in
//! [`super::frame`]. A malformed or refused request gets an error frame on its own stream; the
//! connection and its other streams go on.

use super::Inner;
use super::config::QuicConfig;
use super::frame::{self, Request, Response};
use super::tls;
use super::variant::{InferRequest, QueryError};
use anyhow::{Context, Result};
use quinn::{Endpoint, RecvStream, SendStream};
use rustls::pki_types::CertificateDer;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// Binds a QUIC server endpoint as `cfg` says: its PEM certificate and key, or a generated
/// development certificate (written to `dev_cert_out` when set). Returns the endpoint and the
/// leaf certificate it presents. The worker and the gateway's QUIC front end share it.
pub fn bind(cfg: &QuicConfig) -> Result<(Endpoint, CertificateDer<'static>)> {
    let material = match (&cfg.cert, &cfg.key) {
        (Some(c), Some(k)) => tls::TlsMaterial::from_pem(c, k)?,
        _ => tls::TlsMaterial::self_signed()?,
    };
    let certificate = material.chain[0].clone();
    if let Some(p) = &cfg.dev_cert_out {
        std::fs::write(p, certificate.as_ref())
            .with_context(|| format!("cannot write {}", p.display()))?;
    }
    let endpoint = tls::endpoint(cfg.listen, Some(material.server_config()?))
        .with_context(|| format!("cannot bind QUIC on {}", cfg.listen))?;
    Ok((endpoint, certificate))
}

/// Accepts connections until `stop` turns true.
pub async fn serve(endpoint: Endpoint, inner: Arc<Inner>, stop: watch::Receiver<bool>) {
    let streams = stop.clone();
    accept(endpoint, stop, move |send, recv| {
        stream(send, recv, inner.clone(), streams.clone())
    })
    .await
}

/// Accepts connections until `stop` turns true and runs `on_stream` on its own task for every
/// bidirectional stream a peer opens (the worker's and the gateway's QUIC front ends).
pub(crate) async fn accept<F, Fut>(
    endpoint: Endpoint,
    mut stop: watch::Receiver<bool>,
    on_stream: F,
) where
    F: Fn(SendStream, RecvStream) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    loop {
        let incoming = tokio::select! {
            i = endpoint.accept() => match i {
                Some(i) => i,
                None => break,
            },
            _ = stop.changed() => break,
        };
        let on_stream = on_stream.clone();
        tokio::spawn(async move {
            let conn = match incoming.await {
                Ok(c) => c,
                Err(e) => {
                    tracing::debug!(error = %e, "QUIC handshake failed");
                    return;
                }
            };
            while let Ok((send, recv)) = conn.accept_bi().await {
                tokio::spawn(on_stream(send, recv));
            }
        });
    }
}

/// Writes `r` on `send`, finishes the stream and lets the peer read it before it is dropped.
pub(crate) async fn reply(send: SendStream, r: &Response) {
    reply_bytes(send, &frame::encode_response(r)).await
}

/// As [`reply`], with the frame already encoded.
pub(crate) async fn reply_bytes(mut send: SendStream, frame: &[u8]) {
    let _ = send.write_all(frame).await;
    let _ = send.finish();
    // Let the peer read the frame before the stream is dropped.
    let _ = tokio::time::timeout(Duration::from_secs(5), send.stopped()).await;
}

fn error_frame(e: &QueryError) -> Response {
    Response::Error {
        status: frame::status_of(e),
        message: e.to_string(),
    }
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

/// The period of a subscription asking for `asked_ms` (0: the worker's `default_ms`), never
/// below `floor_ms`: a client asking for 1 ms would otherwise get ~1 000 reports a second.
pub fn report_period(asked_ms: u32, default_ms: u64, floor_ms: u64) -> Duration {
    let ms = if asked_ms == 0 {
        default_ms
    } else {
        u64::from(asked_ms)
    };
    Duration::from_millis(ms.max(floor_ms).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_periods_have_a_floor() {
        assert_eq!(report_period(1, 100, 20), Duration::from_millis(20));
        assert_eq!(report_period(0, 100, 20), Duration::from_millis(100));
        assert_eq!(report_period(250, 100, 20), Duration::from_millis(250));
        assert_eq!(report_period(0, 0, 0), Duration::from_millis(1));
    }
}
