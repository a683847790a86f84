//! `continuum jobs ml compare | train`: TapFinger in its own problem from the command line
//! (docs/tapfinger.md §1). `compare` runs the rule baselines (Optimus, Tiresias, Random, Min,
//! prior-pull) and any trained agents on the same ML tasks of each case and held-out seed;
//! `train` teaches one variant (TapFinger or an ablation) with MAPPO and writes its checkpoint
//! and learning curve.

mod output;

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, Subcommand, ValueEnum};
use continuum_jobs::ml::{MlSetting, RULES};
use continuum_learn::jobtap::evaluate::{Case, Method, evaluate};
use continuum_learn::jobtap::{JobTapSettings, VARIANTS, variant};
use continuum_term::{Progress, ProgressArgs};
use std::path::PathBuf;

/// `continuum jobs ml …`.
#[derive(Debug, Subcommand)]
pub enum MlCmd {
    /// The rules and trained agents on the same tasks of each case and seed: total completion
    /// time, mean JCT and makespan, and each method's change against the best rule.
    Compare(CompareArgs),
    /// Train TapFinger (or an ablation) with MAPPO on drawn settings; writes
    /// `checkpoint.tapfinger`, `curve.csv` and `learning_curve.svg`.
    Train(TrainArgs),
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A text table.
    Table,
    /// JSON.
    Json,
}

/// `continuum jobs ml compare`'s options.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Comma-separated cases, each `N:λ` (N clusters of 16 cores and 16 GPUs, λ arrivals per
    /// timestep) or `het:λ` (TapFinger's six clusters of 4 to 32 units).
    #[arg(long, default_value = "3:2,6:4")]
    cases: String,
    /// Comma-separated methods: rules (`optimus`, `tiresias`, `random`, `min`, `prior-pull`)
    /// or `rules` for all of them.
    #[arg(long, default_value = "rules")]
    methods: String,
    /// Trained agents to compare too (a checkpoint, or the folder `jobs ml train` wrote),
    /// labelled by their variant or as `label=path`; repeatable.
    #[arg(long)]
    checkpoint: Vec<PathBuf>,
    /// Comma-separated held-out seeds.
    #[arg(long, default_value = "1,2,3,4,5")]
    seeds: String,
    /// Timesteps a started task loses when its allocation changes (TapFinger §V-B: 0.5;
    /// §V-C grants Optimus and Tiresias 0).
    #[arg(long, default_value_t = 0.5, allow_negative_numbers = true)]
    overhead: f64,
    /// Tasks per cluster (TapFinger: 64).
    #[arg(long, default_value_t = continuum_jobs::ml::workload::TASKS_PER_CLUSTER)]
    tasks_per_cluster: usize,
    /// Output format on standard output.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Also write `comparison.json` into this folder.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Worker threads (default: every core); results do not depend on it.
    #[arg(long)]
    threads: Option<usize>,
}

/// `continuum jobs ml train`'s options.
#[derive(Debug, Args)]
pub struct TrainArgs {
    /// What to train: `tapfinger`, or an ablation (`no-han`, `no-pointer`, `vanilla-marl`).
    #[arg(long, default_value = "tapfinger")]
    variant: String,
    /// Training settings (YAML, any field of the settings, docs/tapfinger.md); the flags below
    /// override it.
    #[arg(long)]
    settings: Option<PathBuf>,
    /// PPO updates.
    #[arg(long)]
    updates: Option<usize>,
    /// Environments per update, run in parallel.
    #[arg(long)]
    envs: Option<usize>,
    /// Hidden width.
    #[arg(long)]
    hidden: Option<usize>,
    /// Seed of the network, the environments and the draws.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Folder for `checkpoint.tapfinger`, `curve.csv` and `learning_curve.svg`.
    #[arg(long, default_value = "out/jobs-tapfinger")]
    out: PathBuf,
    /// Worker threads (default: every core); the checkpoint does not depend on it.
    #[arg(long)]
    threads: Option<usize>,
    #[command(flatten)]
    progress: ProgressArgs,
}

/// Runs `continuum jobs ml …`.
pub fn run(cmd: &MlCmd) -> Result<()> {
    match cmd {
        MlCmd::Compare(a) => compare(a),
        MlCmd::Train(a) => train(a),
    }
}

/// The cases of `--cases`.
fn cases(list: &str, overhead: f64, per_cluster: usize) -> Result<Vec<Case>> {
    let mut out = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let bad = || anyhow!("--cases: `{item}`: expected `N:λ` (e.g. `3:2`) or `het:λ`");
        let (n, rate) = item.split_once(':').ok_or_else(bad)?;
        let rate: f64 = rate.trim().parse().map_err(|_| bad())?;
        let (mut setting, label) = if n.trim() == "het" {
            (
                MlSetting::heterogeneous(rate),
                format!("6 heterogeneous, λ {rate}"),
            )
        } else {
            let n: usize = n.trim().parse().map_err(|_| bad())?;
            if n == 0 {
                return Err(bad());
            }
            (
                MlSetting::synthetic(n, rate),
                format!("{n} clusters, λ {rate}"),
            )
        };
        setting.overhead = overhead;
        setting.tasks = per_cluster * setting.clusters.len();
        setting
            .validate()
            .map_err(|e| anyhow!("--cases: `{item}`: {e}"))?;
        out.push(Case { label, setting });
    }
    if out.is_empty() {
        bail!("--cases: expected at least one case");
    }
    Ok(out)
}

/// The methods of `--methods` and `--checkpoint`.
fn methods(list: &str, checkpoints: &[PathBuf]) -> Result<Vec<Method>> {
    let mut out = Vec::new();
    for m in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if m == "rules" {
            out.extend(RULES.iter().map(|r| Method::Rule(r.to_string())));
        } else if RULES.contains(&m) {
            out.push(Method::Rule(m.to_string()));
        } else {
            bail!(
                "--methods: unknown method `{m}` (expected `rules` or one of {}; trained agents \
                 come with --checkpoint)",
                RULES.join(", ")
            );
        }
    }
    for c in checkpoints {
        let text = c.to_string_lossy();
        let (label, c) = match text.split_once('=') {
            Some((l, p)) if !l.is_empty() && !c.exists() => (Some(l.to_string()), PathBuf::from(p)),
            _ => (None, c.clone()),
        };
        let path = if c.is_dir() {
            c.join("checkpoint.tapfinger")
        } else {
            c
        };
        let (net, v) = continuum_learn::jobtap::load(&path)?;
        let label = label.unwrap_or_else(|| v.name.to_string());
        if out.iter().any(|m: &Method| m.label() == label) {
            bail!("--checkpoint: two methods labelled `{label}`: label one as `label=path`");
        }
        out.push(Method::Learned(label, Box::new(net), v));
    }
    if out.is_empty() {
        bail!("--methods: expected at least one method");
    }
    Ok(out)
}

fn seeds(list: &str) -> Result<Vec<u64>> {
    let s: Vec<u64> = list
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse()
                .map_err(|_| anyhow!("--seeds: `{s}` is not a seed"))
        })
        .collect::<Result<_>>()?;
    if s.is_empty() {
        bail!("--seeds: expected at least one seed");
    }
    Ok(s)
}

/// `continuum jobs ml compare`.
pub fn compare(a: &CompareArgs) -> Result<()> {
    if !(0.0..1.0).contains(&a.overhead) {
        bail!("--overhead: expected [0, 1) timesteps, got {}", a.overhead);
    }
    if a.tasks_per_cluster == 0 {
        bail!("--tasks-per-cluster: expected at least 1");
    }
    let cases = cases(&a.cases, a.overhead, a.tasks_per_cluster)?;
    let methods = methods(&a.methods, &a.checkpoint)?;
    let seeds = seeds(&a.seeds)?;
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let pool = crate::thread_pool(a.threads)?;
    let rows = pool.install(|| evaluate(&cases, &seeds, &methods));
    match a.format {
        Format::Table => print!("{}", output::text_table(&rows)),
        Format::Json => println!("{}", serde_json::to_string_pretty(&rows)?),
    }
    if let Some(dir) = &a.out {
        let p = dir.join("comparison.json");
        std::fs::write(&p, serde_json::to_string_pretty(&rows)?)
            .with_context(|| format!("writing {}", p.display()))?;
        eprintln!("wrote {}", p.display());
    }
    Ok(())
}

/// `continuum jobs ml train`.
pub fn train(a: &TrainArgs) -> Result<()> {
    let v = variant(&a.variant).ok_or_else(|| {
        anyhow!(
            "--variant: unknown `{}` (expected one of {})",
            a.variant,
            VARIANTS.map(|v| v.name).join(", ")
        )
    })?;
    let mut s = match &a.settings {
        Some(f) => continuum_core::config::Source::read(f)?.parse::<JobTapSettings>()?,
        None => JobTapSettings::default(),
    };
    s.updates = a.updates.unwrap_or(s.updates);
    s.envs = a.envs.unwrap_or(s.envs);
    s.hidden = a.hidden.unwrap_or(s.hidden);
    s.check().map_err(|e| anyhow!("{e}"))?;
    let (ckpt, w) =
        continuum_core::config::prepare_out(&a.out, "checkpoint.tapfinger", &["tapfinger"])
            .map_err(anyhow::Error::msg)?;
    if let Some(w) = w {
        eprintln!("{w}");
    }
    let pool = crate::thread_pool(a.threads)?;
    let progress = Progress::new(a.progress);
    progress.line(&format!(
        "{} on ML tasks: {} updates × {} environments, hidden {}",
        v.name, s.updates, s.envs, s.hidden
    ));
    let on_update = |l: &continuum_learn::jobtap::JobTapLog| {
        progress.step(
            "train",
            &format!("mean JCT {:.2}  entropy {:.3}", l.mean_jct, l.entropy),
            l.update + 1,
            s.updates,
        )
    };
    let trained =
        pool.install(|| continuum_learn::jobtap::train::train(v, &s, a.seed, &on_update))?;
    progress.finish();
    continuum_learn::jobtap::save(&ckpt, &trained, v, &s)?;
    let dir = ckpt.parent().map(PathBuf::from).unwrap_or_default();
    let curve = dir.join("curve.csv");
    std::fs::write(&curve, output::curve_csv(&trained.logs))
        .with_context(|| format!("writing {}", curve.display()))?;
    output::plot_curve(&trained.logs, v.name, &dir.join("learning_curve.svg"))
        .map_err(anyhow::Error::msg)?;
    eprintln!(
        "wrote {} (and curve.csv, learning_curve.svg beside it)",
        ckpt.display()
    );
    Ok(())
}
