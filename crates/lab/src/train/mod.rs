//! Training runs as the command line starts them: `continuum train` (the meta-policy's DQN or
//! policy gradient in [`dqn`], TapFinger's MAPPO in [`tapfinger`]) and `continuum meta-train`
//! (Reptile over generated topologies in [`meta_train`](mod@meta_train), split into units of
//! work for a distributed driver in [`meta_train_steps`]). Each loads its scenario and
//! hyper-parameters, trains through `continuum_learn` with progress on standard error, and writes
//! the checkpoint, the episode log and the learning curve.

mod apex;
mod dqn;
mod meta_train;
mod meta_train_steps;
mod tapfinger;
mod universal;

use clap::Args;
use continuum_term::ProgressArgs;
use std::path::PathBuf;

pub use meta_train::MetaTrainArgs;
pub use universal::TrainUniversalArgs;

/// Runs `continuum train`: TapFinger's training for a TapFinger config (`method: tapfinger`),
/// else the meta-policy's.
pub fn train(args: &TrainArgs) -> anyhow::Result<()> {
    let tapfinger = continuum_infer::tapfinger::TapConfig::is_tapfinger(&args.config);
    let mut args = args.clone();
    // An Ape-X actor's --out is the learner's hand-off file, not an output folder.
    if args.apex_actor.is_none() {
        let kind = if tapfinger { "tapfinger" } else { "dqn" };
        let name = continuum_core::config::checkpoint_name(kind);
        let (file, warning) =
            continuum_core::config::prepare_out(&args.out, &name, &[kind, "ckpt", "safetensors"])
                .map_err(anyhow::Error::msg)?;
        if let Some(w) = warning {
            eprintln!("{w}");
        }
        args.out = file;
    }
    if tapfinger {
        return tapfinger::execute(&args);
    }
    if let Some(init) = &args.init {
        let ck = continuum_infer::agent::Checkpoint::load(init)?;
        if ck.meta.config.state == continuum_infer::agent::StateKind::Situation {
            let sc = continuum_sim::Scenario::load(&args.topology, &args.profiles, &args.workload)?;
            if let Some(b) = args.budget {
                check_budget(b)?;
            }
            let pool = crate::thread_pool(args.threads)?;
            return universal::adapt(&sc, &ck, args.budget, args.seed, &args.out, &pool);
        }
    }
    dqn::execute(&args)
}

/// Runs `continuum train-universal`: the topology-free meta-policy across generated networks.
pub fn train_universal(args: &TrainUniversalArgs) -> anyhow::Result<()> {
    universal::execute(args)
}

/// Runs `continuum meta-train`: the whole run, or one of its units of work.
pub fn meta_train(args: &MetaTrainArgs) -> anyhow::Result<()> {
    meta_train_steps::execute(args)
}

/// Checks a `--budget` value: a positive, finite number of simulated queries.
fn check_budget(b: f64) -> anyhow::Result<f64> {
    if b > 0.0 && b.is_finite() {
        Ok(b)
    } else {
        anyhow::bail!("--budget: expected a positive number of simulated queries, got {b}")
    }
}

/// Options of `continuum train`.
#[derive(Debug, Clone, Args)]
pub struct TrainArgs {
    /// Topology file (YAML).
    pub topology: PathBuf,
    /// Variant profiles file (YAML).
    #[arg(long, default_value = "profiles/object-detection.yaml")]
    pub profiles: PathBuf,
    /// Workload file (YAML); its λ is replaced by the config's `lambda_range`.
    #[arg(long, default_value = "workloads/default.yaml")]
    pub workload: PathBuf,
    /// Hyper-parameters (YAML); absent fields take their defaults.
    #[arg(long, default_value = "config/dqn.yaml")]
    pub config: PathBuf,
    /// Training episodes (overrides the config).
    #[arg(long)]
    pub episodes: Option<usize>,
    /// Seed of the network initialisation, exploration and episode workloads.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Actual worker capacity against the profiles while training (overrides the config's
    /// `capacity_scale`; EdgeTuner's protocol trains one checkpoint per resource level).
    #[arg(long)]
    pub capacity_scale: Option<f64>,
    /// Folder to write into: `checkpoint.dqn` (or `checkpoint.tapfinger`),
    /// `checkpoint.training.csv` and `checkpoint.training_curve.svg`; any command reading a
    /// checkpoint takes the folder too. (A file name, `--out out/fe.dqn`, is the former form:
    /// accepted, with a warning.)
    #[arg(long)]
    pub out: PathBuf,
    /// Start from this checkpoint's network (adaptation or transfer): a meta-policy checkpoint
    /// with the same actions, classes and state size (see `state_workers`), or for a TapFinger
    /// config (`method: tapfinger`) a TapFinger checkpoint with the same network shape.
    #[arg(long)]
    pub init: Option<PathBuf>,
    /// Simulated queries of the training episodes (overrides the config's `budget_queries`,
    /// which counts the validation too; e.g. a tenth of a full training's episodes to adapt
    /// from `--init`). Below the config's own episode share, the fallback tables' and margin's
    /// validation shrinks with it to keep its share of the run (a shorter horizon, fewer seeds,
    /// margins and load levels, at the smallest no tables; each change is printed), so one
    /// number bounds every phase. Smoke size: `--budget 1e6` (seconds on 2 cores; one short
    /// episode, no tables).
    #[arg(long)]
    pub budget: Option<f64>,
    /// Worker threads (default: all cores). Training is reproducible for a given seed and
    /// thread count.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Also write the network every N episodes, as `<out stem>.at-<episodes>.dqn` (the network
    /// alone: no fallback tables, no margin), for learning curves.
    #[arg(long, value_name = "N")]
    pub snapshot_every: Option<usize>,
    /// Ape-X with actors in other processes (a config with an `apex:` block; what
    /// `python -m continuum_ray train` runs): be the learner, asking for each round's actors on
    /// standard output (a JSON line) and reading their output files' paths on standard input.
    #[arg(long, conflicts_with = "apex_actor")]
    pub apex_learner: bool,
    /// Ape-X: run one actor's episode, `EPISODE:ACTOR`, with the learner's weights
    /// (`--weights`), and write its transitions to `--out`.
    #[arg(long, value_name = "EPISODE:ACTOR", requires = "weights")]
    pub apex_actor: Option<String>,
    /// The learner's weights for `--apex-actor` (as the learner wrote them).
    #[arg(long, requires = "apex_actor")]
    pub weights: Option<PathBuf>,
    /// Progress on standard error.
    #[command(flatten)]
    pub progress: ProgressArgs,
}
