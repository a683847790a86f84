//! The gRPC front end: KServe v2 / Triton `inference.GRPCInferenceService` (tonic + prost, from
//! `proto/inference.proto`), generic over the shared OIP core ([`crate::oip_core`]) so the
//! worker and the gateway serve it with the same code as their HTTP routes. Errors carry the
//! gRPC code of the HTTP status the HTTP route would answer (400 → `INVALID_ARGUMENT`, 404 →
//! `NOT_FOUND`, 429 → `RESOURCE_EXHAUSTED`, 503 → `UNAVAILABLE`, …). gzip-compressed requests
//! are accepted; answers go uncompressed. The HTTP section's connection caps and accept
//! back-off apply here too, and TLS when `grpc.tls` is set ([`crate::tcp_tls`]).

use crate::grpc_incoming::accepted;
use crate::oip::{self, OipModel, ParsedInfer};
use crate::oip_core::{self, ModelInfo, ModelStats, OipCore, OipError};
use crate::serve::ServeLimits;
use crate::tcp_tls::TlsAcceptor;
use hyper::StatusCode;
use serde_json::{Map, Value};
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tonic::codec::CompressionEncoding;
use tonic::{Request, Response, Status};

/// The messages and service generated from `proto/inference.proto`.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod pb {
    tonic::include_proto!("inference");
}

pub use pb::grpc_inference_service_client::GrpcInferenceServiceClient;
use pb::grpc_inference_service_server::{GrpcInferenceService, GrpcInferenceServiceServer};

/// The gRPC service over one OIP core.
pub struct Service<C> {
    core: Arc<C>,
}

/// Binds the gRPC endpoint when one is configured; returns its listener and address.
pub async fn bind(
    cfg: Option<&crate::endpoint::GrpcConfig>,
) -> anyhow::Result<(Option<TcpListener>, Option<std::net::SocketAddr>)> {
    use anyhow::Context;
    let Some(g) = cfg else {
        return Ok((None, None));
    };
    let l = TcpListener::bind(g.listen)
        .await
        .with_context(|| format!("cannot bind gRPC on {}", g.listen))?;
    let a = l.local_addr()?;
    Ok((Some(l), Some(a)))
}

/// Serves `core` on `listener` until `stop` turns true, within the connection caps and the
/// message size (`max_body_bytes`) of `limits`; over TLS when `tls` is given (the handshake
/// is the HTTP listener's, [`crate::tcp_tls::secure`]).
pub async fn serve<C: OipCore>(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    core: Arc<C>,
    limits: ServeLimits,
    mut stop: watch::Receiver<bool>,
) {
    let max_message_bytes = limits.max_body_bytes;
    let svc = GrpcInferenceServiceServer::new(Service { core })
        .max_decoding_message_size(max_message_bytes)
        .max_encoding_message_size(max_message_bytes)
        // Requests may be gzip-compressed; answers are sent uncompressed (as Triton does unless
        // asked): gRPC clients advertise gzip by default, and compressing every float tensor
        // costs CPU for little gain.
        .accept_compressed(CompressionEncoding::Gzip);
    let incoming = accepted(listener, &limits, tls);
    let r = tonic::transport::Server::builder()
        .tcp_nodelay(true)
        .add_service(svc)
        .serve_with_incoming_shutdown(incoming, async move {
            let _ = stop.changed().await;
        })
        .await;
    if let Err(e) = r {
        tracing::error!(error = %e, "gRPC endpoint failed");
    }
}

/// The gRPC status of an OIP error.
pub fn status(e: OipError) -> Status {
    let code = match e.status {
        StatusCode::BAD_REQUEST | StatusCode::PAYLOAD_TOO_LARGE => tonic::Code::InvalidArgument,
        StatusCode::NOT_FOUND => tonic::Code::NotFound,
        StatusCode::TOO_MANY_REQUESTS => tonic::Code::ResourceExhausted,
        StatusCode::UNAUTHORIZED => tonic::Code::Unauthenticated,
        StatusCode::SERVICE_UNAVAILABLE | StatusCode::BAD_GATEWAY => tonic::Code::Unavailable,
        StatusCode::GATEWAY_TIMEOUT => tonic::Code::DeadlineExceeded,
        _ => tonic::Code::Internal,
    };
    Status::new(code, e.message)
}

fn bad(msg: impl Into<String>) -> OipError {
    OipError::new(StatusCode::BAD_REQUEST, msg)
}

/// A gRPC parameter as JSON (the form the OIP core reads parameters in).
fn param_json(p: &pb::InferParameter) -> Value {
    use pb::infer_parameter::ParameterChoice as P;
    match &p.parameter_choice {
        Some(P::BoolParam(b)) => Value::Bool(*b),
        Some(P::Int64Param(i)) => Value::from(*i),
        Some(P::StringParam(s)) => Value::from(s.as_str()),
        Some(P::DoubleParam(d)) => {
            serde_json::Number::from_f64(*d).map_or(Value::Null, Value::Number)
        }
        Some(P::Uint64Param(u)) => Value::from(*u),
        None => Value::Null,
    }
}

fn param_pb(v: &Value) -> Option<pb::InferParameter> {
    use pb::infer_parameter::ParameterChoice as P;
    let c = match v {
        Value::Bool(b) => P::BoolParam(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => P::Int64Param(i),
            (_, Some(u), _) => P::Uint64Param(u),
            (_, _, Some(f)) => P::DoubleParam(f),
            _ => return None,
        },
        Value::String(s) => P::StringParam(s.clone()),
        _ => P::StringParam(v.to_string()),
    };
    Some(pb::InferParameter {
        parameter_choice: Some(c),
    })
}

struct Named<'a>(&'a ModelInfo);

impl OipModel for Named<'_> {
    fn model_name(&self) -> &str {
        &self.0.name
    }
    fn input_name(&self) -> &str {
        &self.0.input
    }
    fn output_name(&self) -> &str {
        &self.0.output
    }
}

/// Checks a gRPC inference request against `m` as the HTTP route checks a JSON one.
pub fn parse_request(m: &ModelInfo, r: pb::ModelInferRequest) -> Result<ParsedInfer, OipError> {
    let named = Named(m);
    if r.inputs.len() != 1 {
        return Err(oip::one_input(&named, r.inputs.len()).into());
    }
    let input = &r.inputs[0];
    let (shape, elems) = oip::check_input(&named, &input.name, &input.datatype, &input.shape)?;
    let data: Vec<f32> = match (r.raw_input_contents.as_slice(), &input.contents) {
        ([raw], None) => {
            if Some(raw.len()) != elems.checked_mul(4) {
                return Err(bad(format!(
                    "raw_input_contents has {} bytes; shape {shape:?} of FP32 needs {}",
                    raw.len(),
                    elems.saturating_mul(4)
                )));
            }
            crate::fp32::decode_le(raw)
        }
        ([], Some(c)) => c.fp32_contents.clone(),
        ([], None) => {
            return Err(bad(format!(
                "input `{}` has neither contents nor raw_input_contents",
                input.name
            )));
        }
        (raw, _) => {
            return Err(bad(format!(
                "give input `{}` either contents or one raw_input_contents entry ({} given)",
                input.name,
                raw.len()
            )));
        }
    };
    oip::check_outputs(&named, r.outputs.iter().map(|o| o.name.as_str()))?;
    let parameters: Map<String, Value> = r
        .parameters
        .iter()
        .map(|(k, v)| (k.clone(), param_json(v)))
        .collect();
    let (deadline, stream) = oip::query_parameters(&parameters)?;
    Ok(ParsedInfer {
        id: (!r.id.is_empty()).then_some(r.id),
        shape,
        data,
        raw: None,
        deadline,
        stream,
        binary_output: true,
        parameters,
    })
}

fn shape_i64(s: &[usize]) -> Vec<i64> {
    s.iter().map(|d| *d as i64).collect()
}

fn metadata_pb(m: &ModelInfo) -> pb::ModelMetadataResponse {
    use pb::model_metadata_response::TensorMetadata;
    let dims = |item: &[usize]| {
        std::iter::once(-1)
            .chain(item.iter().map(|d| *d as i64))
            .collect()
    };
    pb::ModelMetadataResponse {
        name: m.name.clone(),
        versions: vec!["1".into()],
        platform: m.platform.clone(),
        inputs: vec![TensorMetadata {
            name: m.input.clone(),
            datatype: "FP32".into(),
            shape: dims(&m.item_shape),
        }],
        outputs: vec![TensorMetadata {
            name: m.output.clone(),
            datatype: "FP32".into(),
            shape: dims(&m.output_item_shape),
        }],
    }
}

fn config_pb(m: &ModelInfo) -> pb::ModelConfig {
    let fp32 = pb::DataType::TypeFp32 as i32;
    pb::ModelConfig {
        name: m.name.clone(),
        platform: m.platform.clone(),
        max_batch_size: i32::try_from(m.max_batch).unwrap_or(i32::MAX),
        input: vec![pb::ModelInput {
            name: m.input.clone(),
            data_type: fp32,
            dims: shape_i64(&m.item_shape),
        }],
        output: vec![pb::ModelOutput {
            name: m.output.clone(),
            data_type: fp32,
            dims: shape_i64(&m.output_item_shape),
        }],
        instance_group: vec![pb::ModelInstanceGroup {
            name: m.name.clone(),
            count: 1,
            kind: pb::model_instance_group::Kind::Cpu as i32,
        }],
        dynamic_batching: Some(pb::ModelDynamicBatching::default()),
        backend: String::new(),
    }
}

fn stats_pb(s: &ModelStats) -> pb::ModelStatistics {
    let d = |d: oip_core::Duration| {
        Some(pb::StatisticDuration {
            count: d.count,
            ns: d.ns,
        })
    };
    pb::ModelStatistics {
        name: s.name.clone(),
        version: "1".into(),
        last_inference: s.last_inference_ms,
        inference_count: s.inference_count,
        execution_count: s.execution_count,
        inference_stats: Some(pb::InferStatistics {
            success: d(s.success),
            fail: d(s.fail),
            queue: d(s.queue),
            compute_input: d(s.untimed_stage()),
            compute_infer: d(s.compute_infer),
            compute_output: d(s.untimed_stage()),
            cache_hit: d(Default::default()),
            cache_miss: d(Default::default()),
        }),
        batch_stats: Vec::new(),
    }
}

fn answer_pb(out: oip_core::InferOutput) -> pb::ModelInferResponse {
    let mut raw = Vec::with_capacity(out.data.len() * 4);
    crate::fp32::extend_le(&mut raw, &out.data);
    pb::ModelInferResponse {
        model_name: out.model,
        model_version: "1".into(),
        id: out.id.unwrap_or_default(),
        parameters: out
            .parameters
            .iter()
            .filter_map(|(k, v)| param_pb(v).map(|p| (k.clone(), p)))
            .collect(),
        outputs: vec![pb::model_infer_response::InferOutputTensor {
            name: out.output,
            datatype: "FP32".into(),
            shape: shape_i64(&out.shape),
            parameters: Default::default(),
            contents: None,
        }],
        raw_output_contents: vec![raw],
    }
}

impl<C> Service<C>
where
    C: OipCore,
{
    fn model(&self, name: &str, version: &str) -> Result<ModelInfo, Status> {
        let m = self.core.model(name).map_err(status)?;
        crate::http::check_version(name, Some(version)).map_err(status)?;
        Ok(m)
    }
}

#[tonic::async_trait]
impl<C: OipCore> GrpcInferenceService for Service<C> {
    async fn server_live(
        &self,
        _: Request<pb::ServerLiveRequest>,
    ) -> Result<Response<pb::ServerLiveResponse>, Status> {
        Ok(Response::new(pb::ServerLiveResponse { live: true }))
    }

    async fn server_ready(
        &self,
        _: Request<pb::ServerReadyRequest>,
    ) -> Result<Response<pb::ServerReadyResponse>, Status> {
        Ok(Response::new(pb::ServerReadyResponse {
            ready: self.core.ready(),
        }))
    }

    async fn model_ready(
        &self,
        r: Request<pb::ModelReadyRequest>,
    ) -> Result<Response<pb::ModelReadyResponse>, Status> {
        let r = r.into_inner();
        let m = self.model(&r.name, &r.version)?;
        Ok(Response::new(pb::ModelReadyResponse { ready: m.ready }))
    }

    async fn server_metadata(
        &self,
        _: Request<pb::ServerMetadataRequest>,
    ) -> Result<Response<pb::ServerMetadataResponse>, Status> {
        let s = self.core.server();
        Ok(Response::new(pb::ServerMetadataResponse {
            name: s.name.into(),
            version: s.version.into(),
            extensions: s.extensions.iter().map(|e| e.to_string()).collect(),
        }))
    }

    async fn model_metadata(
        &self,
        r: Request<pb::ModelMetadataRequest>,
    ) -> Result<Response<pb::ModelMetadataResponse>, Status> {
        let r = r.into_inner();
        Ok(Response::new(metadata_pb(
            &self.model(&r.name, &r.version)?,
        )))
    }

    async fn model_infer(
        &self,
        r: Request<pb::ModelInferRequest>,
    ) -> Result<Response<pb::ModelInferResponse>, Status> {
        let r = r.into_inner();
        let m = self.model(&r.model_name, &r.model_version)?;
        let parsed = parse_request(&m, r).map_err(status)?;
        let out = self.core.infer(&m.name, parsed).await.map_err(status)?;
        Ok(Response::new(answer_pb(out)))
    }

    async fn model_config(
        &self,
        r: Request<pb::ModelConfigRequest>,
    ) -> Result<Response<pb::ModelConfigResponse>, Status> {
        let r = r.into_inner();
        let m = self.model(&r.name, &r.version)?;
        Ok(Response::new(pb::ModelConfigResponse {
            config: Some(config_pb(&m)),
        }))
    }

    async fn model_statistics(
        &self,
        r: Request<pb::ModelStatisticsRequest>,
    ) -> Result<Response<pb::ModelStatisticsResponse>, Status> {
        let r = r.into_inner();
        let name = (!r.name.is_empty()).then_some(r.name.as_str());
        if let Some(n) = name {
            self.model(n, &r.version)?;
        }
        let stats = self.core.stats(name).map_err(status)?;
        Ok(Response::new(pb::ModelStatisticsResponse {
            model_stats: stats.iter().map(stats_pb).collect(),
        }))
    }

    async fn repository_index(
        &self,
        r: Request<pb::RepositoryIndexRequest>,
    ) -> Result<Response<pb::RepositoryIndexResponse>, Status> {
        let ready_only = r.into_inner().ready;
        let models = self
            .core
            .models()
            .into_iter()
            .filter(|m| m.ready || !ready_only)
            .map(|m| pb::repository_index_response::ModelIndex {
                state: if m.ready { "READY" } else { "UNAVAILABLE" }.into(),
                name: m.name,
                version: "1".into(),
                reason: String::new(),
            })
            .collect();
        Ok(Response::new(pb::RepositoryIndexResponse { models }))
    }
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
            item_shape: vec![2],
            output_item_shape: vec![1],
            max_batch: 4,
            ready: true,
        }
    }

    fn req(raw: Vec<Vec<u8>>, contents: Option<Vec<f32>>) -> pb::ModelInferRequest {
        pb::ModelInferRequest {
            model_name: "m".into(),
            inputs: vec![pb::model_infer_request::InferInputTensor {
                name: "in".into(),
                datatype: "FP32".into(),
                shape: vec![1, 2],
                contents: contents.map(|c| pb::InferTensorContents {
                    fp32_contents: c,
                    ..Default::default()
                }),
                ..Default::default()
            }],
            raw_input_contents: raw,
            ..Default::default()
        }
    }

    #[test]
    fn raw_and_typed_contents_parse_alike() {
        let raw = [1.5f32, -2.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let a = parse_request(&info(), req(vec![raw], None)).unwrap();
        let b = parse_request(&info(), req(vec![], Some(vec![1.5, -2.0]))).unwrap();
        assert_eq!((a.shape.clone(), a.data.clone()), (b.shape, b.data));
        assert_eq!(a.data, [1.5, -2.0]);
    }

    #[test]
    fn malformed_requests_are_invalid_arguments() {
        let short = parse_request(&info(), req(vec![vec![0; 7]], None)).unwrap_err();
        assert_eq!(status(short).code(), tonic::Code::InvalidArgument);
        assert!(parse_request(&info(), req(vec![], None)).is_err());
        let mut r = req(vec![], Some(vec![0.0, 0.0]));
        r.parameters.insert(
            "deadline_ms".into(),
            pb::InferParameter {
                parameter_choice: Some(pb::infer_parameter::ParameterChoice::DoubleParam(1.9e22)),
            },
        );
        let e = parse_request(&info(), r).unwrap_err();
        assert!(
            e.message.contains("parameters.deadline_ms"),
            "{}",
            e.message
        );
    }
}
