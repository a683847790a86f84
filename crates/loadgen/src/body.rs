//! Inference request bodies: the model metadata a gateway publishes for a task
//! (`GET /v2/models/{task}`) and the pre-encoded Open Inference Protocol v2 request built from
//! it, as JSON or with the binary-tensor extension.

use anyhow::{Context, bail};
use bytes::Bytes;
use serde_json::{Value, json};

/// The header that gives the length of the JSON part of a binary-extension body.
pub const HEADER_LEN: &str = "inference-header-content-length";

/// How inference inputs are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BodyFormat {
    /// Tensor data as a JSON array.
    Json,
    /// OIP v2 binary tensor extension: JSON header, then raw little-endian f32 bytes.
    Binary,
}

/// What a task's model takes and returns, from its OIP v2 metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelSignature {
    /// Input tensor name.
    pub input: String,
    /// Input shape of one request, batch dimension set to 1.
    pub shape: Vec<usize>,
    /// Output tensor name.
    pub output: String,
}

impl ModelSignature {
    /// Reads OIP v2 model metadata: the first input (FP32, batch dimension -1 or 1, every
    /// other dimension fixed) and the first output.
    pub fn from_metadata(meta: &Value) -> anyhow::Result<Self> {
        let input = meta["inputs"]
            .get(0)
            .context("model metadata has no `inputs`")?;
        let name = input["name"]
            .as_str()
            .context("model input has no `name`")?;
        let dtype = input["datatype"].as_str().unwrap_or("FP32");
        if dtype != "FP32" {
            bail!("model input `{name}` has datatype {dtype}: only FP32 is supported");
        }
        let dims = input["shape"]
            .as_array()
            .context("model input has no `shape`")?;
        let mut shape = Vec::with_capacity(dims.len());
        for (i, d) in dims.iter().enumerate() {
            let d = d
                .as_i64()
                .with_context(|| format!("model input shape {dims:?}: not integers"))?;
            shape.push(match (i, d) {
                (0, -1) => 1,
                (_, d) if d > 0 => d as usize,
                _ => bail!("model input `{name}` has shape {dims:?}: only the batch dimension may be dynamic"),
            });
        }
        if shape.is_empty() {
            bail!("model input `{name}` has an empty shape");
        }
        let output = meta["outputs"]
            .get(0)
            .and_then(|o| o["name"].as_str())
            .unwrap_or("output")
            .to_string();
        Ok(Self {
            input: name.to_string(),
            shape,
            output,
        })
    }

    /// Number of f32 elements of one request's input.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the input has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A pre-encoded inference request body, cheap to clone and send many times.
#[derive(Debug, Clone)]
pub struct InferBody {
    /// The whole body.
    pub bytes: Bytes,
    /// Its content type.
    pub content_type: &'static str,
    /// Length of the JSON header, for the binary extension's `Inference-Header-Content-Length`.
    pub header_len: Option<usize>,
}

impl InferBody {
    /// Encodes `data` (the input of `sig`) in `format`.
    pub fn encode(sig: &ModelSignature, data: &[f32], format: BodyFormat) -> Self {
        assert_eq!(data.len(), sig.len(), "input data does not fit the shape");
        match format {
            BodyFormat::Json => {
                let body = json!({"inputs": [{
                    "name": sig.input,
                    "datatype": "FP32",
                    "shape": sig.shape,
                    "data": data,
                }]});
                Self {
                    bytes: Bytes::from(serde_json::to_vec(&body).expect("JSON values serialise")),
                    content_type: "application/json",
                    header_len: None,
                }
            }
            BodyFormat::Binary => {
                let header = json!({
                    "inputs": [{
                        "name": sig.input,
                        "datatype": "FP32",
                        "shape": sig.shape,
                        "parameters": {"binary_data_size": data.len() * 4},
                    }],
                    "outputs": [{"name": sig.output, "parameters": {"binary_data": true}}],
                });
                let mut bytes = serde_json::to_vec(&header).expect("JSON values serialise");
                let n = bytes.len();
                continuum_wire::fp32::extend_le(&mut bytes, data);
                Self {
                    bytes: Bytes::from(bytes),
                    content_type: "application/octet-stream",
                    header_len: Some(n),
                }
            }
        }
    }

    /// The deterministic reference input of `sig` (the one the worker's tests use), encoded.
    pub fn reference(sig: &ModelSignature, format: BodyFormat) -> Self {
        let data = continuum_wire::reference_input(sig.shape[0], &sig.shape[1..]);
        Self::encode(sig, &data, format)
    }
}
