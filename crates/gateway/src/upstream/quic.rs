//! The QUIC upstream to a continuum worker: one connection per worker, multiplexed (one
//! stream per query), kept alive and re-established by a maintenance task that also reads the
//! worker's load reports and samples quinn's RTT estimate.

use super::loads::LiveLoads;
use super::{Upstream, UpstreamError};
use crate::config::UpstreamConfig;
use anyhow::{Context, Result};
use bytes::Bytes;
use continuum_wire::QuicClient;
use continuum_wire::Tensor;
use continuum_wire::frame::Response;
use rustls::pki_types::CertificateDer;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::watch;

/// Idle timeout of a worker connection: silence for this long means the worker is dead or
/// stalled. assumption: 2 s, 20 load-report periods at the docs/model.md §8 default of 100 ms.
pub(crate) const IDLE_TIMEOUT: Duration = Duration::from_secs(2);
/// First and longest wait between reconnection attempts. assumption: 100 ms doubling to 2 s.
const BACKOFF: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(2));

/// A successful inference over QUIC.
#[derive(Debug, Clone)]
pub(crate) struct QuicAnswer {
    /// The output rows.
    pub(crate) output: Tensor,
    /// Queue wait at the worker, µs.
    pub(crate) queue_us: u32,
    /// Batch compute time, µs.
    pub(crate) compute_us: u32,
    /// Items in the batch.
    pub(crate) batch_items: u16,
}

/// The connection state of one QUIC worker.
pub(crate) struct QuicLink {
    addr: SocketAddr,
    cert: Option<PathBuf>,
    client: RwLock<Option<QuicClient>>,
    timeout: Duration,
}

impl QuicLink {
    /// A link to the worker of `cfg` (not connected yet).
    pub(crate) fn new(cfg: &UpstreamConfig, timeout: Duration) -> Result<Self> {
        let addr = cfg.address.parse().with_context(|| {
            format!("worker `{}`: bad QUIC address `{}`", cfg.name, cfg.address)
        })?;
        Ok(Self {
            addr,
            cert: cfg.cert.clone(),
            client: RwLock::new(None),
            timeout,
        })
    }

    /// Connects (reading the trusted certificate now: a worker writes its development
    /// certificate when it starts, possibly after the gateway).
    async fn connect(&self) -> Result<QuicClient> {
        let trusted = match &self.cert {
            Some(p) => vec![CertificateDer::from(
                std::fs::read(p)
                    .with_context(|| format!("cannot read certificate {}", p.display()))?,
            )],
            None => Vec::new(),
        };
        tokio::time::timeout(
            self.timeout,
            QuicClient::connect_with(self.addr, &trusted, Some(IDLE_TIMEOUT)),
        )
        .await
        .map_err(|_| anyhow::anyhow!("QUIC handshake with {} timed out", self.addr))?
    }

    fn current(&self) -> Option<QuicClient> {
        self.client.read().expect("link lock").clone()
    }

    /// The current connection's transport counters, if connected.
    pub(crate) fn stats(&self) -> Option<quinn::ConnectionStats> {
        self.current().map(|c| c.stats())
    }

    /// Closes the current connection, if any (the maintenance task reconnects).
    pub(crate) fn drop_connection(&self) {
        if let Some(c) = self.client.write().expect("link lock").take() {
            c.close_now();
        }
    }

    /// Sends one query of variant `model`, given as an INFER frame's head and tensor data
    /// ([`continuum_wire::frame::encode_infer_head`]), and waits (up to the upstream timeout)
    /// for its answer.
    pub(crate) async fn infer(
        &self,
        model: &str,
        head: Bytes,
        data: Bytes,
    ) -> Result<QuicAnswer, UpstreamError> {
        let Some(c) = self.current() else {
            return Err(UpstreamError::Unavailable(format!(
                "no connection to {}",
                self.addr
            )));
        };
        let r = tokio::time::timeout(self.timeout, c.infer_parts(head, data))
            .await
            .map_err(|_| UpstreamError::Timeout(self.timeout))?
            .map_err(|e| {
                if c.is_closed() {
                    UpstreamError::Unavailable(format!("{e:#}"))
                } else {
                    UpstreamError::Internal(format!("{e:#}"))
                }
            })?;
        match r {
            Response::Ok {
                queue_us,
                compute_us,
                batch_items,
                output,
            } => Ok(QuicAnswer {
                output,
                queue_us,
                compute_us,
                batch_items,
            }),
            Response::Error { status, message } => Err(match status {
                1 => UpstreamError::Rejected(message),
                2 | 4 => UpstreamError::BadRequest(message),
                3 => UpstreamError::NotFound(model.to_string()),
                6 => UpstreamError::Unavailable(message),
                _ => UpstreamError::Internal(message),
            }),
        }
    }
}

/// Keeps the connection of `up` alive until `stop` or until it is retired: connects, reads
/// load reports every `period_ms` into `loads`, samples the RTT, and reconnects with backoff
/// when the connection ends. A worker with no report for `silence` is taken for dead (a
/// killed process sends no close, so only silence tells): the connection is dropped, which
/// fails the queries in flight on it at once (the forward layer retries them elsewhere).
pub(crate) async fn maintain(
    up: Arc<Upstream>,
    loads: Arc<LiveLoads>,
    period_ms: u32,
    silence: Duration,
    mut stop: watch::Receiver<bool>,
) {
    let super::Link::Quic(link) = &up.link else {
        return;
    };
    let mut backoff = BACKOFF.0;
    while !up.is_retired() && !*stop.borrow() {
        let session = async {
            let client = link.connect().await?;
            let mut reports = client.subscribe(period_ms).await?;
            *link.client.write().expect("link lock") = Some(client.clone());
            loop {
                let report = tokio::select! {
                    r = tokio::time::timeout(silence, reports.next()) => match r {
                        Ok(r) => r?,
                        Err(_) => anyhow::bail!("no load report for {silence:?}"),
                    },
                    e = client.closed() => return Err(anyhow::anyhow!("connection closed: {e}")),
                };
                let Some(report) = report else {
                    anyhow::bail!("the worker ended its load reports");
                };
                if up.is_retired() {
                    return Ok(());
                }
                up.add_rtt(client.rtt().as_secs_f64() * 1e3);
                // The loads first: a worker seen up has its variants in the next view.
                loads.apply_report(&up.cfg.name, &report);
                up.reported();
                if !up.set_up(true) {
                    tracing::info!(worker = %up.cfg.name, "worker up");
                }
                backoff = BACKOFF.0;
            }
        };
        let r = tokio::select! {
            r = session => r,
            _ = stop.changed() => Ok(()),
        };
        link.drop_connection();
        if up.set_up(false) {
            tracing::warn!(worker = %up.cfg.name, "worker down");
        }
        if let Err(e) = r {
            tracing::info!(worker = %up.cfg.name, error = %format!("{e:#}"), "worker connection ended");
        }
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {}
            _ = stop.changed() => break,
        }
        backoff = (backoff * 2).min(BACKOFF.1);
    }
}
