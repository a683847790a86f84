//! Connections from the gateway to inference workers: QUIC to continuum workers ([`quic`]) and
//! plain HTTP to any Open Inference Protocol v2 server ([`http`]).

pub mod http;

use std::time::Duration;

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
