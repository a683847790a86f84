//! Open Inference Protocol v2 (KServe / Triton) request and response bodies, with the
//! binary-tensor extension: when the `Inference-Header-Content-Length` header is present, the
//! body is that many bytes of JSON followed by the raw tensors of the inputs that declare
//! `"parameters": {"binary_data_size": n}`, in input order.
//!
//! Extra request parameters understood by this worker (optional): `deadline_ms` (time budget
//! from arrival; admission refuses what cannot meet it) and `stream_id` (the client stream, for
//! the open-streams count). Responses carry `queue_us`, `compute_us` and `batch_items` in their
//! `parameters`.

use crate::fp32;
use crate::query::{Answer, QueryError};
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
    /// Input data (empty when [`parse_infer_relay`] left binary data in the body).
    pub data: Vec<f32>,
    /// Where the input's FP32 bytes lie in the body, when they came as binary data.
    pub raw: Option<std::ops::Range<usize>>,
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
    parse(body, header_len, variant, true)
}

/// As [`parse_infer`], with the same checks, but binary input data is not decoded: `data` is
/// left empty and `raw` says where the bytes are, for a relay that forwards them as they are.
pub fn parse_infer_relay<M: OipModel + ?Sized>(
    body: &[u8],
    header_len: Option<usize>,
    variant: &M,
) -> Result<ParsedInfer, QueryError> {
    parse(body, header_len, variant, false)
}

fn parse<M: OipModel + ?Sized>(
    body: &[u8],
    header_len: Option<usize>,
    variant: &M,
    decode_binary: bool,
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
        return Err(one_input(variant, req.inputs.len()));
    }
    let input = &req.inputs[0];
    let (shape, elems) = check_input(variant, &input.name, &input.datatype, &input.shape)?;
    let mut raw = None;
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
            let at = body.len() - mine.len() - rest.len();
            raw = Some(at..at + size);
            if decode_binary {
                fp32::decode_le(mine)
            } else {
                Vec::new()
            }
        }
        (None, Some(v)) => {
            let mut out = Vec::with_capacity(elems.min(1 << 24));
            flatten(v, &mut out)?;
            if out.len() != elems {
                return Err(bad(format!(
                    "input `{}`: shape {shape:?} needs {elems} values, got {}",
                    input.name,
                    out.len()
                )));
            }
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
    check_outputs(variant, req.outputs.iter().map(|o| o.name.as_str()))?;
    let (deadline, stream) = query_parameters(&req.parameters)?;
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
        raw,
        deadline,
        stream,
        binary_output,
        parameters: req.parameters,
    })
}

/// The error for a request with other than one input.
pub fn one_input<M: OipModel + ?Sized>(m: &M, n: usize) -> QueryError {
    bad(format!(
        "`{}` takes exactly one input (`{}`), got {n}",
        m.model_name(),
        m.input_name()
    ))
}

/// Checks an input's name, datatype and shape against the model; returns the shape and its
/// element count.
pub fn check_input<M: OipModel + ?Sized>(
    m: &M,
    name: &str,
    datatype: &str,
    shape: &[i64],
) -> Result<(Vec<usize>, usize), QueryError> {
    if name != m.input_name() {
        return Err(bad(format!(
            "unknown input `{name}`: the input of `{}` is `{}`",
            m.model_name(),
            m.input_name()
        )));
    }
    if datatype != "FP32" {
        return Err(bad(format!(
            "datatype {datatype} is not supported for input `{name}`: expected FP32"
        )));
    }
    if let Some(d) = shape.iter().find(|d| **d < 0) {
        return Err(bad(format!("negative dimension {d} in shape {shape:?}")));
    }
    let shape: Vec<usize> = shape.iter().map(|d| *d as usize).collect();
    let elems = shape
        .iter()
        .try_fold(1usize, |a, d| a.checked_mul(*d))
        .ok_or_else(|| bad(format!("shape {shape:?} is too large")))?;
    Ok((shape, elems))
}

/// Checks that every requested output is the model's.
pub fn check_outputs<'a, M: OipModel + ?Sized>(
    m: &M,
    names: impl IntoIterator<Item = &'a str>,
) -> Result<(), QueryError> {
    for n in names {
        if n != m.output_name() {
            return Err(bad(format!(
                "unknown output `{n}`: the output of `{}` is `{}`",
                m.model_name(),
                m.output_name()
            )));
        }
    }
    Ok(())
}

/// The request parameters this worker reads: `deadline_ms` and `stream_id`.
pub fn query_parameters(
    p: &Map<String, Value>,
) -> Result<(Option<Duration>, Option<u64>), QueryError> {
    let deadline = match p.get("deadline_ms") {
        None => None,
        Some(v) => Some(duration_ms(v, "parameters.deadline_ms")?),
    };
    let stream = match p.get("stream_id") {
        None => None,
        Some(Value::String(s)) => Some(stream_key(s)),
        Some(v) => Some(v.as_u64().ok_or_else(|| {
            bad("parameters.stream_id must be a non-negative integer or a string")
        })?),
    };
    Ok((deadline, stream))
}

/// An answer's output shape, output data and response parameters.
pub type Decoded = (Vec<usize>, Vec<f32>, Map<String, Value>);

/// Splits an answer body (JSON, then binary tensors when `header_len` is given) back into
/// its output tensor and response parameters (the gateway relays HTTP workers' answers to
/// gRPC clients with it).
pub fn decode_answer(body: &[u8], header_len: Option<usize>) -> Result<Decoded, QueryError> {
    let (json_part, binary) = match header_len {
        Some(n) if n <= body.len() => body.split_at(n),
        Some(n) => return Err(bad(format!("answer header length {n} past its end"))),
        None => (body, &[][..]),
    };
    let v: Value =
        serde_json::from_slice(json_part).map_err(|e| bad(format!("invalid answer JSON: {e}")))?;
    let out = &v["outputs"][0];
    let shape: Vec<usize> = serde_json::from_value(out["shape"].clone())
        .map_err(|e| bad(format!("answer without an output shape: {e}")))?;
    let data = match &out["data"] {
        Value::Null => fp32::decode_le(binary),
        d => {
            let mut o = Vec::new();
            flatten(d, &mut o)?;
            o
        }
    };
    let params = match &v["parameters"] {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    Ok((shape, data, params))
}

/// Encodes a parsed request as an OIP body with its tensor in binary form (the gateway sends
/// gRPC clients' queries to HTTP workers with it); returns it with its JSON length.
pub fn encode_request<M: OipModel + ?Sized>(m: &M, p: &ParsedInfer) -> (Vec<u8>, usize) {
    let mut bytes = encode_request_head(m, p, p.data.len() * 4);
    let n = bytes.len();
    fp32::extend_le(&mut bytes, &p.data);
    (bytes, n)
}

/// The JSON head of [`encode_request`] for `data_len` bytes of binary FP32 data that follow
/// it (a relay that holds the data in wire form appends them itself).
pub fn encode_request_head<M: OipModel + ?Sized>(
    m: &M,
    p: &ParsedInfer,
    data_len: usize,
) -> Vec<u8> {
    let mut req = json!({
        "inputs": [{"name": m.input_name(), "datatype": "FP32", "shape": p.shape,
                    "parameters": {"binary_data_size": data_len}}],
        "outputs": [{"name": m.output_name(), "parameters": {"binary_data": true}}],
        "parameters": p.parameters,
    });
    if let Some(id) = &p.id {
        req["id"] = json!(id);
    }
    serde_json::to_vec(&req).expect("JSON values serialise")
}

/// A time in milliseconds from a client's JSON as a [`Duration`]: a finite number > 0 that a
/// `Duration` can hold (`1.9e22` ms cannot); the error names `field`.
pub fn duration_ms(v: &Value, field: &str) -> Result<Duration, QueryError> {
    v.as_f64()
        .filter(|ms| *ms > 0.0)
        .and_then(|ms| Duration::try_from_secs_f64(ms / 1e3).ok())
        .ok_or_else(|| {
            bad(format!(
                "{field} must be a number of milliseconds > 0 and below {:.0}, got {v}",
                Duration::MAX.as_secs_f64() * 1e3
            ))
        })
}

/// The open-streams key of a stream named by a string (the gateway's stream tokens): a
/// 64-bit FNV-1a hash, enough to tell a window's streams apart.
pub fn stream_key(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
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
        fp32::extend_le(&mut bytes, &ans.output.data);
        (bytes, Some(n))
    } else {
        (bytes, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct M;
    impl OipModel for M {
        fn model_name(&self) -> &str {
            "m"
        }
        fn input_name(&self) -> &str {
            "in"
        }
        fn output_name(&self) -> &str {
            "out"
        }
    }

    /// An OIP body with the input [1.5, -2.0, 4.0] in binary form; its JSON length.
    fn binary_body() -> (Vec<u8>, usize) {
        let p = ParsedInfer {
            id: Some("q1".into()),
            shape: vec![1, 3],
            data: vec![1.5, -2.0, 4.0],
            raw: None,
            deadline: None,
            stream: None,
            binary_output: false,
            parameters: Map::new(),
        };
        encode_request(&M, &p)
    }

    #[test]
    fn relay_parsing_locates_the_binary_data_without_decoding_it() {
        let (body, n) = binary_body();
        let full = parse_infer(&body, Some(n), &M).unwrap();
        let relay = parse_infer_relay(&body, Some(n), &M).unwrap();
        assert_eq!(full.data, [1.5, -2.0, 4.0]);
        assert_eq!(full.raw, Some(n..body.len()));
        assert!(relay.data.is_empty());
        assert_eq!(relay.raw, full.raw);
        assert_eq!(relay.shape, full.shape);
        assert_eq!(relay.id.as_deref(), Some("q1"));
        let raw = &body[relay.raw.clone().unwrap()];
        assert_eq!(fp32::decode_le(raw), full.data);
    }

    #[test]
    fn relay_parsing_checks_as_much_as_full_parsing() {
        let (body, n) = binary_body();
        // Truncated data, and a JSON input (no binary range).
        let cut = &body[..body.len() - 1];
        assert!(parse_infer_relay(cut, Some(n), &M).is_err());
        assert!(parse_infer(cut, Some(n), &M).is_err());
        let json = br#"{"inputs":[{"name":"in","datatype":"FP32","shape":[1,2],"data":[1,2]}]}"#;
        let p = parse_infer_relay(json, None, &M).unwrap();
        assert_eq!((p.data, p.raw), (vec![1.0, 2.0], None));
    }

    #[test]
    fn json_data_must_fill_the_shape_exactly() {
        let body = |data: &str| {
            format!(
                r#"{{"inputs":[{{"name":"in","datatype":"FP32","shape":[2,2],"data":{data}}}]}}"#
            )
        };
        for (data, n) in [("[1,2,3]", 3), ("[[1,2],[3,4],[5,6]]", 6), ("[]", 0)] {
            let e = parse_infer(body(data).as_bytes(), None, &M).unwrap_err();
            assert!(
                e.to_string()
                    .contains(&format!("shape [2, 2] needs 4 values, got {n}")),
                "{data}: {e}"
            );
        }
        let p = parse_infer(body("[[1,2],[3,4]]").as_bytes(), None, &M).unwrap();
        assert_eq!(p.data, [1.0, 2.0, 3.0, 4.0]);
    }
}
