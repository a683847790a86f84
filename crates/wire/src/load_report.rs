//! The load report a worker publishes every Δ ms (docs/model.md §8): per variant, incoming qps,
//! throughput, open streams and queue length. Gateways and the simulator's live twin read it.

use serde::{Deserialize, Serialize};

/// The load of one variant at one moment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VariantLoad {
    /// Variant name.
    pub variant: String,
    /// Items offered per second over the window (admitted or not), qps.
    pub incoming_qps: f64,
    /// Items answered per second over the window, qps.
    pub throughput_qps: f64,
    /// Distinct client streams that sent a query within the window.
    pub open_streams: usize,
    /// Items waiting in the queue now.
    pub queue_len: usize,
    /// Batch size B.
    pub max_batch: usize,
    /// Items answered since start.
    pub served_total: u64,
    /// Items refused since start (admission, queue bound, shutdown).
    pub rejected_total: u64,
}

/// One load report: every variant of a worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadReport {
    /// Worker name.
    pub worker: String,
    /// Report sequence number, from 0.
    pub seq: u64,
    /// Milliseconds since the worker started.
    pub uptime_ms: u64,
    /// The measurement window, ms.
    pub window_ms: u64,
    /// Per-variant loads.
    pub variants: Vec<VariantLoad>,
}
