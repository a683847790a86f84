//! Writing checkpoints: a network's candle variables in safetensors format (sorted by name) with
//! the metadata's JSON under the header's continuum key; and the way back, a checkpoint's weights
//! into a training network's variables. Reading a checkpoint, and its format, belong to
//! [`continuum_infer::checkpoint`].

use candle_core::{Device, Tensor};
use candle_nn::VarMap;
use continuum_infer::agent::{Checkpoint, CheckpointMeta};
use continuum_infer::checkpoint::{CheckpointError, META_KEY};
use continuum_infer::weights::Weights;
use std::collections::HashMap;
use std::path::Path;

/// Writes the variables of `vars` with `meta` to `path` as a meta-policy checkpoint.
pub fn save(path: &Path, vars: &VarMap, meta: &CheckpointMeta) -> Result<(), CheckpointError> {
    let text = Checkpoint::header_json(meta).map_err(|e| CheckpointError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    write_with_meta(path, vars, text)
}

/// Writes the variables of `vars` to `path` in safetensors format (sorted by name), with `meta`
/// (a JSON object) under the header's continuum key.
pub fn write_with_meta(path: &Path, vars: &VarMap, meta: String) -> Result<(), CheckpointError> {
    let io = |m: String| CheckpointError::Io {
        path: path.display().to_string(),
        message: m,
    };
    let header: HashMap<String, String> = [(META_KEY.to_string(), meta)].into_iter().collect();
    let data = vars.data().lock().expect("var map lock");
    let mut tensors: Vec<(String, Tensor)> = data
        .iter()
        .map(|(k, v)| (k.clone(), v.as_tensor().clone()))
        .collect();
    tensors.sort_by(|a, b| a.0.cmp(&b.0));
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| io(e.to_string()))?;
    }
    let bytes = safetensors::serialize(tensors, Some(header)).map_err(|e| io(e.to_string()))?;
    replace_file(path, &bytes).map_err(|e| io(e.to_string()))
}

/// Writes `bytes` to a sibling of `path`, then renames it over `path`: a reader (or an mmap)
/// of the old file never sees it half-written, and the file gets the user's umask like any
/// other output (safetensors' own writer goes through a temporary file created mode 0600).
fn replace_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path
        .file_name()
        .map_or_else(|| "checkpoint".into(), |n| n.to_string_lossy().into_owned());
    let tmp = path.with_file_name(format!(".{name}.{}.partial", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Writes `weights` to `path` in safetensors format (what [`Weights::read`] reads back, every
/// f32 bit for bit), with no metadata: how a learner hands its weights to actors in other
/// processes.
pub fn write_weights(path: &Path, weights: &Weights) -> Result<(), CheckpointError> {
    let io = |m: String| CheckpointError::Io {
        path: path.display().to_string(),
        message: m,
    };
    let bytes: Vec<(String, Vec<usize>, Vec<u8>)> = weights
        .iter()
        .map(|(name, p)| {
            let data = p.data.iter().flat_map(|x| x.to_le_bytes()).collect();
            (name.to_string(), p.dims.clone(), data)
        })
        .collect();
    let views = bytes
        .iter()
        .map(|(name, dims, data)| {
            safetensors::tensor::TensorView::new(safetensors::Dtype::F32, dims.clone(), data)
                .map(|v| (name.clone(), v))
                .map_err(|e| io(e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let bytes = safetensors::serialize(views, None).map_err(|e| io(e.to_string()))?;
    replace_file(path, &bytes).map_err(|e| io(e.to_string()))
}

/// Sets every variable of `vars` from the same-named weight of `weights`; a missing weight or
/// one of another shape is refused with a message naming it.
pub fn fill_vars(vars: &VarMap, weights: &Weights) -> Result<(), String> {
    let data = vars.data().lock().expect("var map lock");
    for (name, var) in data.iter() {
        let w = weights.tensor(name, var.dims())?;
        let t = Tensor::from_slice(w, var.dims(), &Device::Cpu)
            .map_err(|e| format!("`{name}`: {e}"))?;
        var.set(&t).map_err(|e| format!("`{name}`: {e}"))?;
    }
    Ok(())
}

/// The variables of `vars` as plain weights (what the plain-Rust forwards read).
pub fn weights_of(vars: &VarMap) -> candle_core::Result<Weights> {
    let data = vars.data().lock().expect("var map lock");
    let mut w = Weights::default();
    for (name, var) in data.iter() {
        let t = var.as_tensor();
        w.insert(
            name.clone(),
            t.dims().to_vec(),
            t.flatten_all()?.to_vec1::<f32>()?,
        );
    }
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_checkpoint_gets_the_same_mode_as_any_other_output() {
        let dir = tempfile::tempdir().unwrap();
        let other = dir.path().join("curve.csv");
        std::fs::write(&other, "x").unwrap();
        let vars = VarMap::new();
        vars.get(
            (2, 3),
            "w",
            candle_nn::Init::Const(1.0),
            candle_core::DType::F32,
            &Device::Cpu,
        )
        .unwrap();
        let ck = dir.path().join("a.dqn");
        write_with_meta(&ck, &vars, "{}".into()).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&ck), mode(&other), "the umask's mode, not 0600");
        // Written again over itself, and nothing left beside it.
        write_with_meta(&ck, &vars, "{}".into()).unwrap();
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }
}
