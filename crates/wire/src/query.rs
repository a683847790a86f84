//! A query and its fate, as every front end and client sees them: the request (a tensor, a
//! deadline, a stream), the answer, and why a query was not answered.

use crate::tensor::Tensor;
use std::time::Duration;

/// Why a query was not answered. Each maps to one HTTP status and one QUIC status.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum QueryError {
    /// Refused at once: its deadline cannot be met or the queue is full.
    #[error("rejected: {0}")]
    Rejected(String),
    /// The input does not fit the variant.
    #[error("{0}")]
    BadInput(String),
    /// No variant of that name.
    #[error("unknown model `{0}`")]
    NotFound(String),
    /// The request is larger than the configured limit.
    #[error("{0}")]
    TooLarge(String),
    /// The runtime failed.
    #[error("inference failed: {0}")]
    Internal(String),
    /// The worker is shutting down and takes no new queries.
    #[error("worker is shutting down")]
    Unavailable,
}

/// A query to a variant: `shape[0]` items of the variant's item shape.
#[derive(Debug, Clone)]
pub struct InferRequest {
    /// Tensor shape, batch first.
    pub shape: Vec<usize>,
    /// Row-major FP32 data.
    pub data: Vec<f32>,
    /// Time budget from arrival until the answer must be ready; `None`: no deadline.
    pub deadline: Option<Duration>,
    /// Client stream id, for the open-streams count.
    pub stream: Option<u64>,
}

/// An answer.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The output rows of this query.
    pub output: Tensor,
    /// Time from arrival to the start of its batch, µs.
    pub queue_us: u64,
    /// Compute time of its batch, µs.
    pub compute_us: u64,
    /// Items in its batch (this query's and others').
    pub batch_items: usize,
}
