//! EdgeTuner in its own problem (docs/tuner.md, "EdgeTuner on batch jobs"): a DRL agent that
//! every 10 s picks the scheduler configuration — one scheduling algorithm and one straggler
//! mitigation — of a cluster running batch jobs (`continuum-jobs`), on the paper's state
//! ([`state`]: node 9-tuples, 10 waiting and 10 running task tuples, a history of 8) and reward
//! ([`reward`]: eqs. 3–6 with the printed constants), learnt by IQN with Ape-X ([`train`]), and
//! judged against every fixed configuration of the paper's comparison sets on held-out seeds
//! ([`evaluate`]).

mod actions;
mod episode;
pub(crate) mod evaluate;
mod reward;
mod settings;
mod state;
mod train;

pub use actions::{ActionSet, Scheduler};
pub use evaluate::{Evaluation, Row, Scenario};
pub use settings::TunerSettings;
pub use train::{CurvePoint, Trained};

use crate::agent::write_with_meta;
use crate::train::apex::ActorNet;
use anyhow::{Context, Result, bail};
use continuum_infer::checkpoint::read_meta_of;
use continuum_infer::weights::Weights;
use continuum_jobs::{JobsWorkload, Mitigation, Nodes};
use episode::Problem;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The checkpoint's format tag.
pub const FORMAT: &str = "edgetuner-jobs";

/// What a tuner's checkpoint says besides its weights.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TunerMeta {
    /// [`FORMAT`].
    pub format: String,
    /// Whose algorithms it chooses among (`kubernetes`, `volcano`).
    pub scheduler: String,
    /// The algorithms, in action order.
    pub algorithms: Vec<String>,
    /// The mitigations, in action order.
    pub mitigations: Vec<String>,
    /// Nodes of the cluster it was trained on (its state's size).
    pub nodes: usize,
    /// The workload file it was trained on, as given.
    #[serde(default)]
    pub workload: Option<String>,
    /// The workload kind it was trained on (`None`: every kind).
    pub kind: Option<String>,
    /// The factor on the workload's arrival rates it was trained at.
    #[serde(default = "one")]
    pub rate_scale: f64,
    /// Training seed.
    pub seed: u64,
    /// Everything else.
    pub settings: TunerSettings,
}

fn one() -> f64 {
    1.0
}

/// Trains a tuner choosing among `actions` on `nodes` under `workload`.
pub fn train_tuner(
    nodes: &Nodes,
    workload: &JobsWorkload,
    actions: &ActionSet,
    settings: &TunerSettings,
    seed: u64,
    progress: &mut dyn FnMut(&CurvePoint),
) -> Result<Trained> {
    let p = Problem {
        nodes,
        workload,
        actions,
        settings,
    };
    train::train(&p, seed, progress)
}

/// Writes `trained`'s network with `meta` to `path`.
pub fn save(path: &Path, trained: &Trained, meta: &TunerMeta) -> Result<()> {
    let text = serde_json::to_string(meta)?;
    write_with_meta(path, &trained.vars, text)?;
    Ok(())
}

/// A tuner read back from its checkpoint.
pub struct Tuner {
    /// Its metadata.
    pub meta: TunerMeta,
    /// Its actions.
    pub actions: ActionSet,
    net: ActorNet,
}

impl Tuner {
    /// Reads a checkpoint (a file, or the folder `jobs train --out` wrote).
    pub fn load(path: &Path) -> Result<Self> {
        let (bytes, raw) = read_meta_of(path, FORMAT, "made by `continuum jobs train`")?;
        let meta: TunerMeta = serde_json::from_str(&raw)
            .with_context(|| format!("{}: the tuner's metadata", path.display()))?;
        let algorithms: Vec<&str> = meta.algorithms.iter().map(String::as_str).collect();
        let mitigations = meta
            .mitigations
            .iter()
            .map(|m| Mitigation::parse(m))
            .collect::<Result<Vec<_>, _>>()?;
        let actions = ActionSet::new(&algorithms, &mitigations)?;
        let weights = Weights::read(&bytes).map_err(anyhow::Error::msg)?;
        let s = &meta.settings;
        let shape = continuum_infer::agent::NetShape {
            features: state::features(meta.nodes, s.waiting, s.running),
            history: s.history,
            conv_channels: s.conv_channels,
            conv_kernel: s.conv_kernel,
            hidden: s.hidden,
            actions: actions.len(),
            classes: 1,
        };
        let net = ActorNet::new(shape, s.quantiles, &weights)
            .with_context(|| format!("{}: the tuner's weights", path.display()))?;
        Ok(Self { meta, actions, net })
    }

    /// Evaluates the tuner on `nodes` under `workload` over `seeds`, runs of `duration_s` of
    /// arrivals.
    pub fn evaluate(
        &self,
        nodes: &Nodes,
        workload: &JobsWorkload,
        seeds: &[u64],
        duration_s: f64,
    ) -> Result<Evaluation> {
        if nodes.len() != self.meta.nodes {
            bail!(
                "the tuner was trained on {} nodes and sees every node: this topology and \
                 workload split into {}",
                self.meta.nodes,
                nodes.len()
            );
        }
        let p = Problem {
            nodes,
            workload,
            actions: &self.actions,
            settings: &self.meta.settings,
        };
        let values = |s: &[f32]| -> Result<Vec<f32>> {
            let mut q = self.net.values(s)?;
            Ok(std::mem::take(&mut q[0][0]))
        };
        evaluate::evaluate(&p, &values, seeds, duration_s)
    }
}

#[cfg(test)]
mod tests;
