//! QUIC endpoints (quinn) shared by every server: binding with a certificate, the accept loop
//! (one task per bidirectional stream, one query per stream, framed as in [`crate::frame`]),
//! replies and error frames.

use crate::endpoint::QuicConfig;
use crate::frame::{self, Response};
use crate::query::QueryError;
use crate::tls;
use anyhow::{Context, Result};
use quinn::{Endpoint, RecvStream, SendStream};
use rustls::pki_types::CertificateDer;
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
        if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        std::fs::write(p, certificate.as_ref())
            .with_context(|| format!("cannot write {}", p.display()))?;
    }
    let endpoint = tls::endpoint(cfg.listen, Some(material.server_config()?))
        .with_context(|| format!("cannot bind QUIC on {}", cfg.listen))?;
    Ok((endpoint, certificate))
}

/// Accepts connections until `stop` turns true and runs `on_stream` on its own task for every
/// bidirectional stream a peer opens (the worker's and the gateway's QUIC front ends).
pub async fn accept<F, Fut>(endpoint: Endpoint, mut stop: watch::Receiver<bool>, on_stream: F)
where
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

/// The error frame of a query error.
pub fn error_frame(e: &QueryError) -> Response {
    Response::Error {
        status: frame::status_of(e),
        message: e.to_string(),
    }
}

/// Writes `r` on `send`, finishes the stream and lets the peer read it before it is dropped.
pub async fn reply(send: SendStream, r: &Response) {
    reply_bytes(send, &frame::encode_response(r)).await
}

/// As [`reply`], with the frame already encoded.
pub async fn reply_bytes(mut send: SendStream, frame: &[u8]) {
    let _ = send.write_all(frame).await;
    let _ = send.finish();
    // Let the peer read the frame before the stream is dropped.
    let _ = tokio::time::timeout(Duration::from_secs(5), send.stopped()).await;
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
