//! `continuum jobs train | evaluate`: EdgeTuner on batch jobs from the command line
//! (docs/tuner.md, "EdgeTuner on batch jobs"). `train` teaches the tuner on one workload kind
//! and writes its checkpoint and learning curve; `evaluate` runs it on held-out seeds against
//! every fixed configuration of the paper's comparison set and prints the paper's form beside
//! the stricter ones.

mod output;

use anyhow::{Context, Result, anyhow};
use clap::{Args, ValueEnum};
use continuum_jobs::cli::{load_scenario, workload_label};
use continuum_jobs::{JobsWorkload, Mitigation};
use continuum_learn::jobtuner::{
    ActionSet, CurvePoint, FORMAT, Scheduler, Tuner, TunerMeta, TunerSettings, save, train_tuner,
};
use continuum_term::{Progress, ProgressArgs};
use std::path::PathBuf;

/// Where the scenario comes from (both commands).
#[derive(Debug, Args)]
pub struct ScenarioArgs {
    /// Topology file (YAML): its clusters become nodes (the workload's `nodes:` split).
    topology: PathBuf,
    /// Jobs workload file (docs/jobs.md; default workloads/jobs/night.yaml; `evaluate`: the
    /// file the tuner was trained on).
    #[arg(long)]
    workload: Option<PathBuf>,
    /// Variant profiles the topology's deployments name (only read to load the topology).
    #[arg(long, default_value = "profiles/object-detection.yaml")]
    profiles: PathBuf,
    /// Only this kind of the workload arrives, at its own rate (the paper's two workloads:
    /// `dag-batch`, `ai`). `evaluate` defaults to the kind the tuner was trained on.
    #[arg(long)]
    kind: Option<String>,
    /// Every arrival rate times this (> 0): the same jobs more or less often (default 1;
    /// `evaluate`: the factor the tuner was trained at).
    #[arg(long, allow_negative_numbers = true)]
    rate_scale: Option<f64>,
    /// Worker threads (default: every core); results do not depend on it.
    #[arg(long)]
    threads: Option<usize>,
}

/// `continuum jobs train`'s options.
#[derive(Debug, Args)]
pub struct TrainArgs {
    #[command(flatten)]
    scenario: ScenarioArgs,
    /// Whose algorithms the tuner chooses among: `kubernetes` (the paper's DAG batch
    /// workloads) or `volcano` (its AI workloads). Default: kubernetes when every arriving kind
    /// is a DAG, else volcano.
    #[arg(long)]
    scheduler: Option<String>,
    /// Comma-separated mitigations the tuner may choose, or `paper`: none, Res_80%, Res_70%
    /// (and Dis_80%, Dis_70% for volcano), the paper's scenarios.
    #[arg(long, default_value = "paper")]
    mitigations: String,
    /// The tuner's settings (YAML, any of `TunerSettings`' fields, docs/tuner.md); the flags
    /// below override it.
    #[arg(long)]
    settings: Option<PathBuf>,
    /// Training episodes (default 32).
    #[arg(long)]
    episodes: Option<usize>,
    /// Arrivals per training episode, s (default 3600).
    #[arg(long, allow_negative_numbers = true)]
    episode_s: Option<f64>,
    /// How long a training episode may run on after its arrivals, s (default 3600).
    #[arg(long, allow_negative_numbers = true)]
    drain: Option<f64>,
    /// Ape-X actors per round (default: the paper's 8).
    #[arg(long)]
    actors: Option<usize>,
    /// Seed of the network, the episodes and the exploration.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Folder for `checkpoint.edgetuner`, `curve.csv`, `learning_curve.svg` and `rounds.json`.
    #[arg(long, default_value = "out/jobs-tuner")]
    out: PathBuf,
    #[command(flatten)]
    progress: ProgressArgs,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Text tables.
    Table,
    /// JSON.
    Json,
}

/// `continuum jobs evaluate`'s options.
#[derive(Debug, Args)]
pub struct EvaluateArgs {
    #[command(flatten)]
    scenario: ScenarioArgs,
    /// The tuner: a checkpoint, or the folder `jobs train --out` wrote.
    #[arg(long)]
    checkpoint: PathBuf,
    /// Comma-separated held-out seeds (training draws 64-bit seeds of its own).
    #[arg(long, default_value = "1,2,3,4,5")]
    seeds: String,
    /// Arrivals per run, s; every run goes on until its last job completes.
    #[arg(long, default_value_t = 3600.0, allow_negative_numbers = true)]
    duration: f64,
    /// Output format on standard output.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Also write `evaluation.json` into this folder (checked before the runs).
    #[arg(long)]
    out: Option<PathBuf>,
}

/// The mitigations of `list` (`paper`: the scenarios of the paper's Tables 2–3).
fn mitigations(list: &str, scheduler: Scheduler) -> Result<Vec<Mitigation>> {
    let names: Vec<&str> = match (list.trim(), scheduler) {
        ("paper", Scheduler::Kubernetes) => vec!["none", "Res_80%", "Res_70%"],
        ("paper", Scheduler::Volcano) => {
            vec!["none", "Res_80%", "Res_70%", "Dis_80%", "Dis_70%"]
        }
        (l, _) => l
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect(),
    };
    names
        .iter()
        .map(|n| Mitigation::parse(n).map_err(|e| anyhow!("--mitigations: {e}")))
        .collect()
}

/// Kubernetes when every kind that arrives is a DAG, else Volcano.
fn default_scheduler(w: &JobsWorkload) -> Scheduler {
    let dag = w
        .kinds
        .iter()
        .filter(|k| k.share > 0.0)
        .all(|k| k.dag.is_some());
    if dag {
        Scheduler::Kubernetes
    } else {
        Scheduler::Volcano
    }
}

/// `continuum jobs train`.
pub fn train(a: &TrainArgs) -> Result<()> {
    let pool = crate::thread_pool(a.scenario.threads)?;
    let (ckpt, w) =
        continuum_core::config::prepare_out(&a.out, "checkpoint.edgetuner", &["edgetuner"])
            .map_err(anyhow::Error::msg)?;
    if let Some(w) = w {
        eprintln!("{w}");
    }
    let s = &a.scenario;
    let rate_scale = s.rate_scale.unwrap_or(1.0);
    let workload_path = s
        .workload
        .clone()
        .unwrap_or_else(|| PathBuf::from("workloads/jobs/night.yaml"));
    let (topology, workload, nodes) = load_scenario(
        &s.topology,
        &s.profiles,
        &workload_path,
        s.kind.as_deref(),
        rate_scale,
    )?;
    let scheduler = match &a.scheduler {
        Some(x) => Scheduler::parse(x).map_err(|e| anyhow!("--scheduler: {e}"))?,
        None => default_scheduler(&workload),
    };
    let ms = mitigations(&a.mitigations, scheduler)?;
    let actions = ActionSet::new(scheduler.algorithms(), &ms)?;
    let mut settings = match &a.settings {
        Some(f) => continuum_core::config::Source::read(f)?.parse::<TunerSettings>()?,
        None => TunerSettings::default(),
    };
    settings.episodes = a.episodes.unwrap_or(settings.episodes);
    settings.episode_s = a.episode_s.unwrap_or(settings.episode_s);
    settings.drain_s = a.drain.unwrap_or(settings.drain_s);
    settings.actors = a.actors.unwrap_or(settings.actors);
    settings.check().map_err(|e| anyhow!("{e}"))?;
    let progress = Progress::new(a.progress);
    progress.line(&format!(
        "EdgeTuner on {} ({} nodes), {} actions, {} episodes of {} s",
        topology.name,
        nodes.len(),
        actions.len(),
        settings.episodes,
        settings.episode_s
    ));
    let mut on_episode = |c: &CurvePoint| {
        progress.step(
            "train",
            &format!(
                "JTL {:.0} s  reward {:.2}  ε {:.3}",
                c.mean_jtl_s, c.mean_reward, c.epsilon
            ),
            c.episode + 1,
            settings.episodes,
        )
    };
    let trained = pool.install(|| {
        train_tuner(
            &nodes,
            &workload,
            &actions,
            &settings,
            a.seed,
            &mut on_episode,
        )
    })?;
    progress.finish();
    let meta = TunerMeta {
        format: FORMAT.into(),
        scheduler: scheduler.name().into(),
        algorithms: scheduler
            .algorithms()
            .iter()
            .map(|x| x.to_string())
            .collect(),
        mitigations: ms.iter().map(Mitigation::name).collect(),
        nodes: nodes.len(),
        workload: Some(workload_path.display().to_string()),
        kind: s.kind.clone(),
        rate_scale,
        seed: a.seed,
        settings,
    };
    save(&ckpt, &trained, &meta)?;
    let dir = ckpt.parent().map(PathBuf::from).unwrap_or_default();
    output::write_training(&dir, &trained, &topology.name)?;
    eprintln!(
        "wrote {} (and curve.csv, learning_curve.svg, rounds.json beside it)",
        ckpt.display()
    );
    Ok(())
}

/// `continuum jobs evaluate`.
pub fn evaluate(a: &EvaluateArgs) -> Result<()> {
    let pool = crate::thread_pool(a.scenario.threads)?;
    let out = match &a.out {
        Some(o) => {
            let (f, w) = continuum_core::config::prepare_out(o, "evaluation.json", &["json"])
                .map_err(anyhow::Error::msg)?;
            if let Some(w) = w {
                eprintln!("{w}");
            }
            Some(f)
        }
        None => None,
    };
    let seeds = a
        .seeds
        .split(',')
        .map(|x| x.trim().parse::<u64>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| {
            anyhow!(
                "--seeds: expected comma-separated whole numbers, got `{}`",
                a.seeds
            )
        })?;
    if seeds.is_empty() {
        return Err(anyhow!("--seeds: expected at least one seed"));
    }
    if !(a.duration.is_finite() && a.duration > 0.0) {
        return Err(anyhow!(
            "--duration: expected a finite value > 0, got {}",
            a.duration
        ));
    }
    let tuner = Tuner::load(&a.checkpoint)?;
    let s = &a.scenario;
    let kind = s.kind.clone().or_else(|| tuner.meta.kind.clone());
    let rate_scale = s.rate_scale.unwrap_or(tuner.meta.rate_scale);
    let workload_path = match (&s.workload, &tuner.meta.workload) {
        (Some(w), _) => w.clone(),
        (None, Some(w)) => PathBuf::from(w),
        (None, None) => PathBuf::from("workloads/jobs/night.yaml"),
    };
    let (topology, workload, nodes) = load_scenario(
        &s.topology,
        &s.profiles,
        &workload_path,
        kind.as_deref(),
        rate_scale,
    )?;
    let expected = workload.mean_per_min() * a.duration / 60.0;
    if expected > continuum_jobs::sim::MAX_JOBS {
        return Err(anyhow!(
            "--duration: {} s expects {expected:.0} jobs; at most {:.0}",
            a.duration,
            continuum_jobs::sim::MAX_JOBS
        ));
    }
    let ev = pool
        .install(|| tuner.evaluate(&nodes, &workload, &seeds, a.duration))
        .context("evaluation")?;
    let json = continuum_core::config::versioned_json(&output::Evaluated {
        topology: &topology.name,
        workload: workload_label(&workload_path, kind.as_deref(), rate_scale),
        checkpoint: a.checkpoint.display().to_string(),
        evaluation: &ev,
    })?;
    match a.format {
        Format::Json => crate::print(&(json.clone() + "\n"))?,
        Format::Table => crate::print(&output::text_table(&ev, &topology.name))?,
    }
    if let Some(path) = out {
        std::fs::write(&path, &json).with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}
