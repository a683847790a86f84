//! The manifest of a models directory (`models/models.yaml`): which ONNX files there are, their
//! input shape, the batch sizes to profile, and the accuracy of the detector each stands in for.

use super::InferenceError;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// File name of the manifest inside a models directory.
pub const MANIFEST_FILE: &str = "models.yaml";

/// A parsed `models.yaml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The task every model serves (e.g. `object-detection`).
    pub task: String,
    /// The accuracy metric (e.g. `COCO mAP@0.5`).
    pub metric: String,
    /// The models.
    pub models: Vec<ModelEntry>,
    /// The directory the manifest was read from (file paths are relative to it).
    #[serde(skip)]
    pub dir: PathBuf,
}

/// One model of the manifest.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelEntry {
    /// Model name, unique in the manifest.
    pub name: String,
    /// ONNX file, relative to the manifest's directory.
    pub file: PathBuf,
    /// The detector it stands in for (informative).
    #[serde(default)]
    pub stands_in_for: String,
    /// Accuracy in the manifest's metric, in [0, 1].
    pub accuracy: f64,
    /// Where the accuracy comes from.
    #[serde(default)]
    pub accuracy_source: String,
    /// Shape of one input item, without the batch dimension.
    pub input: Vec<usize>,
    /// Batch sizes to profile.
    pub batches: Vec<u32>,
}

impl Manifest {
    /// Reads and checks `dir/models.yaml`.
    pub fn load(dir: &Path) -> Result<Self, InferenceError> {
        let path = dir.join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| InferenceError::Manifest(format!("{}: {e}", path.display())))?;
        let mut m: Manifest = serde_saphyr::from_str(&text)
            .map_err(|e| InferenceError::Manifest(format!("{}: {e}", path.display())))?;
        m.dir = dir.to_path_buf();
        m.check()
            .map_err(|e| InferenceError::Manifest(format!("{}: {e}", path.display())))?;
        Ok(m)
    }

    fn check(&self) -> Result<(), String> {
        if self.models.is_empty() {
            return Err("no models listed".into());
        }
        for (i, m) in self.models.iter().enumerate() {
            if self.models[..i].iter().any(|x| x.name == m.name) {
                return Err(format!("models[{i}]: duplicate model `{}`", m.name));
            }
            if !(0.0..=1.0).contains(&m.accuracy) {
                return Err(format!(
                    "models[{i}].accuracy: expected a fraction in [0, 1], got {}",
                    m.accuracy
                ));
            }
            if m.input.is_empty() || m.input.contains(&0) {
                return Err(format!(
                    "models[{i}].input: expected positive dimensions, got {:?}",
                    m.input
                ));
            }
            if m.batches.is_empty() || m.batches.contains(&0) {
                return Err(format!(
                    "models[{i}].batches: expected batch sizes >= 1, got {:?}",
                    m.batches
                ));
            }
        }
        Ok(())
    }

    /// The model with this name.
    pub fn model(&self, name: &str) -> Option<&ModelEntry> {
        self.models.iter().find(|m| m.name == name)
    }

    /// The full path of a model's ONNX file.
    pub fn path_of(&self, m: &ModelEntry) -> PathBuf {
        self.dir.join(&m.file)
    }
}
