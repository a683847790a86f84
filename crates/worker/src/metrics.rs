//! Prometheus metrics of a worker (`GET /metrics`), named after Triton's `nv_inference_*` family
//! where one exists so that existing dashboards apply. Counters carry the `_total` suffix of
//! the OpenMetrics text format.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;

/// The `model` label: a variant name.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ModelLabel {
    /// Variant name.
    pub model: String,
}

type FloatGauge = Gauge<f64, AtomicU64>;

/// Every metric of a worker, registered in one registry.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    /// Items waiting in a variant's queue.
    pub pending: Family<ModelLabel, Gauge>,
    /// Incoming qps over the load window.
    pub incoming_qps: Family<ModelLabel, FloatGauge>,
    /// Answered qps over the load window.
    pub throughput_qps: Family<ModelLabel, FloatGauge>,
    /// Distinct client streams seen within the load window.
    pub open_streams: Family<ModelLabel, Gauge>,
    /// Queries answered.
    pub success: Family<ModelLabel, Counter>,
    /// Queries that failed in inference.
    pub failure: Family<ModelLabel, Counter>,
    /// Queries refused by admission, the queue bound or shutdown.
    pub rejected: Family<ModelLabel, Counter>,
    /// Queued queries dropped unprocessed because their requester went away (a hedge's
    /// loser whose stream the gateway stopped, a client that disconnected).
    pub cancelled: Family<ModelLabel, Counter>,
    /// Items inferred.
    pub inference_count: Family<ModelLabel, Counter>,
    /// Batches run.
    pub exec_count: Family<ModelLabel, Counter>,
    /// Sum of queue waits, µs.
    pub queue_us: Family<ModelLabel, Counter>,
    /// Sum of batch compute times, µs.
    pub compute_us: Family<ModelLabel, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// Creates and registers every metric.
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let m = Self {
            pending: Family::default(),
            incoming_qps: Family::default(),
            throughput_qps: Family::default(),
            open_streams: Family::default(),
            success: Family::default(),
            failure: Family::default(),
            rejected: Family::default(),
            cancelled: Family::default(),
            inference_count: Family::default(),
            exec_count: Family::default(),
            queue_us: Family::default(),
            compute_us: Family::default(),
            registry: Registry::default(),
        };
        let r = &mut registry;
        r.register(
            "nv_inference_pending_request_count",
            "Items waiting in the variant's queue",
            m.pending.clone(),
        );
        r.register(
            "continuum_incoming_qps",
            "Items offered per second over the load window",
            m.incoming_qps.clone(),
        );
        r.register(
            "continuum_throughput_qps",
            "Items answered per second over the load window",
            m.throughput_qps.clone(),
        );
        r.register(
            "continuum_open_streams",
            "Client streams seen within the load window",
            m.open_streams.clone(),
        );
        r.register(
            "nv_inference_request_success",
            "Queries answered",
            m.success.clone(),
        );
        r.register(
            "nv_inference_request_failure",
            "Queries that failed in inference",
            m.failure.clone(),
        );
        r.register(
            "continuum_rejected",
            "Queries refused by admission, queue bound or shutdown",
            m.rejected.clone(),
        );
        r.register(
            "continuum_cancelled",
            "Queued queries dropped unprocessed because their requester went away",
            m.cancelled.clone(),
        );
        r.register(
            "nv_inference_count",
            "Items inferred",
            m.inference_count.clone(),
        );
        r.register(
            "nv_inference_exec_count",
            "Batches run",
            m.exec_count.clone(),
        );
        r.register(
            "nv_inference_queue_duration_us",
            "Sum of queue waits in microseconds",
            m.queue_us.clone(),
        );
        r.register(
            "nv_inference_compute_infer_duration_us",
            "Sum of batch compute times in microseconds",
            m.compute_us.clone(),
        );
        Self { registry, ..m }
    }

    /// The label of a variant.
    pub fn label(variant: &str) -> ModelLabel {
        ModelLabel {
            model: variant.to_string(),
        }
    }

    /// The metrics in Prometheus text format.
    pub fn encode(&self) -> String {
        let mut s = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut s, &self.registry);
        s
    }
}
