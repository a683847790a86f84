//! One loaded ONNX model: an `ort` session with a single FP32 input and output.

use super::{InferenceError, backend};
pub use continuum_wire::Tensor;
use ort::session::Session;
use ort::value::{TensorElementType, TensorRef, ValueType};
use std::path::Path;

/// An ONNX model ready to run batches.
pub struct Model {
    session: Session,
    input_name: String,
    output_name: String,
    item_shape: Vec<usize>,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("input", &self.input_name)
            .field("output", &self.output_name)
            .field("item_shape", &self.item_shape)
            .finish_non_exhaustive()
    }
}

fn load_err(path: &Path, msg: impl ToString) -> InferenceError {
    InferenceError::Load {
        path: path.display().to_string(),
        msg: msg.to_string(),
    }
}

impl Model {
    /// Loads `path` on the process backend (initialised as `auto` if not yet chosen), with
    /// `threads` intra-op threads. `item_shape` is the shape of one input item (without the
    /// batch); it is checked against the model's declared input where the runtime reports it.
    pub fn load(path: &Path, threads: usize, item_shape: &[usize]) -> Result<Self, InferenceError> {
        if backend::current().is_none() {
            backend::init(backend::BackendChoice::from_env()?)?;
        }
        if !path.is_file() {
            return Err(load_err(path, "no such file"));
        }
        let env = backend::environment()
            .ok_or_else(|| InferenceError::Backend("no ort environment".into()))?;
        let session = Session::builder(env)
            .map_err(|e| load_err(path, e))?
            .with_intra_threads(threads.max(1))
            .map_err(|e| load_err(path, e))?
            .with_inter_threads(1)
            .map_err(|e| load_err(path, e))?
            .commit_from_file(path)
            .map_err(|e| load_err(path, e))?;
        if session.inputs().len() != 1 || session.outputs().len() != 1 {
            return Err(load_err(
                path,
                format!(
                    "expected one input and one output, found {} and {}",
                    session.inputs().len(),
                    session.outputs().len()
                ),
            ));
        }
        let input = &session.inputs()[0];
        if let ValueType::Tensor { ty, shape, .. } = input.dtype() {
            if ty != &TensorElementType::Float32 {
                return Err(load_err(path, format!("input must be FP32, not {ty:?}")));
            }
            let dims: Vec<i64> = shape.iter().copied().collect();
            let fits = dims.len() == item_shape.len() + 1
                && dims[1..]
                    .iter()
                    .zip(item_shape)
                    .all(|(d, s)| *d < 0 || *d as usize == *s);
            if !dims.is_empty() && !fits {
                return Err(load_err(
                    path,
                    format!("input shape {dims:?} does not match [N] + {item_shape:?}"),
                ));
            }
        }
        Ok(Self {
            input_name: input.name().to_string(),
            output_name: session.outputs()[0].name().to_string(),
            item_shape: item_shape.to_vec(),
            session,
        })
    }

    /// Name of the model's input tensor.
    pub fn input_name(&self) -> &str {
        &self.input_name
    }

    /// Name of the model's output tensor.
    pub fn output_name(&self) -> &str {
        &self.output_name
    }

    /// The shape of one input item (without the batch dimension).
    pub fn item_shape(&self) -> &[usize] {
        &self.item_shape
    }

    /// Elements in one input item.
    pub fn item_len(&self) -> usize {
        self.item_shape.iter().product()
    }

    /// Runs a batch of `n` items laid out one after the other in `data`.
    pub fn run(&mut self, n: usize, data: &[f32]) -> Result<Tensor, InferenceError> {
        if n == 0 || data.len() != n * self.item_len() {
            return Err(InferenceError::BadInput(format!(
                "expected {n} items of {:?} ({} values), got {} values",
                self.item_shape,
                n * self.item_len(),
                data.len()
            )));
        }
        let mut shape = Vec::with_capacity(self.item_shape.len() + 1);
        shape.push(n);
        shape.extend_from_slice(&self.item_shape);
        let input = TensorRef::from_array_view((shape, data))
            .map_err(|e| InferenceError::Run(e.to_string()))?;
        let outputs = self
            .session
            .run(ort::inputs![self.input_name.as_str() => input])
            .map_err(|e| InferenceError::Run(e.to_string()))?;
        let (shape, values) = outputs[self.output_name.as_str()]
            .try_extract_tensor::<f32>()
            .map_err(|e| InferenceError::Run(e.to_string()))?;
        let shape: Vec<usize> = shape.iter().map(|d| (*d).max(0) as usize).collect();
        if shape.first() != Some(&n) {
            return Err(InferenceError::Run(format!(
                "output shape {shape:?} does not start with the batch {n}"
            )));
        }
        Ok(Tensor {
            shape,
            data: values.to_vec(),
        })
    }
}
