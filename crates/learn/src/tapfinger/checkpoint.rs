//! TapFinger checkpoints: the shared network's weights in safetensors format with a JSON header
//! (format tag, network shape, feature sizes, the config it was trained with and on which
//! topology). Nothing in it depends on the topology's size: any checkpoint serves any topology.

use super::config::TapConfig;
use super::features::{CLUSTER_FEATURES, EDGE_FEATURES, PENDING_FEATURES, WORKER_FEATURES};
use super::net::{TapNet, TapNetShape};
use crate::agent::CheckpointError;
use crate::agent::checkpoint::{fill_vars, read_meta_of, write_with_meta};
use candle_core::{DType, Device, Tensor};
use candle_nn::{VarBuilder, VarMap};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
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
    pub tensors: HashMap<String, Tensor>,
}

fn feature_sizes() -> [usize; 4] {
    [
        CLUSTER_FEATURES,
        PENDING_FEATURES,
        WORKER_FEATURES,
        EDGE_FEATURES,
    ]
}

impl TapCheckpoint {
    /// Writes `vars` with their metadata to `path`.
    pub fn save(
        path: &Path,
        vars: &VarMap,
        shape: TapNetShape,
        topology: &str,
        config: &TapConfig,
    ) -> Result<(), CheckpointError> {
        let io = |m: String| CheckpointError::Io {
            path: path.display().to_string(),
            message: m,
        };
        let meta = TapMeta {
            format: FORMAT.into(),
            shape,
            features: feature_sizes(),
            topology: topology.into(),
            config: config.clone(),
        };
        let text = serde_json::to_string(&meta).map_err(|e| io(e.to_string()))?;
        write_with_meta(path, vars, text)
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
        if meta.features != feature_sizes() {
            return Err(CheckpointError::Incompatible {
                path: p,
                message: format!(
                    "its features are {:?} (cluster, pending, worker, edge), this build encodes {:?}",
                    meta.features,
                    feature_sizes()
                ),
            });
        }
        let tensors = candle_core::safetensors::load_buffer(&bytes, &Device::Cpu)
            .map_err(|e| fmt(e.to_string()))?;
        Ok(Self { meta, tensors })
    }

    /// The network of this checkpoint (its weights checked against the shape).
    pub fn network(&self, path: &Path) -> Result<(VarMap, TapNet), CheckpointError> {
        let bad = |m: String| CheckpointError::Incompatible {
            path: path.display().to_string(),
            message: m,
        };
        let vm = VarMap::new();
        let net = TapNet::new(
            self.meta.shape,
            VarBuilder::from_varmap(&vm, DType::F32, &Device::Cpu),
        )
        .map_err(|e| bad(e.to_string()))?;
        fill_vars(&vm, &self.tensors).map_err(bad)?;
        Ok((vm, net))
    }
}
