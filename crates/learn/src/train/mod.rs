//! Training the meta-policy (docs/model.md §9): episodes of the simulation, collected in parallel, teach
//! one branching network shared by every scheduler (one head per stream class); then the
//! fallback table and the deviation margin are chosen on validation episodes
//! ([`select`]). Reproducible for a given seed and thread count: environments and forks run in
//! parallel but their results are merged in a fixed order, and every random draw comes from a
//! seeded stream.

pub mod apex;
mod budget;
mod counterfactual;
mod curve;
mod edgetuner_reward;
mod env;
mod episodes;
pub mod meta_train;
mod select;

pub use crate::episode::EpisodeSpec;
pub use budget::{Budget, fit as fit_budget, fit_horizon};
pub use counterfactual::{CfSettings, class_values};
pub use curve::{plot_training_curve, training_csv};
pub use env::{CF_SETTLE_MS, EpisodeEnd, MetaEnv};
pub use select::{LevelChoice, Selection, level_lambdas, select};

use crate::agent::LearnSettings;
use anyhow::Result;
use candle_nn::VarMap;
use continuum_core::policy::StreamClasses;
use continuum_infer::agent::{
    Algorithm, CheckpointMeta, ClassMode, Credit, DqnConfig, Fallback, NetShape, StateEncoder,
    topology_fingerprint,
};
use continuum_sim::Scenario;
use serde::Serialize;
use std::path::Path;
use std::time::Instant;

/// Cosines of an implicit quantile network's τ embedding (`algorithm: iqn`; n = 64 in Dabney et
/// al., 2018).
const IQN_COSINES: usize = 64;

/// What one finished episode did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EpisodeLog {
    /// Episode number, from 0, in order of completion.
    pub episode: usize,
    /// Time-average client rate, clients/min/antenna.
    pub lambda: f64,
    /// Seed.
    pub seed: u64,
    /// Windows run.
    pub windows: usize,
    /// Why it ended.
    pub end: String,
    /// Mean value of the actions taken (a reward; with counterfactual credit, how much better
    /// than the average action of the class the taken one was, > 0 once the agent chooses well).
    pub mean_reward: f64,
    /// Success ratio of all its queries.
    pub success_ratio: f64,
    /// ε when it ended.
    pub epsilon: f64,
    /// Mean loss of the gradient steps taken while it ran (0 before learning starts).
    pub mean_loss: f64,
    /// Wall-clock seconds since training started.
    pub wall_s: f64,
}

/// What training reports as it goes.
pub enum TrainEvent<'a> {
    /// An episode finished (with the planned episode count).
    Episode(&'a EpisodeLog, usize),
    /// A phase started (a line for the user).
    Phase(&'a str),
    /// Episodes finished so far, and the network's weights now (after every round of
    /// finished episodes; for snapshots along the way).
    Learnt {
        /// Episodes finished.
        episodes: usize,
        /// The network's variables at this point.
        vars: &'a VarMap,
    },
    /// A step of a long phase is about to run: `done` of `total` steps are behind it.
    Step {
        /// The phase, e.g. `fallback tables`.
        phase: &'a str,
        /// What this step is, e.g. `λ 50`.
        what: String,
        /// Steps done.
        done: usize,
        /// Steps in the phase.
        total: usize,
    },
}

/// Progress callback.
pub type Progress<'a> = &'a (dyn Fn(TrainEvent) + Sync);

/// What training produced besides the checkpoint.
#[derive(Debug, Clone)]
pub struct TrainOutcome {
    /// Per episode.
    pub logs: Vec<EpisodeLog>,
    /// The validation that chose the fallback and the margin.
    pub selection: Selection,
    /// The episode budget.
    pub budget: Budget,
    /// Ape-X's rounds (empty without an `apex:` block).
    pub apex_rounds: Vec<apex::ApexRound>,
}

/// The weights of checkpoint `path` as the starting point of training `cfg` on `scenario`, or
/// why they cannot be: another state size (the topology's reach; see `state_workers`), other
/// actions or classes.
pub fn init_weights_from(scenario: &Scenario, cfg: &DqnConfig, path: &Path) -> Result<VarMap> {
    let ck = continuum_infer::agent::Checkpoint::load(path)?;
    let classes = classes_for(scenario, cfg);
    let encoder = StateEncoder::new(&scenario.topology, &scenario.fleet, cfg);
    let want = (
        encoder.features(),
        encoder.history(),
        classes.len(),
        cfg.actions.clone(),
    );
    let have = (
        ck.meta.shape.features,
        ck.meta.shape.history,
        ck.meta.shape.classes,
        ck.meta.actions.clone(),
    );
    if want != have {
        anyhow::bail!(
            "--init {}: incompatible checkpoint: it has state {}×{}, {} classes and actions {:?}; \
             this training needs {}×{}, {} classes and {:?} (set the same `state_workers`, \
             workload and actions)",
            path.display(),
            have.0,
            have.1,
            have.2,
            have.3,
            want.0,
            want.1,
            want.2,
            want.3
        );
    }
    let (vars, _) = crate::agent::build(ck.meta.shape, 0)?;
    crate::agent::fill_vars(&vars, &ck.weights)
        .map_err(|m| anyhow::anyhow!("--init {}: incompatible checkpoint: {m}", path.display()))?;
    Ok(vars)
}

/// The classes `cfg` asks for on `scenario`'s workload.
pub fn classes_for(scenario: &Scenario, cfg: &DqnConfig) -> StreamClasses {
    match cfg.classes {
        ClassMode::PerApp => StreamClasses::from_workload(&scenario.workload, &cfg.buckets),
        ClassMode::Single => StreamClasses::single(),
        ClassMode::Demand => StreamClasses::per_bucket(&cfg.buckets),
    }
}

/// Trains on `scenario` with `cfg` from `seed` (or from the weights `init`, of the same shape),
/// writes the checkpoint to `out`, and returns the episode log and the validation.
pub fn train(
    scenario: &Scenario,
    cfg: &DqnConfig,
    seed: u64,
    init: Option<&VarMap>,
    out: &Path,
    progress: Progress,
) -> Result<TrainOutcome> {
    train_with_actors(scenario, cfg, seed, init, out, progress, None)
}

/// [`train`], with an Ape-X config's actors on `actors` (this process's threads when `None`).
pub fn train_with_actors(
    scenario: &Scenario,
    cfg: &DqnConfig,
    seed: u64,
    init: Option<&VarMap>,
    out: &Path,
    progress: Progress,
    actors: Option<&mut dyn apex::ActorPool>,
) -> Result<TrainOutcome> {
    let Learnt {
        vars,
        shape,
        classes,
        logs,
        budget,
        apex_rounds,
    } = learn_with_actors(scenario, cfg, seed, init, progress, actors)?;
    let mut meta = network_meta(scenario, cfg, shape, &classes);
    progress(TrainEvent::Phase(if cfg.fallback_levels == 0 {
        "no fallback tables and no margin (fallback_levels: 0)"
    } else {
        "choosing the fallback tables and the margin on held-out episodes"
    }));
    let selection = select(scenario, &meta, &vars, seed, progress)?;
    meta.fallback = selection.fallback.clone();
    meta.margin = selection.margin;
    crate::agent::save(out, &vars, &meta)?;
    Ok(TrainOutcome {
        logs,
        selection,
        budget,
        apex_rounds,
    })
}

/// The network's shape for `encoder`'s states, `cfg`'s layers and actions, `classes`' heads.
fn shape_of(encoder: &StateEncoder, cfg: &DqnConfig, classes: &StreamClasses) -> NetShape {
    NetShape {
        features: encoder.features(),
        history: encoder.history(),
        conv_channels: cfg.conv_channels,
        conv_kernel: cfg.conv_kernel,
        hidden: cfg.hidden,
        actions: cfg.actions.len(),
        classes: classes.len(),
    }
}

/// [`network_meta`] of the network training `cfg` on `scenario` builds: a snapshot's metadata.
pub fn snapshot_meta(scenario: &Scenario, cfg: &DqnConfig) -> CheckpointMeta {
    let classes = classes_for(scenario, cfg);
    let encoder = StateEncoder::new(&scenario.topology, &scenario.fleet, cfg);
    network_meta(scenario, cfg, shape_of(&encoder, cfg, &classes), &classes)
}

/// The metadata of a checkpoint of `cfg`'s network on `scenario` (of `shape`, with `classes`)
/// before any validation: no fallback tables, no margin (the network alone decides).
pub fn network_meta(
    scenario: &Scenario,
    cfg: &DqnConfig,
    shape: NetShape,
    classes: &StreamClasses,
) -> CheckpointMeta {
    CheckpointMeta {
        actions: cfg.actions.clone(),
        classes: classes.clone(),
        topology: scenario.topology.name.clone(),
        fingerprint: topology_fingerprint(&scenario.topology, &scenario.profiles.variant_names()),
        shape,
        config: cfg.clone(),
        fallback: Fallback::single(vec![0; classes.len()]),
        margin: f64::INFINITY,
    }
}

/// What the training episodes produced: the network's weights and shape, the classes, the log.
pub struct Learnt {
    /// The network's variables.
    pub vars: VarMap,
    /// Its shape.
    pub shape: NetShape,
    /// The stream classes of its heads.
    pub classes: StreamClasses,
    /// One line per episode.
    pub logs: Vec<EpisodeLog>,
    /// The episode budget it ran.
    pub budget: Budget,
    /// Ape-X's rounds (empty without an `apex:` block).
    pub apex_rounds: Vec<apex::ApexRound>,
}

/// What every training of a config on a scenario sizes itself by.
pub(crate) struct Setup {
    classes: StreamClasses,
    encoder: StateEncoder,
    shape: NetShape,
    settings: LearnSettings,
    budget: Budget,
}

impl Setup {
    fn new(scenario: &Scenario, cfg: &DqnConfig) -> Result<Self> {
        cfg.validate()
            .map_err(|(f, m)| anyhow::anyhow!("{f}: {m}"))?;
        let classes = classes_for(scenario, cfg);
        let encoder = StateEncoder::new(&scenario.topology, &scenario.fleet, cfg);
        let shape = shape_of(&encoder, cfg, &classes);
        let settings = LearnSettings {
            gamma: if cfg.credit == Credit::Counterfactual {
                0.0
            } else {
                cfg.gamma
            },
            learning_rate: cfg.learning_rate,
            max_grad_norm: cfg.max_grad_norm,
            target_update_interval: cfg.target_update_interval,
            quantiles: if cfg.algorithm == Algorithm::Iqn {
                IQN_COSINES
            } else {
                0
            },
        };
        let budget = Budget::plan(scenario, cfg, classes.len());
        Ok(Self {
            classes,
            encoder,
            shape,
            settings,
            budget,
        })
    }
}

/// The training episodes alone (no fallback tables, no margin, no checkpoint): from `init` or
/// weights drawn from `seed`, within `cfg`'s budget. Meta-training's inner loop.
pub fn learn(
    scenario: &Scenario,
    cfg: &DqnConfig,
    seed: u64,
    init: Option<&VarMap>,
    progress: Progress,
) -> Result<Learnt> {
    learn_with_actors(scenario, cfg, seed, init, progress, None)
}

/// [`learn`], with an Ape-X config's actors on `actors` (this process's threads when `None`).
pub fn learn_with_actors(
    scenario: &Scenario,
    cfg: &DqnConfig,
    seed: u64,
    init: Option<&VarMap>,
    progress: Progress,
    actors: Option<&mut dyn apex::ActorPool>,
) -> Result<Learnt> {
    crate::episode::check_mix(cfg, &scenario.workload).map_err(anyhow::Error::msg)?;
    let setup = Setup::new(scenario, cfg)?;
    let start = Instant::now();
    progress(TrainEvent::Phase(&format!(
        "plan: {} episodes of {:.2e} simulated queries (forks included), then {:.2e} for the \
         fallback tables and margin ({} classes, {} actions)",
        setup.budget.episodes,
        setup.budget.episode_queries,
        setup.budget.validation_queries,
        setup.classes.len(),
        cfg.actions.len()
    )));
    if let Some(a) = &cfg.apex {
        progress(TrainEvent::Phase(&format!(
            "Ape-X: {} actors, one episode each per round, a prioritised replay (α {}, β {})",
            a.actors, a.priority_exponent, a.importance_exponent
        )));
        return apex::learn(scenario, cfg, setup, seed, init, progress, actors);
    }
    episodes::learn(scenario, cfg, setup, seed, init, start, progress)
}
