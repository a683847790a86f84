//! Checkpoints: the online network's weights in safetensors format, with metadata (actions,
//! stream classes and their bucket map, state dimensions, topology fingerprint, the fallback
//! table and deviation margin chosen on validation, hyper-parameters) in the file's header.

use super::config::DqnConfig;
use super::fallback::Fallback;
use super::net::NetShape;
use candle_core::{Device, Tensor};
use candle_nn::VarMap;
use continuum_core::observe::DemandBuckets;
use continuum_core::policy::StreamClasses;
use continuum_core::rng::mix64;
use continuum_core::topology::Topology;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// Format tag written in every checkpoint.
const FORMAT: &str = "continuum-dqn/2";

/// The header metadata key under which a checkpoint's fields are stored (as a JSON object).
const META_KEY: &str = "continuum";

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
    #[error("{path}: not a continuum DQN checkpoint: {message}")]
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

/// A fingerprint of what the state encoding depends on: every scheduler's workers in distance
/// order (cluster id, variant name, replicas). Two topologies with the same fingerprint give
/// states of the same meaning.
pub fn topology_fingerprint(t: &Topology, variant_names: &[String]) -> String {
    let mut h = mix64(0x636f_6e74);
    let mut eat = |bytes: &[u8]| {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            h = mix64(h ^ u64::from_le_bytes(b));
        }
        h = mix64(h ^ bytes.len() as u64);
    };
    for s in &t.schedulers {
        eat(t.clusters[s.cluster].id.as_bytes());
        for r in &s.reach {
            let w = &t.workers[r.worker as usize];
            eat(t.clusters[w.cluster].id.as_bytes());
            eat(variant_names[w.variant].as_bytes());
            eat(&w.replicas.to_le_bytes());
        }
    }
    format!("{h:016x}")
}

/// Everything a checkpoint says besides its weights.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointMeta {
    /// Policy names, in action order.
    pub actions: Vec<String>,
    /// How streams are grouped into the network's heads.
    pub classes: StreamClasses,
    /// Topology name it was trained on.
    pub topology: String,
    /// Fingerprint of that topology.
    pub fingerprint: String,
    /// Network shape.
    pub shape: NetShape,
    /// Hyper-parameters it was trained with.
    pub config: DqnConfig,
    /// What each class does when the network is not confident enough, by load level.
    pub fallback: Fallback,
    /// A class deviates from its fallback action only when the greedy action's value beats
    /// the fallback's by more than this (infinite: never; the agent is then its fallback).
    pub margin: f64,
}

/// A loaded checkpoint.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    /// Its metadata.
    pub meta: CheckpointMeta,
    /// Weights by variable name.
    pub tensors: HashMap<String, Tensor>,
}

/// The metadata's JSON form (one ordered object in the safetensors header: the header's map is
/// a hash map, so several entries would be written in a different order every time).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct MetaJson {
    format: String,
    actions: Vec<String>,
    classes: Vec<String>,
    buckets: DemandBuckets,
    bucket_map: Vec<u16>,
    topology: String,
    topology_fingerprint: String,
    features: usize,
    history: usize,
    conv_channels: usize,
    conv_kernel: usize,
    hidden: usize,
    fallback: Fallback,
    /// The margin; `null` for infinite.
    margin: Option<f64>,
    config: DqnConfig,
}

impl Checkpoint {
    /// Writes the variables of `vars` with `meta` to `path`.
    pub fn save(path: &Path, vars: &VarMap, meta: &CheckpointMeta) -> Result<(), CheckpointError> {
        let io = |m: String| CheckpointError::Io {
            path: path.display().to_string(),
            message: m,
        };
        let json = MetaJson {
            format: FORMAT.into(),
            actions: meta.actions.clone(),
            classes: meta.classes.names().to_vec(),
            buckets: meta.classes.buckets().clone(),
            bucket_map: meta.classes.bucket_map().to_vec(),
            topology: meta.topology.clone(),
            topology_fingerprint: meta.fingerprint.clone(),
            features: meta.shape.features,
            history: meta.shape.history,
            conv_channels: meta.shape.conv_channels,
            conv_kernel: meta.shape.conv_kernel,
            hidden: meta.shape.hidden,
            fallback: meta.fallback.clone(),
            margin: meta.margin.is_finite().then_some(meta.margin),
            config: meta.config.clone(),
        };
        let text = serde_json::to_string(&json).map_err(|e| io(e.to_string()))?;
        write_with_meta(path, vars, text)
    }

    /// Reads a checkpoint; a file that is not one gets [`CheckpointError::Format`].
    pub fn load(path: &Path) -> Result<Self, CheckpointError> {
        let p = path.display().to_string();
        let fmt = |m: String| CheckpointError::Format {
            path: p.clone(),
            message: m,
        };
        let (bytes, raw, format) = read_meta(path)?;
        if format != FORMAT {
            return Err(fmt(format!(
                "format is `{format}`, expected `{FORMAT}` (retrain it with this version: `continuum train`)"
            )));
        }
        let m: MetaJson = serde_json::from_str(&raw).map_err(|e| fmt(format!("metadata: {e}")))?;
        let classes = StreamClasses::new(m.classes, m.buckets, m.bucket_map)
            .map_err(|e| fmt(format!("classes: {e}")))?;
        m.fallback
            .validate(classes.len(), m.actions.len())
            .map_err(|e| fmt(format!("`fallback`: {e}")))?;
        let shape = NetShape {
            features: m.features,
            history: m.history,
            conv_channels: m.conv_channels,
            conv_kernel: m.conv_kernel,
            hidden: m.hidden,
            actions: m.actions.len(),
            classes: classes.len(),
        };
        let tensors = candle_core::safetensors::load_buffer(&bytes, &Device::Cpu)
            .map_err(|e| fmt(e.to_string()))?;
        Ok(Self {
            meta: CheckpointMeta {
                actions: m.actions,
                classes,
                topology: m.topology,
                fingerprint: m.topology_fingerprint,
                shape,
                config: m.config,
                fallback: m.fallback,
                margin: m.margin.unwrap_or(f64::INFINITY),
            },
            tensors,
        })
    }
}

/// Writes the variables of `vars` to `path` in safetensors format (sorted by name), with `meta`
/// (a JSON object) under the header's continuum key.
pub(crate) fn write_with_meta(
    path: &Path,
    vars: &VarMap,
    meta: String,
) -> Result<(), CheckpointError> {
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
    safetensors::serialize_to_file(tensors, Some(header), path).map_err(|e| io(e.to_string()))
}

/// A checkpoint file's bytes, its continuum metadata (JSON text) and that metadata's `format`
/// tag; a file that is not a continuum checkpoint gets [`CheckpointError::Format`].
pub(crate) fn read_meta(path: &Path) -> Result<(Vec<u8>, String, String), CheckpointError> {
    let p = path.display().to_string();
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
pub(crate) fn read_meta_of(
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

/// Sets every variable of `vars` from the same-named tensor of `tensors`; a missing weight or
/// one of another shape is refused with a message naming it.
pub(crate) fn fill_vars(vars: &VarMap, tensors: &HashMap<String, Tensor>) -> Result<(), String> {
    let data = vars.data().lock().expect("var map lock");
    for (name, var) in data.iter() {
        let t = tensors
            .get(name)
            .ok_or_else(|| format!("weight `{name}` is missing"))?;
        if t.dims() != var.dims() {
            return Err(format!(
                "weight `{name}` is {:?}, the network expects {:?}",
                t.dims(),
                var.dims()
            ));
        }
        var.set(t).map_err(|e| format!("`{name}`: {e}"))?;
    }
    Ok(())
}
