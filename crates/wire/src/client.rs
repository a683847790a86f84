//! A small QUIC client for workers: inference on one stream per query and load-report
//! subscriptions. Used by the tests and benchmarks, and meant for the gateway.

use crate::frame::{self, InferFrame, Response};
use crate::load_report::LoadReport;
use crate::tls;
use anyhow::{Context, Result, bail};
use bytes::Bytes;
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
        Self::connect_with(addr, trusted, None).await
    }

    /// As [`QuicClient::connect`]; with `idle`, the connection is declared dead after that
    /// long without hearing from the worker (keep-alives every quarter of it keep a healthy
    /// idle connection open), so a stalled or killed worker is detected.
    pub async fn connect_with(
        addr: SocketAddr,
        trusted: &[CertificateDer<'static>],
        idle: Option<std::time::Duration>,
    ) -> Result<Self> {
        Self::connect_to(addr, "localhost", trusted, idle).await
    }

    /// As [`QuicClient::connect_with`], checking the server's certificate for `server_name`
    /// (a DNS name or an IP address); from a loopback address when `addr` is one, else from
    /// any local address.
    pub async fn connect_to(
        addr: SocketAddr,
        server_name: &str,
        trusted: &[CertificateDer<'static>],
        idle: Option<std::time::Duration>,
    ) -> Result<Self> {
        let ip: std::net::IpAddr = match (addr.is_ipv4(), addr.ip().is_loopback()) {
            (true, true) => std::net::Ipv4Addr::LOCALHOST.into(),
            (true, false) => std::net::Ipv4Addr::UNSPECIFIED.into(),
            (false, true) => std::net::Ipv6Addr::LOCALHOST.into(),
            (false, false) => std::net::Ipv6Addr::UNSPECIFIED.into(),
        };
        let bind = SocketAddr::new(ip, 0);
        let mut endpoint = tls::endpoint(bind, None)?;
        let mut client = tls::client_config(trusted)?;
        if let Some(idle) = idle {
            let mut t = tls::transport();
            t.max_idle_timeout(Some(
                quinn::IdleTimeout::try_from(idle).context("idle timeout out of range")?,
            ));
            t.keep_alive_interval(Some(idle / 4));
            client.transport_config(std::sync::Arc::new(t));
        }
        endpoint.set_default_client_config(client);
        let conn = endpoint
            .connect(addr, server_name)?
            .await
            .with_context(|| format!("QUIC handshake with {addr} failed"))?;
        Ok(Self { endpoint, conn })
    }

    /// Sends an INFER request and waits for its response frame.
    pub async fn infer(&self, f: &InferFrame) -> Result<Response> {
        self.exchange(&mut [Bytes::from(frame::encode_infer(f))])
            .await
    }

    /// Sends an INFER request given as its head ([`frame::encode_infer_head`]) and its tensor
    /// data, without copying either, and waits for its response frame.
    pub async fn infer_parts(&self, head: Bytes, data: Bytes) -> Result<Response> {
        self.exchange(&mut [head, data]).await
    }

    /// Sends arbitrary request bytes on a new stream and decodes the response frame (for
    /// testing the worker's handling of malformed frames).
    pub async fn send_raw(&self, bytes: &[u8]) -> Result<Response> {
        self.exchange(&mut [Bytes::copy_from_slice(bytes)]).await
    }

    /// One query: `chunks` on a new stream, then its response frame.
    async fn exchange(&self, chunks: &mut [Bytes]) -> Result<Response> {
        let (mut send, mut recv) = self.conn.open_bi().await.context("cannot open a stream")?;
        send.write_all_chunks(chunks)
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

    /// The connection's current smoothed round-trip time estimate.
    pub fn rtt(&self) -> std::time::Duration {
        self.conn.rtt()
    }

    /// The largest UDP payload the connection sends now (after MTU discovery).
    pub fn mtu(&self) -> u16 {
        self.conn.stats().path.current_mtu
    }

    /// The connection's transport counters (lost packets, congestion events and window,
    /// flow-control blocking frames), as quinn keeps them.
    pub fn stats(&self) -> quinn::ConnectionStats {
        self.conn.stats()
    }

    /// Whether the connection has ended (closed, timed out or lost).
    pub fn is_closed(&self) -> bool {
        self.conn.close_reason().is_some()
    }

    /// Waits until the connection ends; returns why.
    pub async fn closed(&self) -> quinn::ConnectionError {
        self.conn.closed().await
    }

    /// Closes the connection without waiting for the worker to acknowledge.
    pub fn close_now(&self) {
        self.conn.close(0u32.into(), b"closed");
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
