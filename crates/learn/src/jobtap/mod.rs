//! TapFinger in its own problem (docs/tapfinger.md §1): the agents of
//! [`continuum_infer::tapfinger`]'s network scheduling ML tasks on edge clusters
//! ([`continuum_jobs::ml`]): their graph with running, pending and competitor nodes
//! ([`encode`]), the agents as a scheduler of a run with the ablations ([`agents`]), MAPPO
//! training with reward −(tasks at the cluster) and γ = 1 ([`train`]), the comparison with the
//! rule baselines on held-out seeds ([`evaluate`]) and checkpoints (this module).

pub mod agents;
pub mod encode;
pub mod evaluate;
pub mod train;

pub use agents::{JobAgents, Offer, VARIANTS, Variant, variant};
pub use train::{JobTapLog, JobTapSettings, JobTapTrained};

use crate::agent::write_with_meta;
use anyhow::{Result, anyhow, bail};
use continuum_infer::tapfinger::features::TapFeatures;
use continuum_infer::tapfinger::{FastTapNet, ResolutionName, TapCheckpoint, TapConfig};
use continuum_jobs::ml::Settle;
use std::path::Path;

/// What a checkpoint of this problem records as its topology: this prefix and the variant.
const PROBLEM: &str = "tapfinger-ml-tasks:";

/// Writes `t` (variant `v`, trained with `s`) to `path`, in TapFinger's checkpoint format: the
/// variant is recorded in the header's topology field, the settings in its config.
pub fn save(path: &Path, t: &JobTapTrained, v: Variant, s: &JobTapSettings) -> Result<()> {
    let config = TapConfig {
        episodes: s.updates * s.envs,
        hidden: s.hidden,
        han: v.han,
        pointer: v.offer == Offer::Pointer,
        resolution: match v.settle {
            Settle::Bayes => ResolutionName::Bayes,
            Settle::Random => ResolutionName::UniformPrior,
            Settle::First => ResolutionName::FirstClaim,
        },
        features: TapFeatures::Jobs,
        gamma: s.gamma,
        gae_lambda: s.gae_lambda,
        clip: s.clip,
        epochs: s.epochs,
        minibatch: s.minibatch,
        learning_rate: s.learning_rate,
        entropy: s.entropy,
        value_coef: s.value_coef,
        max_grad_norm: s.max_grad_norm,
        ..TapConfig::default()
    };
    let topology = format!("{PROBLEM}{}", v.name);
    let meta = TapCheckpoint::header_json(t.shape, &topology, &config)?;
    write_with_meta(path, &t.vars, meta)?;
    Ok(())
}

/// Reads a checkpoint written by [`save`]: the network and its variant. A TapFinger checkpoint
/// of the streams problem is refused with what to do.
pub fn load(path: &Path) -> Result<(FastTapNet, Variant)> {
    let ck = TapCheckpoint::load(path)?;
    let name = ck.meta.topology.strip_prefix(PROBLEM);
    let (Some(name), TapFeatures::Jobs) = (name, ck.meta.shape.features) else {
        bail!(
            "{}: a TapFinger checkpoint of the streams problem (trained on `{}`), not of ML \
             tasks: train one with `continuum jobs ml train`",
            path.display(),
            ck.meta.topology
        );
    };
    let v = variant(name).ok_or_else(|| {
        anyhow!(
            "{}: unknown TapFinger variant `{name}` (expected one of {})",
            path.display(),
            VARIANTS.map(|v| v.name).join(", ")
        )
    })?;
    Ok((ck.network(path)?, v))
}
