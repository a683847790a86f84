//! A small QUIC client for workers: inference on one stream per query and load-report
//! subscriptions. Used by the tests and benchmarks, and meant for the gateway.

use super::frame::{self, InferFrame, Response};
use super::load::LoadReport;
use super::tls;
use anyhow::{Context, Result, bail};
use quinn::{Connection, Endpoint, RecvStream};
use rustls::pki_types::CertificateDer;
use std::net::SocketAddr;

/// Largest response frame read. assumption: 64 MiB, far above any output of the models here.
const MAX_RESPONSE: usize = 64 << 20;
/// Largest load report read. assumption: 1 MiB holds thousands of variants.
const MAX_REPORT: usize = 1 << 20;

/// One QUIC connection to a worker.
#[derive(Debug, Clone)]
pub struct QuicClient {
    endpoint: Endpoint,
    conn: Connection,
}

impl QuicClient {
    /// Connects from 127.0.0.1 to `addr`, trusting exactly the `trusted` certificates; the
    /// server name checked is `localhost`.
    pub async fn connect(addr: SocketAddr, trusted: &[CertificateDer<'static>]) -> Result<Self> {
        let bind = if addr.is_ipv4() {
            SocketAddr::from(([127, 0, 0, 1], 0))
        } else {
            SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, 0))
        };
        let mut endpoint = Endpoint::client(bind).context("cannot open a QUIC socket")?;
        endpoint.set_default_client_config(tls::client_config(trusted)?);
        let conn = endpoint
            .connect(addr, "localhost")?
            .await
            .with_context(|| format!("QUIC handshake with {addr} failed"))?;
        Ok(Self { endpoint, conn })
    }

    /// Sends an INFER request and waits for its response frame.
    pub async fn infer(&self, f: &InferFrame) -> Result<Response> {
        self.send_raw(&frame::encode_infer(f)).await
    }

    /// Sends arbitrary request bytes on a new stream and decodes the response frame (for
    /// testing the worker's handling of malformed frames).
    pub async fn send_raw(&self, bytes: &[u8]) -> Result<Response> {
        let (mut send, mut recv) = self.conn.open_bi().await.context("cannot open a stream")?;
        send.write_all(bytes)
            .await
            .context("cannot send the request")?;
        send.finish().context("cannot finish the request")?;
        let buf = recv
            .read_to_end(MAX_RESPONSE)
            .await
            .context("cannot read the response")?;
        frame::decode_response(&buf).map_err(anyhow::Error::msg)
    }

    /// Subscribes to load reports every `period_ms` (0: the worker's default period).
    pub async fn subscribe(&self, period_ms: u32) -> Result<Reports> {
        let (mut send, recv) = self.conn.open_bi().await.context("cannot open a stream")?;
        send.write_all(&frame::encode_subscribe(period_ms)).await?;
        send.finish()?;
        Ok(Reports { recv })
    }

    /// Closes the connection.
    pub async fn close(self) {
        self.conn.close(0u32.into(), b"bye");
        self.endpoint.wait_idle().await;
    }
}

/// The load reports of one subscription.
#[derive(Debug)]
pub struct Reports {
    recv: RecvStream,
}

impl Reports {
    /// The next report; `None` when the worker ended the subscription.
    pub async fn next(&mut self) -> Result<Option<LoadReport>> {
        let mut len = [0u8; 4];
        match self.recv.read_exact(&mut len).await {
            Ok(()) => {}
            Err(quinn::ReadExactError::FinishedEarly(0)) => return Ok(None),
            Err(e) => bail!("load report stream failed: {e}"),
        }
        let n = u32::from_le_bytes(len) as usize;
        if n > MAX_REPORT {
            bail!("load report of {n} bytes is over the limit of {MAX_REPORT}");
        }
        let mut buf = vec![0u8; n];
        self.recv
            .read_exact(&mut buf)
            .await
            .context("truncated load report")?;
        Ok(Some(
            serde_json::from_slice(&buf).context("invalid load report")?,
        ))
    }
}
