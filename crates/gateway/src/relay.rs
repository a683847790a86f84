//! What travels between a client and a worker through the gateway: a query as it leaves
//! ([`Outgoing`], in its [`Wire`] form) and its answer ([`Relayed`]), plus the precise sleep
//! that injects network delays in sim-to-live mode. Forwarding and hedging share these.

use super::plan::TaskSpec;
use super::streams::Stream;
use bytes::Bytes;
use continuum_wire::oip::ParsedInfer;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One query as it leaves for a worker.
pub struct Outgoing<'a> {
    /// Its stream.
    pub stream: &'a Stream,
    /// The stream's task, if still served.
    pub task: Option<&'a TaskSpec>,
    /// The parsed query (needed for QUIC workers).
    pub parsed: Option<&'a ParsedInfer>,
    /// The body as it came.
    pub body: &'a Bytes,
    /// The body's wire form, which its answer takes too.
    pub wire: Wire,
}

/// The wire form of a query's body, which is also the form of its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// An OIP v2 body (HTTP and gRPC clients), with its `Inference-Header-Content-Length`
    /// when its tensor follows as binary data.
    Oip(Option<usize>),
    /// A QUIC INFER frame ([`frame`]), its tensor's location in the parsed query's `raw`;
    /// the answer is a response frame.
    Frame,
}

/// A query's answer, ready to relay.
pub struct Relayed {
    /// Response body, in the query's wire form ([`Wire`]).
    pub body: Bytes,
    /// `Inference-Header-Content-Length` when the output is binary.
    pub header_len: Option<usize>,
    /// Time of the worker call.
    pub upstream: Duration,
    /// `success` or `failure`.
    pub outcome: &'static str,
    /// Variant that served it.
    pub variant: Arc<str>,
    /// Cluster that served it.
    pub cluster: Arc<str>,
}

/// Sleeps `ms` (if positive) precisely; returns the time actually slept. tokio's timer has a
/// 1 ms granularity and fires up to a tick late, which would add 1–2 ms to every injected
/// delay: the last 2 ms are waited by yielding instead (only in sim-to-live mode).
pub async fn sleep_ms(ms: f64) -> Duration {
    if ms <= 0.0 {
        return Duration::ZERO;
    }
    let t = Instant::now();
    let target = t + Duration::from_secs_f64(ms / 1e3);
    let coarse = Duration::from_millis(2);
    if let Some(early) = target.checked_sub(coarse).filter(|e| *e > t) {
        tokio::time::sleep_until(early.into()).await;
    }
    while Instant::now() < target {
        tokio::task::yield_now().await;
    }
    t.elapsed()
}
