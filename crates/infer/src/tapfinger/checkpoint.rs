//! TapFinger checkpoints: the shared network's weights in safetensors format with a JSON header
//! (format tag, network shape, feature sizes, the config it was trained with and on which
//! topology). Nothing in it depends on the topology's size: any checkpoint serves any topology.

use super::config::TapConfig;
use super::fast::{FastTapNet, TapNetShape};
use crate::checkpoint::{CheckpointError, read_meta_of};
use crate::weights::Weights;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Format tag written in every TapFinger checkpoint.
const FORMAT: &str = "continuum-tapfinger/1";

/// Everything a checkpoint says besides its weights.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TapMeta {
    /// Format tag.
    pub format: String,
    /// Network shape.
    pub shape: TapNetShape,
    /// Feature sizes: cluster, pending, worker, edge.
    pub features: [usize; 4],
    /// The topology it was trained on (informative).
    pub topology: String,
    /// Training settings.
    pub config: TapConfig,
}

/// A loaded TapFinger checkpoint.
#[derive(Debug, Clone)]
pub struct TapCheckpoint {
    /// Its metadata.
    pub meta: TapMeta,
    /// Weights by variable name.
    pub weights: Weights,
}

impl TapCheckpoint {
    /// The header's JSON text of a checkpoint of a network of `shape` trained with `config` on
    /// `topology` (a writer stores it under [`crate::checkpoint::META_KEY`] beside the weights).
    pub fn header_json(
        shape: TapNetShape,
        topology: &str,
        config: &TapConfig,
    ) -> Result<String, serde_json::Error> {
        serde_json::to_string(&TapMeta {
            format: FORMAT.into(),
            shape,
            features: shape.features.widths(),
            topology: topology.into(),
            config: config.clone(),
        })
    }

    /// Reads a checkpoint; a file that is not a TapFinger checkpoint of this version gets a
    /// clear [`CheckpointError`].
    pub fn load(path: &Path) -> Result<Self, CheckpointError> {
        let p = path.display().to_string();
        let fmt = |m: String| CheckpointError::Format {
            path: p.clone(),
            message: m,
        };
        let (bytes, raw) = read_meta_of(
            path,
            FORMAT,
            "a TapFinger checkpoint of this version: `continuum train --config config/tapfinger.yaml`",
        )?;
        let meta: TapMeta =
            serde_json::from_str(&raw).map_err(|e| fmt(format!("metadata: {e}")))?;
        let widths = meta.shape.features.widths();
        if meta.features != widths {
            return Err(CheckpointError::Incompatible {
                path: p,
                message: format!(
                    "its features are {:?} (cluster, pending, worker, edge), this build encodes {:?} for its feature set `{:?}`",
                    meta.features, widths, meta.shape.features
                ),
            });
        }
        let weights = Weights::read(&bytes).map_err(fmt)?;
        Ok(Self { meta, weights })
    }

    /// The network of this checkpoint in plain Rust (its weights checked against the shape).
    pub fn network(&self, path: &Path) -> Result<FastTapNet, CheckpointError> {
        FastTapNet::read(self.meta.shape, &self.weights).map_err(|m| {
            CheckpointError::Incompatible {
                path: path.display().to_string(),
                message: m,
            }
        })
    }
}
