//! `continuum meta-train`: an initialisation of the meta-policy network, meta-learnt over
//! generated topologies (Reptile), to adapt from with `continuum train --init … --budget …`.

use anyhow::{Context, Result};
use clap::Args;
use continuum_core::config::Source;
use continuum_core::profiles::Profiles;
use continuum_core::workload::Workload;
use continuum_learn::agent::{Checkpoint, CheckpointMeta, DqnConfig, Fallback};
use continuum_learn::train::meta_learn::{MetaLine, MetaSettings, meta_train};
use std::path::PathBuf;

/// Options of `continuum meta-train`.
#[derive(Debug, Clone, Args)]
pub struct MetaTrainArgs {
    /// The inner learner's hyper-parameters (YAML, as for `train`; `state_workers` must be set).
    #[arg(long, default_value = "config/meta-inner.yaml")]
    pub config: PathBuf,
    /// The task distribution and meta schedule (YAML; absent fields take their defaults).
    #[arg(long)]
    pub meta: Option<PathBuf>,
    /// Variant profiles file (YAML).
    #[arg(long, default_value = "profiles/object-detection.yaml")]
    pub profiles: PathBuf,
    /// Workload file (YAML): its applications are the network's classes.
    #[arg(long, default_value = "workloads/default.yaml")]
    pub workload: PathBuf,
    /// Seed of the initial weights and of the task draws.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Meta-iterations (overrides the meta settings).
    #[arg(long)]
    pub meta_iterations: Option<usize>,
    /// Checkpoint to write (`<stem>.meta.csv` beside it).
    #[arg(long)]
    pub out: PathBuf,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
}

/// Runs `continuum meta-train`.
pub fn execute(a: &MetaTrainArgs) -> Result<()> {
    let cfg = DqnConfig::load(&a.config)?;
    let mut m: MetaSettings = match &a.meta {
        Some(p) => Source::read(p)?.parse()?,
        None => MetaSettings::default(),
    };
    if let Some(i) = a.meta_iterations {
        m.meta_iterations = i;
    }
    let profiles = Profiles::load(&a.profiles)?;
    let workload = Workload::load(&a.workload, &profiles)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(a.threads.unwrap_or(0))
        .build()
        .context("cannot start worker threads")?;
    let progress = |l: &MetaLine| {
        eprintln!(
            "[{:>7.1} s] meta-iteration {}/{}  inner success {:.3}  tasks {}",
            l.wall_s,
            l.iteration + 1,
            m.meta_iterations,
            l.success_ratio,
            l.tasks.join(", ")
        );
    };
    let t = pool.install(|| meta_train(&profiles, &workload, &cfg, &m, a.seed, &progress))?;
    let meta = CheckpointMeta {
        actions: cfg.actions.clone(),
        classes: t.classes.clone(),
        topology: "meta-trained over generated topologies".into(),
        fingerprint: "none: an initialisation for `train --init`".into(),
        shape: t.shape,
        config: cfg.clone(),
        fallback: Fallback::single(vec![0; t.classes.len()]),
        margin: f64::INFINITY,
    };
    Checkpoint::save(&a.out, &t.vars, &meta)?;
    let csv = a.out.with_extension("meta.csv");
    let mut text = String::from("meta_iteration,success_ratio,wall_s,tasks\n");
    for l in &t.log {
        text.push_str(&format!(
            "{},{:.4},{:.1},{}\n",
            l.iteration,
            l.success_ratio,
            l.wall_s,
            l.tasks.join(" | ")
        ));
    }
    std::fs::write(&csv, text).with_context(|| format!("cannot write {}", csv.display()))?;
    eprintln!("wrote {} and {}", a.out.display(), csv.display());
    Ok(())
}
