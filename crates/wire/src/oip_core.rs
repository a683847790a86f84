//! The Open Inference Protocol core shared by every front end: what a server (the worker, or
//! the gateway) exposes — server and model metadata, the Triton model configuration, statistics
//! and repository index, and inference — independent of the wire. The HTTP front ends
//! ([`crate::http`], the gateway's API) render it as JSON, the gRPC front end
//! ([`crate::grpc`]) as protobuf messages, so both say the same things.

use crate::oip::ParsedInfer;
use crate::query::QueryError;
use hyper::StatusCode;
use serde_json::{Map, Value, json};
use std::future::Future;

/// The HTTP status of a query error.
pub fn query_status(e: &QueryError) -> StatusCode {
    match e {
        QueryError::Rejected(_) => StatusCode::TOO_MANY_REQUESTS,
        QueryError::BadInput(_) => StatusCode::BAD_REQUEST,
        QueryError::NotFound(_) => StatusCode::NOT_FOUND,
        QueryError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
        QueryError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        QueryError::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
    }
}

/// An OIP error: an HTTP status (mapped to a gRPC code by the gRPC front end) and a message.
#[derive(Debug, Clone, PartialEq)]
pub struct OipError {
    /// HTTP status.
    pub status: StatusCode,
    /// What went wrong.
    pub message: String,
}

impl OipError {
    /// An error with this status and message.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }

    /// 404 for a model this server does not serve.
    pub fn unknown_model(name: &str) -> Self {
        Self::new(StatusCode::NOT_FOUND, format!("unknown model `{name}`"))
    }
}

impl From<QueryError> for OipError {
    fn from(e: QueryError) -> Self {
        Self::new(query_status(&e), e.to_string())
    }
}

/// Server metadata (`GET /v2`).
#[derive(Debug, Clone)]
pub struct ServerInfo {
    /// Server name.
    pub name: &'static str,
    /// Server version.
    pub version: &'static str,
    /// Protocol extensions served.
    pub extensions: &'static [&'static str],
}

/// The extensions both servers support.
pub const EXTENSIONS: &[&str] = &[
    "binary_tensor_data",
    "model_configuration",
    "statistics",
    "model_repository",
];

/// What a client can know about one model (one FP32 input, one FP32 output, a batch
/// dimension first).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelInfo {
    /// Model name.
    pub name: String,
    /// Platform string (`onnxruntime_onnx`, `continuum-gateway`, …).
    pub platform: String,
    /// Input tensor name.
    pub input: String,
    /// Output tensor name.
    pub output: String,
    /// Shape of one input item.
    pub item_shape: Vec<usize>,
    /// Shape of one output item.
    pub output_item_shape: Vec<usize>,
    /// Most items one request may carry.
    pub max_batch: usize,
    /// Whether it can take a query now.
    pub ready: bool,
}

/// A count and the total time of what it counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Duration {
    /// How many.
    pub count: u64,
    /// Their total time, ns.
    pub ns: u64,
}

/// Statistics of one model since the server started (Triton's statistics extension).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelStats {
    /// Model name.
    pub name: String,
    /// Time of the last answered inference, ms since the Unix epoch (0: none yet).
    pub last_inference_ms: u64,
    /// Items inferred.
    pub inference_count: u64,
    /// Batches run.
    pub execution_count: u64,
    /// Successful requests and their time in the server.
    pub success: Duration,
    /// Failed requests (refused or failed).
    pub fail: Duration,
    /// Time successful requests waited in queues.
    pub queue: Duration,
    /// Time spent computing.
    pub compute_infer: Duration,
}

/// The answer to one inference request.
#[derive(Debug, Clone, PartialEq)]
pub struct InferOutput {
    /// Model that answered (the name the client used).
    pub model: String,
    /// Request id echoed.
    pub id: Option<String>,
    /// Output tensor name.
    pub output: String,
    /// Output shape.
    pub shape: Vec<usize>,
    /// Output data.
    pub data: Vec<f32>,
    /// Response parameters (`queue_us`, `compute_us`, `batch_items`, and the gateway's
    /// outcome, variant and cluster).
    pub parameters: Map<String, Value>,
}

/// A server speaking OIP v2: the worker and the gateway each implement it once.
pub trait OipCore: Send + Sync + 'static {
    /// Server metadata.
    fn server(&self) -> ServerInfo;
    /// Whether it takes queries (`/v2/health/ready`).
    fn ready(&self) -> bool;
    /// Every model served (repository index).
    fn models(&self) -> Vec<ModelInfo>;
    /// One model; 404 if not served.
    fn model(&self, name: &str) -> Result<ModelInfo, OipError> {
        self.models()
            .into_iter()
            .find(|m| m.name == name)
            .ok_or_else(|| OipError::unknown_model(name))
    }
    /// Statistics of one model, or of all of them.
    fn stats(&self, name: Option<&str>) -> Result<Vec<ModelStats>, OipError>;
    /// Loads (`load`) or unloads model `name` (Triton's model-repository extension:
    /// `POST /v2/repository/models/{m}/load|unload`). Servers that hold no models refuse.
    fn set_loaded(
        &self,
        name: &str,
        load: bool,
    ) -> impl Future<Output = Result<(), OipError>> + Send {
        let _ = load;
        std::future::ready(Err(OipError::new(
            StatusCode::BAD_REQUEST,
            format!("`{name}`: this server holds no models to load or unload (its workers do)"),
        )))
    }
    /// Runs one parsed query on `model`.
    fn infer(
        &self,
        model: &str,
        req: ParsedInfer,
    ) -> impl Future<Output = Result<InferOutput, OipError>> + Send;
}

fn dims(item: &[usize]) -> Vec<i64> {
    std::iter::once(-1)
        .chain(item.iter().map(|d| *d as i64))
        .collect()
}

/// Model metadata as JSON (`GET /v2/models/{m}`); shapes lead with a variable batch dimension.
pub fn metadata_json(m: &ModelInfo) -> Value {
    json!({
        "name": m.name,
        "versions": ["1"],
        "platform": m.platform,
        "inputs": [{"name": m.input, "datatype": "FP32", "shape": dims(&m.item_shape)}],
        "outputs": [{"name": m.output, "datatype": "FP32", "shape": dims(&m.output_item_shape)}],
        "parameters": {"max_batch_size": m.max_batch},
    })
}

/// The Triton model configuration as JSON (`GET /v2/models/{m}/config`): dims exclude the
/// batch dimension, which `max_batch_size` bounds.
pub fn config_json(m: &ModelInfo) -> Value {
    json!({
        "name": m.name,
        "platform": m.platform,
        "backend": "",
        "max_batch_size": m.max_batch,
        "input": [{"name": m.input, "data_type": "TYPE_FP32", "format": "FORMAT_NONE",
                   "dims": m.item_shape}],
        "output": [{"name": m.output, "data_type": "TYPE_FP32", "dims": m.output_item_shape}],
        "instance_group": [{"name": m.name, "kind": "KIND_CPU", "count": 1}],
        "dynamic_batching": {},
    })
}

fn duration_json(d: Duration) -> Value {
    json!({"count": d.count, "ns": d.ns})
}

impl ModelStats {
    /// The input and output stages of compute, which are not timed apart from inference: as
    /// many as the inference stage (Triton's clients require equal counts), no time.
    pub fn untimed_stage(&self) -> Duration {
        Duration {
            count: self.compute_infer.count,
            ns: 0,
        }
    }
}

/// Model statistics as JSON (`GET /v2/models[/{m}]/stats`).
pub fn stats_json(stats: &[ModelStats]) -> Value {
    let zero = duration_json(Duration::default());
    let one = |s: &ModelStats| {
        json!({
            "name": s.name,
            "version": "1",
            "last_inference": s.last_inference_ms,
            "inference_count": s.inference_count,
            "execution_count": s.execution_count,
            "inference_stats": {
                "success": duration_json(s.success),
                "fail": duration_json(s.fail),
                "queue": duration_json(s.queue),
                "compute_input": duration_json(s.untimed_stage()),
                "compute_infer": duration_json(s.compute_infer),
                "compute_output": duration_json(s.untimed_stage()),
                "cache_hit": zero,
                "cache_miss": zero,
            },
            "batch_stats": [],
        })
    };
    json!({"model_stats": stats.iter().map(one).collect::<Vec<_>>()})
}

/// The repository index as JSON (`POST /v2/repository/index`).
pub fn index_json(models: &[ModelInfo], ready_only: bool) -> Value {
    let list: Vec<Value> = models
        .iter()
        .filter(|m| m.ready || !ready_only)
        .map(|m| {
            json!({"name": m.name, "version": "1",
                   "state": if m.ready { "READY" } else { "UNAVAILABLE" }})
        })
        .collect();
    Value::Array(list)
}

/// Server metadata as JSON (`GET /v2`).
pub fn server_json(s: &ServerInfo) -> Value {
    json!({"name": s.name, "version": s.version, "extensions": s.extensions})
}

/// Milliseconds since the Unix epoch now.
pub fn epoch_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info() -> ModelInfo {
        ModelInfo {
            name: "m".into(),
            platform: "p".into(),
            input: "in".into(),
            output: "out".into(),
            item_shape: vec![3, 4],
            output_item_shape: vec![10],
            max_batch: 8,
            ready: true,
        }
    }

    #[test]
    fn metadata_and_config_state_the_batch_bound() {
        let m = metadata_json(&info());
        assert_eq!(m["inputs"][0]["shape"], json!([-1, 3, 4]));
        assert_eq!(m["parameters"]["max_batch_size"], 8);
        let c = config_json(&info());
        assert_eq!(c["max_batch_size"], 8);
        assert_eq!(c["input"][0]["dims"], json!([3, 4]));
        assert_eq!(c["output"][0]["dims"], json!([10]));
    }

    #[test]
    fn index_filters_unready_models_on_request() {
        let mut down = info();
        down.name = "d".into();
        down.ready = false;
        let all = index_json(&[info(), down.clone()], false);
        assert_eq!(all.as_array().unwrap().len(), 2);
        assert_eq!(all[1]["state"], "UNAVAILABLE");
        assert_eq!(
            index_json(&[info(), down], true).as_array().unwrap().len(),
            1
        );
    }
}
