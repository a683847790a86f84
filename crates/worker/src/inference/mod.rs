//! Real inference on ONNX models: the backend chosen at start-up ([`backend`]), the model
//! manifest of `models/` ([`manifest`]) and one loaded model ([`Model`]).
//!
//! Every model here takes one `FP32` input tensor `[N, …]` (dynamic batch N) and returns one
//! `FP32` output tensor `[N, …]`; the worker and the profiler rely on that.

pub mod backend;
pub use continuum_wire::fp32;
pub mod manifest;
mod model;

pub use backend::{Backend, BackendChoice};
pub use manifest::{Manifest, ModelEntry};
pub use model::{Model, Tensor};

/// Errors of the inference layer.
#[derive(Debug, thiserror::Error)]
pub enum InferenceError {
    /// No backend could be initialised.
    #[error("inference backend: {0}")]
    Backend(String),
    /// A model file could not be loaded or has an unsupported signature.
    #[error("model {path}: {msg}")]
    Load {
        /// The model file.
        path: String,
        /// What is wrong.
        msg: String,
    },
    /// The input does not fit the model.
    #[error("{0}")]
    BadInput(String),
    /// The runtime failed while running the model.
    #[error("inference failed: {0}")]
    Run(String),
    /// The manifest could not be read or is invalid.
    #[error("{0}")]
    Manifest(String),
}

pub use continuum_wire::reference_input;
