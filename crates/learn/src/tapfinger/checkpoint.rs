//! Writing TapFinger checkpoints (the shared network's variables with the JSON header of
//! [`TapCheckpoint::header_json`]) and reading one back into a training network (`--init`, and
//! the checks against the plain forward). Reading for decisions is
//! [`continuum_infer::tapfinger::TapCheckpoint`]'s.

use super::net::TapNet;
use crate::agent::{fill_vars, write_with_meta};
use candle_core::{DType, Device};
use candle_nn::{VarBuilder, VarMap};
use continuum_infer::checkpoint::CheckpointError;
use continuum_infer::tapfinger::{TapCheckpoint, TapConfig, TapNetShape};
use std::path::Path;

/// Writes `vars` (a network of `shape` trained with `config` on `topology`) to `path`.
pub fn save(
    path: &Path,
    vars: &VarMap,
    shape: TapNetShape,
    topology: &str,
    config: &TapConfig,
) -> Result<(), CheckpointError> {
    let text =
        TapCheckpoint::header_json(shape, topology, config).map_err(|e| CheckpointError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
    write_with_meta(path, vars, text)
}

/// The training network of checkpoint `ck` (read from `path`), its weights checked against the
/// shape.
pub fn network(ck: &TapCheckpoint, path: &Path) -> Result<(VarMap, TapNet), CheckpointError> {
    let bad = |m: String| CheckpointError::Incompatible {
        path: path.display().to_string(),
        message: m,
    };
    let vm = VarMap::new();
    let net = TapNet::new(
        ck.meta.shape,
        VarBuilder::from_varmap(&vm, DType::F32, &Device::Cpu),
    )
    .map_err(|e| bad(e.to_string()))?;
    fill_vars(&vm, &ck.weights).map_err(bad)?;
    Ok((vm, net))
}
