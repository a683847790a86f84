//! DeepRM checkpoints: the network's weights in safetensors format with a JSON header (format
//! tag, shape, the config it was trained with, how it was made).

use super::net::{PgNet, PgShape};
use super::train::PgConfig;
use candle_nn::VarMap;
use continuum_infer::checkpoint::{CheckpointError, read_meta_of};
use continuum_infer::weights::Weights;
use continuum_learn::agent::flat;
use continuum_learn::agent::{fill_vars, write_with_meta};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Format tag written in every DeepRM checkpoint.
const FORMAT: &str = "continuum-deeprm/1";

/// Everything a checkpoint says besides its weights.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PgMeta {
    /// Format tag.
    pub format: String,
    /// Network shape.
    pub shape: PgShape,
    /// The config it was trained (or adapted) with.
    pub config: PgConfig,
    /// How it was made: `train`, `meta-train`, `adapt from <file>`.
    pub origin: String,
}

/// A loaded DeepRM checkpoint.
#[derive(Debug, Clone)]
pub struct PgCheckpoint {
    /// Its metadata.
    pub meta: PgMeta,
    /// Its weights, flattened in variable-name order.
    pub weights: Vec<f32>,
}

impl PgCheckpoint {
    /// Writes `vars` (a network `net`) trained with `config` to `path`.
    pub fn save(
        path: &Path,
        vars: &VarMap,
        net: &PgNet,
        config: &PgConfig,
        origin: &str,
    ) -> Result<(), CheckpointError> {
        let meta = PgMeta {
            format: FORMAT.into(),
            shape: net.shape(),
            config: *config,
            origin: origin.into(),
        };
        let text = serde_json::to_string(&meta).map_err(|e| CheckpointError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        write_with_meta(path, vars, text)
    }

    /// Reads a checkpoint; a file that is not a DeepRM checkpoint of this version gets a clear
    /// [`CheckpointError`].
    pub fn load(path: &Path) -> Result<Self, CheckpointError> {
        let p = path.display().to_string();
        let fmt = |m: String| CheckpointError::Format {
            path: p.clone(),
            message: m,
        };
        let (bytes, raw) = read_meta_of(
            path,
            FORMAT,
            "a checkpoint of `continuum deeprm train` or `meta-train`",
        )?;
        let meta: PgMeta = serde_json::from_str(&raw).map_err(|e| fmt(format!("metadata: {e}")))?;
        let tensors = Weights::read(&bytes).map_err(fmt)?;
        let (vars, _) = super::net::build(meta.shape, 0).map_err(|e| fmt(e.to_string()))?;
        fill_vars(&vars, &tensors).map_err(fmt)?;
        let weights = flat(&vars).map_err(|e| fmt(e.to_string()))?;
        Ok(Self { meta, weights })
    }

    /// The weights to start training `shape` from, or why they cannot be (a different
    /// environment size, hidden width or critic).
    pub fn init_for(&self, shape: PgShape, path: &Path) -> Result<&[f32], CheckpointError> {
        if self.meta.shape != shape {
            return Err(CheckpointError::Incompatible {
                path: path.display().to_string(),
                message: format!(
                    "its network is {:?}, this config trains {:?} (same environment sizes, hidden units and critic needed)",
                    self.meta.shape, shape
                ),
            });
        }
        Ok(&self.weights)
    }

    /// The network for acting.
    pub fn network(&self) -> candle_core::Result<(VarMap, PgNet)> {
        let (vars, net) = super::net::build(self.meta.shape, 0)?;
        continuum_learn::agent::set_flat(&vars, &self.weights)?;
        Ok((vars, net))
    }
}
