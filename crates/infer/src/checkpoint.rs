//! What every continuum checkpoint shares: a safetensors file whose header holds one JSON object
//! under the `continuum` key, with a `format` tag naming its kind and version; and the errors of
//! reading one.

use std::path::Path;

/// The header metadata key under which a checkpoint's fields are stored (as a JSON object).
pub const META_KEY: &str = "continuum";

/// Why a checkpoint cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The file cannot be read or written.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        message: String,
    },
    /// The file is not a continuum checkpoint, or is damaged.
    #[error("{path}: not a continuum checkpoint: {message}")]
    Format {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The checkpoint was trained for another topology or action set.
    #[error("{path}: incompatible checkpoint: {message}")]
    Incompatible {
        /// The file.
        path: String,
        /// What differs.
        message: String,
    },
}

/// A checkpoint file's bytes, its continuum metadata (JSON text) and that metadata's `format`
/// tag; a file that is not a continuum checkpoint gets [`CheckpointError::Format`].
/// A folder (what a training's `--out` made) stands for the one `checkpoint.*` file in it.
pub fn read_meta(path: &Path) -> Result<(Vec<u8>, String, String), CheckpointError> {
    let p = path.display().to_string();
    let path = &continuum_core::config::checkpoint_in(path).ok_or_else(|| CheckpointError::Io {
        path: p.clone(),
        message: "a folder without exactly one checkpoint.* file in it".into(),
    })?;
    let bytes = std::fs::read(path).map_err(|e| CheckpointError::Io {
        path: p.clone(),
        message: e.to_string(),
    })?;
    let fmt = |m: String| CheckpointError::Format {
        path: p.clone(),
        message: m,
    };
    let (_, header) =
        safetensors::SafeTensors::read_metadata(&bytes).map_err(|e| fmt(e.to_string()))?;
    let raw = header
        .metadata()
        .as_ref()
        .and_then(|m| m.get(META_KEY))
        .ok_or_else(|| fmt("no continuum metadata".into()))?
        .clone();
    let format = serde_json::from_str::<serde_json::Value>(&raw)
        .ok()
        .and_then(|v| v.get("format").and_then(|f| f.as_str()).map(String::from))
        .ok_or_else(|| fmt("metadata lacks `format`".into()))?;
    Ok((bytes, raw, format))
}

/// A checkpoint file's bytes and metadata (JSON text) when its format tag is `expected`; another
/// tag is [`CheckpointError::Incompatible`], `hint` saying how such a checkpoint is made.
pub fn read_meta_of(
    path: &Path,
    expected: &str,
    hint: &str,
) -> Result<(Vec<u8>, String), CheckpointError> {
    let (bytes, raw, format) = read_meta(path)?;
    if format != expected {
        return Err(CheckpointError::Incompatible {
            path: path.display().to_string(),
            message: format!("format is `{format}`, expected `{expected}` ({hint})"),
        });
    }
    Ok((bytes, raw))
}
