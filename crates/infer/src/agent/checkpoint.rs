//! Checkpoints: the online network's weights in safetensors format, with metadata (actions,
//! stream classes and their bucket map, state dimensions, topology fingerprint, the fallback
//! table and deviation margin chosen on validation, hyper-parameters) in the file's header.

use super::config::DqnConfig;
use super::fallback::Fallback;
use super::fast::NetShape;
use crate::checkpoint::{CheckpointError, read_meta};
use crate::weights::Weights;
use continuum_core::observe::DemandBuckets;
use continuum_core::policy::StreamClasses;
use continuum_core::rng::mix64;
use continuum_core::topology::Topology;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Format tag written in every checkpoint.
const FORMAT: &str = "continuum-dqn/2";

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
    pub weights: Weights,
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
    /// The header's JSON text of `meta`, with this version's format tag (a writer stores it
    /// under [`crate::checkpoint::META_KEY`] beside the weights).
    pub fn header_json(meta: &CheckpointMeta) -> Result<String, serde_json::Error> {
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
        serde_json::to_string(&json)
    }

    /// Reads a checkpoint; a file that is not one gets [`CheckpointError::Format`].
    pub fn load(path: &Path) -> Result<Self, CheckpointError> {
        let p = path.display().to_string();
        let fmt = |m: String| CheckpointError::Format {
            path: p.clone(),
            message: m,
        };
        let (bytes, raw, format) = read_meta(path)?;
        if format.starts_with("continuum-tapfinger/") {
            return Err(fmt(format!(
                "a TapFinger checkpoint (`{format}`), not a meta-policy's: run it as a row, \
                 `--policies tapfinger:{p}`"
            )));
        }
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
            // A topology-free network has one head, evaluated per bucket (docs/model.md §9.9).
            classes: if m.config.state == super::config::StateKind::Situation {
                1
            } else {
                classes.len()
            },
        };
        let weights = Weights::read(&bytes).map_err(fmt)?;
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
            weights,
        })
    }
}
