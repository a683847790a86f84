//! Connections from the gateway to inference workers: QUIC to continuum workers ([`quic`]) and
//! plain HTTP to any Open Inference Protocol v2 server ([`http`]). An [`Upstream`] wraps either
//! with what the gateway tracks of it: health, round-trip time and queries in flight, and
//! carries one query to it in either protocol (`Upstream::infer`, the only place that frames
//! queries for a worker); [`loads`] holds the loads the workers last reported.

pub(crate) mod http;
mod infer;
pub(crate) mod loads;
pub(crate) mod quic;

use crate::config::{Protocol, UpstreamConfig};
use anyhow::Context as _;
pub(crate) use infer::{Answered, Outgoing, Wire};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// Why a forwarded query got no answer from its worker.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum UpstreamError {
    /// The worker refused the query (admission, queue bound): it was never processed.
    #[error("rejected by the worker: {0}")]
    Rejected(String),
    /// The worker found the request invalid (the message is the worker's).
    #[error("{0}")]
    BadRequest(String),
    /// The worker does not serve this variant.
    #[error("the worker does not serve `{0}`")]
    NotFound(String),
    /// No answer within the upstream timeout.
    #[error("no answer from the worker within {0:?}")]
    Timeout(Duration),
    /// The worker cannot be reached, or the connection broke.
    #[error("worker unavailable: {0}")]
    Unavailable(String),
    /// The worker failed (inference error, malformed answer).
    #[error("worker error: {0}")]
    Internal(String),
}

impl UpstreamError {
    /// Whether the error says the worker itself is down (the gateway then marks it unhealthy
    /// and re-binds its streams).
    pub fn worker_down(&self) -> bool {
        matches!(self, Self::Unavailable(_) | Self::Timeout(_))
    }
}

/// The transport to one worker.
pub(crate) enum Link {
    /// continuum's QUIC framing.
    Quic(quic::QuicLink),
    /// OIP v2 over HTTP.
    Http(Box<http::HttpUpstream>),
}

/// Smoothed round-trip time and its variation (RFC 6298 §2: α = 1/8, β = 1/4).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RttStats {
    /// Smoothed RTT, ms.
    pub srtt_ms: f64,
    /// RTT variation, ms.
    pub rttvar_ms: f64,
    /// Samples seen.
    pub samples: u64,
}

impl RttStats {
    /// Adds one RTT sample.
    pub(crate) fn add(&mut self, rtt_ms: f64) {
        if self.samples == 0 {
            self.srtt_ms = rtt_ms;
            self.rttvar_ms = rtt_ms / 2.0;
        } else {
            self.rttvar_ms = 0.75 * self.rttvar_ms + 0.25 * (self.srtt_ms - rtt_ms).abs();
            self.srtt_ms = 0.875 * self.srtt_ms + 0.125 * rtt_ms;
        }
        self.samples += 1;
    }
}

/// One live worker as the gateway sees it.
pub struct Upstream {
    /// Its settings.
    pub cfg: UpstreamConfig,
    /// The transport.
    pub(crate) link: Link,
    up: AtomicBool,
    retired: AtomicBool,
    rtt: Mutex<RttStats>,
    /// Bounds the queries in flight to it (back-pressure).
    pub(crate) permits: Semaphore,
    /// Time of the last load report, µs since `epoch` (0: none yet).
    last_report_us: AtomicU64,
    epoch: Instant,
}

impl Upstream {
    /// An upstream for `cfg`, not yet connected (down until its first report).
    pub fn new(
        cfg: UpstreamConfig,
        max_in_flight: usize,
        timeout: Duration,
    ) -> anyhow::Result<Self> {
        let link = match cfg.protocol {
            Protocol::Quic => Link::Quic(quic::QuicLink::new(&cfg, timeout)?),
            Protocol::Http => Link::Http(Box::new(http::HttpUpstream::with_tls(
                &cfg.address,
                cfg.metrics.as_deref(),
                timeout,
                match &cfg.tls {
                    Some(t) => Some(
                        t.client_config(&[])
                            .with_context(|| format!("worker `{}`: tls", cfg.name))?,
                    ),
                    None => None,
                },
            )?)),
        };
        Ok(Self {
            cfg,
            link,
            up: AtomicBool::new(false),
            retired: AtomicBool::new(false),
            rtt: Mutex::new(RttStats::default()),
            permits: Semaphore::new(max_in_flight),
            last_report_us: AtomicU64::new(0),
            epoch: Instant::now(),
        })
    }

    /// Whether it is believed to be serving.
    pub(crate) fn is_up(&self) -> bool {
        self.up.load(Ordering::Acquire)
    }

    /// Marks it up or down; returns the previous state.
    pub fn set_up(&self, up: bool) -> bool {
        self.up.swap(up, Ordering::AcqRel)
    }

    /// Marks it down after a failed forward and drops its connection so that it reconnects.
    pub(crate) fn mark_failed(&self, why: &str) {
        if self.set_up(false) {
            tracing::warn!(worker = %self.cfg.name, reason = why, "worker marked down");
        }
        if let Link::Quic(q) = &self.link {
            q.drop_connection();
        }
    }

    /// Whether a reload removed it.
    pub(crate) fn is_retired(&self) -> bool {
        self.retired.load(Ordering::Acquire)
    }

    /// Marks it removed: its maintenance task ends and its streams re-bind.
    pub(crate) fn retire(&self) {
        self.retired.store(true, Ordering::Release);
        self.set_up(false);
        if let Link::Quic(q) = &self.link {
            q.drop_connection();
        }
    }

    /// Records a load report (or a successful scrape) now.
    pub fn reported(&self) {
        let us = self.epoch.elapsed().as_micros() as u64;
        self.last_report_us.store(us.max(1), Ordering::Release);
    }

    /// Age of the last report, if any.
    pub(crate) fn report_age(&self) -> Option<Duration> {
        match self.last_report_us.load(Ordering::Acquire) {
            0 => None,
            us => Some(
                self.epoch
                    .elapsed()
                    .saturating_sub(Duration::from_micros(us)),
            ),
        }
    }

    /// Adds an RTT sample, ms.
    pub(crate) fn add_rtt(&self, ms: f64) {
        self.rtt.lock().expect("rtt lock").add(ms);
    }

    /// The RTT figures so far.
    pub fn rtt(&self) -> RttStats {
        *self.rtt.lock().expect("rtt lock")
    }
}
