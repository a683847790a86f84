//! `continuum meta-train`: an initialisation of the meta-policy network, meta-learnt over
//! generated topologies (Reptile), to adapt from with `continuum train --init … --budget …`.
//!
//! The same run can be split into units of work for a distributed driver
//! ([`super::meta_train_steps`], which also dispatches the command): `--plan`, then per
//! meta-iteration every `--inner <it>:<task>` (any machine) and one `--outer <it>` (gathering
//! them); the last `--outer` writes the checkpoint the whole run writes, bit for bit.

use anyhow::{Context, Result};
use clap::Args;
use continuum_core::config::Source;
use continuum_core::policy::StreamClasses;
use continuum_core::profiles::Profiles;
use continuum_core::workload::Workload;
use continuum_infer::agent::{CheckpointMeta, DqnConfig, Fallback, NetShape};
use continuum_learn::train::meta_train::{MetaTrainLine, MetaTrainSettings, meta_train};
use std::path::PathBuf;

/// Options of `continuum meta-train`.
#[derive(Debug, Clone, Args)]
pub struct MetaTrainArgs {
    /// The inner learner's hyper-parameters (YAML, as for `train`; `state_workers` must be set).
    #[arg(long, default_value = "config/meta-inner.yaml")]
    pub config: PathBuf,
    /// The task distribution and meta-training schedule (YAML; absent fields take their defaults).
    #[arg(long, long_help = settings_help())]
    pub meta: Option<PathBuf>,
    /// Simulated queries of the whole meta-training: each inner training gets this divided by
    /// meta-iterations × tasks (overrides `task_budget_queries`). Smoke size: `--budget 1e7
    /// --meta-iterations 1`.
    #[arg(long)]
    pub budget: Option<f64>,
    /// Variant profiles file (YAML).
    #[arg(long, default_value = "profiles/object-detection.yaml")]
    pub profiles: PathBuf,
    /// Workload file (YAML): its applications are the network's classes.
    #[arg(long, default_value = "workloads/default.yaml")]
    pub workload: PathBuf,
    /// Seed of the initial weights and of the task draws.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Meta-iterations (overrides the meta-training settings).
    #[arg(long)]
    pub meta_iterations: Option<usize>,
    /// Folder to write into: `checkpoint.dqn` and `checkpoint.meta.csv` (a file name,
    /// `--out out/meta.dqn`, is the former form: accepted, with a warning). With `--inner` or
    /// `--outer` (units of work the Ray driver runs): the file of the inner run's weights, or
    /// θ after the iteration.
    #[arg(long, required_unless_present = "plan")]
    pub out: Option<PathBuf>,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Split run: print the meta-iterations and tasks per iteration as JSON, run nothing.
    #[arg(long, conflicts_with_all = ["inner", "outer"])]
    pub plan: bool,
    /// Split run: inner training `<iteration>:<task>` alone, from `--theta` (none at iteration
    /// 0); prints its task and success ratio as JSON.
    #[arg(long, value_name = "IT:TASK", conflicts_with = "outer")]
    pub inner: Option<String>,
    /// Split run: the outer step of iteration `<it>` from `--theta` and `--inner-runs`.
    #[arg(long, value_name = "IT", requires = "inner_runs")]
    pub outer: Option<usize>,
    /// Split run: θ before this iteration (as `--outer` of the previous one wrote it).
    #[arg(long)]
    pub theta: Option<PathBuf>,
    /// Split run, `--outer`: the iteration's inner checkpoints in task order (comma-separated),
    /// each with the JSON `--inner` printed beside it (`<file>.json`).
    #[arg(long, value_delimiter = ',')]
    pub inner_runs: Vec<PathBuf>,
    /// Split run, `--outer`: seconds since the run began (the log's wall-clock column).
    #[arg(long, default_value_t = 0.0)]
    pub wall_s: f64,
    /// Progress on standard error (a line per meta-iteration).
    #[command(flatten)]
    pub progress: continuum_term::ProgressArgs,
}

/// What meta-training needs, loaded and checked.
pub(super) struct Loaded {
    pub cfg: DqnConfig,
    pub m: MetaTrainSettings,
    pub profiles: Profiles,
    pub workload: Workload,
}

impl Loaded {
    /// Loads the files `a` names.
    pub(super) fn from(a: &MetaTrainArgs) -> Result<Self> {
        let cfg = DqnConfig::load(&a.config)?;
        let mut m: MetaTrainSettings = match &a.meta {
            Some(p) => Source::read(p)?.parse()?,
            None => MetaTrainSettings::default(),
        };
        if let Some(i) = a.meta_iterations {
            m.meta_iterations = i;
        }
        if let Some(b) = a.budget {
            super::check_budget(b)?;
            m.task_budget_queries = b / (m.meta_iterations.max(1) * m.tasks.max(1)) as f64;
            m.shorten_horizon = true;
        }
        let profiles = Profiles::load(&a.profiles)?;
        let workload = Workload::load(&a.workload, &profiles)?;
        Ok(Self {
            cfg,
            m,
            profiles,
            workload,
        })
    }

    /// The metadata of every checkpoint meta-training writes (θ, inner runs, the result).
    pub(super) fn checkpoint_meta(
        &self,
        shape: NetShape,
        classes: &StreamClasses,
    ) -> CheckpointMeta {
        CheckpointMeta {
            actions: self.cfg.actions.clone(),
            classes: classes.clone(),
            topology: "meta-trained over generated topologies".into(),
            fingerprint: "none: an initialisation for `train --init`".into(),
            shape,
            config: self.cfg.clone(),
            fallback: Fallback::single(vec![0; classes.len()]),
            margin: f64::INFINITY,
        }
    }
}

/// The log file beside checkpoint `out`.
pub(super) fn log_path(out: &std::path::Path) -> PathBuf {
    out.with_extension("meta.csv")
}

/// The log's header and one line per meta-iteration.
pub(super) const LOG_HEADER: &str = "meta_iteration,success_ratio,wall_s,tasks\n";

/// One line of the log.
pub(super) fn log_line(l: &MetaTrainLine) -> String {
    format!(
        "{},{:.4},{:.1},{}\n",
        l.iteration,
        l.success_ratio,
        l.wall_s,
        l.tasks.join(" | ")
    )
}

/// Runs the whole of `continuum meta-train` on `pool` (the split steps:
/// [`super::meta_train_steps`]).
pub(super) fn whole(a: &MetaTrainArgs, l: &Loaded, pool: &rayon::ThreadPool) -> Result<()> {
    let out = a
        .out
        .as_ref()
        .context("--out: expected the folder to write into")?;
    let (file, warning) = continuum_core::config::prepare_out(
        out,
        &continuum_core::config::checkpoint_name("dqn"),
        &["dqn", "ckpt", "safetensors"],
    )
    .map_err(anyhow::Error::msg)?;
    if let Some(w) = warning {
        eprintln!("{w}");
    }
    let out = &file;
    let m = &l.m;
    eprintln!(
        "meta-training: {} meta-iterations × {} tasks, {:.2e} simulated queries each",
        m.meta_iterations, m.tasks, m.task_budget_queries
    );
    let reporter = continuum_term::Progress::new(a.progress);
    let progress = |line: &MetaTrainLine| {
        let done = line.iteration + 1;
        let left = line.wall_s / done as f64 * m.meta_iterations.saturating_sub(done) as f64;
        reporter.line(&format!(
            "meta-iteration {done}/{}  inner success {:.3}  tasks {}  (about {left:.0} s left)",
            m.meta_iterations,
            line.success_ratio,
            line.tasks.join(", ")
        ));
    };
    let t = pool.install(|| meta_train(&l.profiles, &l.workload, &l.cfg, m, a.seed, &progress));
    reporter.finish();
    let t = t?;
    continuum_learn::agent::save(out, &t.vars, &l.checkpoint_meta(t.shape, &t.classes))?;
    let csv = log_path(out);
    let text: String = std::iter::once(LOG_HEADER.to_string())
        .chain(t.log.iter().map(log_line))
        .collect();
    std::fs::write(&csv, text).with_context(|| format!("cannot write {}", csv.display()))?;
    eprintln!("wrote {} and {}", out.display(), csv.display());
    Ok(())
}

/// `--meta`'s long help: the file's fields with their defaults, drawn from the settings' type.
fn settings_help() -> String {
    let defaults = serde_json::to_value(MetaTrainSettings::default()).unwrap_or_default();
    let fields = defaults
        .as_object()
        .map(|o| {
            o.iter()
                .map(|(k, v)| format!("  {k}: {v}"))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    format!(
        "The task distribution and meta-training schedule (YAML; absent fields take their defaults). \
         Fields and defaults (docs/model.md §9.8 says what they mean):\n{fields}"
    )
}
