//! Open Inference Protocol v2 (KServe / Triton) request and response bodies, with the
//! binary-tensor extension: when the `Inference-Header-Content-Length` header is present, the
//! body is that many bytes of JSON followed by the raw tensors of the inputs that declare
//! `"parameters": {"binary_data_size": n}`, in input order.
//!
//! Extra request parameters understood by this worker (optional): `deadline_ms` (time budget
//! from arrival; admission refuses what cannot meet it) and `stream_id` (the client stream, for
//! the open-streams count). Responses carry `queue_us`, `compute_us` and `batch_items` in their
//! `parameters`.

use super::variant::{Answer, QueryError, Variant};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::time::Duration;

/// The names a model shows on the wire: the worker's variants and the gateway's tasks both
/// speak OIP v2 through this.
pub trait OipModel {
    /// Model name (in paths and responses).
    fn model_name(&self) -> &str;
    /// Name of its one input tensor.
    fn input_name(&self) -> &str;
    /// Name of its one output tensor.
    fn output_name(&self) -> &str;
}

impl OipModel for Variant {
    fn model_name(&self) -> &str {
        &self.name
    }
    fn input_name(&self) -> &str {
        &self.input_name
    }
    fn output_name(&self) -> &str {
        &self.output_name
    }
}

/// The header that announces the binary-tensor extension.
pub const HEADER_LEN: &str = "inference-header-content-length";

#[derive(Deserialize)]
struct Req {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    parameters: Map<String, Value>,
    inputs: Vec<Input>,
    #[serde(default)]
    outputs: Vec<Output>,
}

#[derive(Deserialize)]
struct Input {
    name: String,
    shape: Vec<i64>,
    datatype: String,
    #[serde(default)]
    parameters: Map<String, Value>,
    #[serde(default)]
    data: Option<Value>,
}

#[derive(Deserialize)]
struct Output {
    name: String,
    #[serde(default)]
    parameters: Map<String, Value>,
}

/// A checked inference request.
#[derive(Debug, Clone)]
pub struct ParsedInfer {
    /// Request id to echo.
    pub id: Option<String>,
    /// Input shape.
    pub shape: Vec<usize>,
    /// Input data.
    pub data: Vec<f32>,
    /// Deadline budget.
    pub deadline: Option<Duration>,
    /// Client stream id.
    pub stream: Option<u64>,
    /// Whether the output is wanted as binary data.
    pub binary_output: bool,
    /// The request's `parameters` (the gateway reads `max_delay_ms` / `min_accuracy` here).
    pub parameters: Map<String, Value>,
}

fn bad(msg: impl Into<String>) -> QueryError {
    QueryError::BadInput(msg.into())
}

fn flatten(v: &Value, out: &mut Vec<f32>) -> Result<(), QueryError> {
    match v {
        Value::Number(n) => {
            let x = n
                .as_f64()
                .ok_or_else(|| bad(format!("number {n} out of range")))?;
            out.push(x as f32);
            Ok(())
        }
        Value::Array(a) => a.iter().try_for_each(|x| flatten(x, out)),
        other => Err(bad(format!(
            "tensor data must be numbers, found {}",
            match other {
                Value::Null => "null",
                Value::Bool(_) => "a boolean",
                Value::String(_) => "a string",
                _ => "an object",
            }
        ))),
    }
}

/// Parses an infer body for `variant`. `header_len` is the value of the
/// `Inference-Header-Content-Length` header, when present.
pub fn parse_infer<M: OipModel + ?Sized>(
    body: &[u8],
    header_len: Option<usize>,
    variant: &M,
) -> Result<ParsedInfer, QueryError> {
    let (json_part, mut binary) = match header_len {
        Some(n) if n > body.len() => {
            return Err(bad(format!(
                "Inference-Header-Content-Length is {n} but the body has {} bytes",
                body.len()
            )));
        }
        Some(n) => body.split_at(n),
        None => (body, &[][..]),
    };
    let req: Req = serde_json::from_slice(json_part)
        .map_err(|e| bad(format!("invalid inference request JSON: {e}")))?;
    if req.inputs.len() != 1 {
        return Err(bad(format!(
            "`{}` takes exactly one input (`{}`), got {}",
            variant.model_name(),
            variant.input_name(),
            req.inputs.len()
        )));
    }
    let input = &req.inputs[0];
    if input.name != variant.input_name() {
        return Err(bad(format!(
            "unknown input `{}`: the input of `{}` is `{}`",
            input.name,
            variant.model_name(),
            variant.input_name()
        )));
    }
    if input.datatype != "FP32" {
        return Err(bad(format!(
            "datatype {} is not supported for input `{}`: expected FP32",
            input.datatype, input.name
        )));
    }
    if let Some(d) = input.shape.iter().find(|d| **d < 0) {
        return Err(bad(format!(
            "negative dimension {d} in shape {:?}",
            input.shape
        )));
    }
    let shape: Vec<usize> = input.shape.iter().map(|d| *d as usize).collect();
    let elems = shape
        .iter()
        .try_fold(1usize, |a, d| a.checked_mul(*d))
        .ok_or_else(|| bad(format!("shape {shape:?} is too large")))?;
    let data = match (input.parameters.get("binary_data_size"), &input.data) {
        (Some(size), _) => {
            let size = size
                .as_u64()
                .ok_or_else(|| bad("binary_data_size must be a non-negative integer"))?
                as usize;
            if header_len.is_none() {
                return Err(bad(
                    "binary_data_size given without an Inference-Header-Content-Length header",
                ));
            }
            if size > binary.len() {
                return Err(bad(format!(
                    "truncated binary data: input `{}` declares {size} bytes, {} present",
                    input.name,
                    binary.len()
                )));
            }
            if Some(size) != elems.checked_mul(4) {
                return Err(bad(format!(
                    "binary_data_size {size} does not match shape {shape:?} of FP32 ({} bytes)",
                    elems.saturating_mul(4)
                )));
            }
            let (mine, rest) = binary.split_at(size);
            binary = rest;
            mine.chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        }
        (None, Some(v)) => {
            let mut out = Vec::with_capacity(elems.min(1 << 24));
            flatten(v, &mut out)?;
            out
        }
        (None, None) => {
            return Err(bad(format!(
                "input `{}` has neither `data` nor `binary_data_size`",
                input.name
            )));
        }
    };
    if !binary.is_empty() {
        return Err(bad(format!(
            "{} bytes of binary data after the last input",
            binary.len()
        )));
    }
    for o in &req.outputs {
        if o.name != variant.output_name() {
            return Err(bad(format!(
                "unknown output `{}`: the output of `{}` is `{}`",
                o.name,
                variant.model_name(),
                variant.output_name()
            )));
        }
    }
    let deadline = match req.parameters.get("deadline_ms") {
        None => None,
        Some(v) => match v.as_f64() {
            Some(ms) if ms > 0.0 && ms.is_finite() => Some(Duration::from_secs_f64(ms / 1e3)),
            _ => return Err(bad("parameters.deadline_ms must be a number > 0")),
        },
    };
    let stream = match req.parameters.get("stream_id") {
        None => None,
        Some(v) => Some(
            v.as_u64()
                .ok_or_else(|| bad("parameters.stream_id must be a non-negative integer"))?,
        ),
    };
    let wants_binary = |p: &Map<String, Value>, key: &str| p.get(key) == Some(&Value::Bool(true));
    let binary_output = wants_binary(&req.parameters, "binary_data_output")
        || req
            .outputs
            .iter()
            .any(|o| wants_binary(&o.parameters, "binary_data"));
    Ok(ParsedInfer {
        id: req.id,
        shape,
        data,
        deadline,
        stream,
        binary_output,
        parameters: req.parameters,
    })
}

/// Encodes a response body; returns it with the JSON length to send as
/// `Inference-Header-Content-Length` when the output is binary.
pub fn encode_infer<M: OipModel + ?Sized>(
    variant: &M,
    req: &ParsedInfer,
    ans: &Answer,
) -> (Vec<u8>, Option<usize>) {
    let mut out = json!({
        "name": variant.output_name(),
        "datatype": "FP32",
        "shape": ans.output.shape,
    });
    if req.binary_output {
        out["parameters"] = json!({"binary_data_size": ans.output.data.len() * 4});
    } else {
        out["data"] = json!(ans.output.data);
    }
    let mut body = json!({
        "model_name": variant.model_name(),
        "model_version": "1",
        "parameters": {
            "queue_us": ans.queue_us,
            "compute_us": ans.compute_us,
            "batch_items": ans.batch_items,
        },
        "outputs": [out],
    });
    if let Some(id) = &req.id {
        body["id"] = json!(id);
    }
    let mut bytes = serde_json::to_vec(&body).expect("JSON values serialise");
    if req.binary_output {
        let n = bytes.len();
        bytes.reserve(ans.output.data.len() * 4);
        for x in &ans.output.data {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
        (bytes, Some(n))
    } else {
        (bytes, None)
    }
}

/// Model metadata (`GET /v2/models/{m}`).
pub fn metadata(variant: &Variant, platform: &str) -> Value {
    let dims = |item: &[usize]| {
        let mut v = vec![-1i64];
        v.extend(item.iter().map(|d| *d as i64));
        v
    };
    json!({
        "name": variant.name,
        "versions": ["1"],
        "platform": platform,
        "inputs": [{"name": variant.input_name, "datatype": "FP32", "shape": dims(&variant.item_shape)}],
        "outputs": [{"name": variant.output_name, "datatype": "FP32", "shape": dims(&variant.output_item_shape)}],
        "parameters": {"model": variant.model, "max_batch_size": variant.max_batch},
    })
}
