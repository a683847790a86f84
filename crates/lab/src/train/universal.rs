//! `continuum train-universal`: the topology-free meta-policy trained across generated
//! networks (docs/model.md §9.9), and its adaptation to one network, which `continuum train
//! <topology> --init <checkpoint>` runs when the checkpoint is topology-free. Both write the
//! checkpoint, a log of the rounds and the selection's scores (`<stem>.universal.csv`), and say
//! what the selection chose.

use anyhow::{Context, Result, bail};
use clap::Args;
use continuum_core::config::Source;
use continuum_core::profiles::Profiles;
use continuum_infer::agent::{Checkpoint, DqnConfig};
use continuum_learn::universal::{self, Universal, UniversalSettings};
use continuum_sim::Scenario;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Options of `continuum train-universal`.
#[derive(Debug, Clone, Args)]
pub struct TrainUniversalArgs {
    /// The network's hyper-parameters (YAML; `state: situation`).
    #[arg(long, default_value = "config/universal.yaml")]
    pub config: PathBuf,
    /// The training networks' ranges and the run's sizes (YAML; absent fields take their
    /// defaults).
    #[arg(long, default_value = "config/universal-networks.yaml")]
    pub networks: PathBuf,
    /// Variant profiles file (YAML).
    #[arg(long, default_value = "profiles/object-detection.yaml")]
    pub profiles: PathBuf,
    /// Training networks per round (overrides the settings; smoke size: 2).
    #[arg(long)]
    pub network_count: Option<usize>,
    /// Collection rounds (overrides the settings).
    #[arg(long)]
    pub rounds: Option<usize>,
    /// Validation networks (overrides the settings; smoke size: 1).
    #[arg(long)]
    pub validation_networks: Option<usize>,
    /// Seed of the networks, the episodes and the network's initialisation.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Folder to write into (`checkpoint.dqn`, `checkpoint.universal.csv`).
    #[arg(long)]
    pub out: PathBuf,
    /// Worker threads (default: all cores); the result is the same for a given seed and
    /// thread count.
    #[arg(long)]
    pub threads: Option<usize>,
}

/// Reads the settings file (absent: the defaults).
fn settings(path: &Path) -> Result<UniversalSettings> {
    let s: UniversalSettings = if path.exists() {
        let src = Source::read(path)?;
        let s: UniversalSettings = src.parse()?;
        s.validate().map_err(|(f, m)| src.error_file(f, m))?;
        s
    } else if path.as_os_str() == "config/universal-networks.yaml" {
        UniversalSettings::default()
    } else {
        bail!("{}: cannot read file: not found", path.display());
    };
    Ok(s)
}

/// Runs `continuum train-universal`.
pub(super) fn execute(args: &TrainUniversalArgs) -> Result<()> {
    let cfg = DqnConfig::load(&args.config)?;
    universal::check_config(&cfg).with_context(|| args.config.display().to_string())?;
    let mut s = settings(&args.networks)?;
    if let Some(n) = args.network_count {
        s.networks = n;
    }
    if let Some(r) = args.rounds {
        s.rounds = r;
    }
    if let Some(v) = args.validation_networks {
        s.validation_networks = v;
    }
    s.validate().map_err(|(f, m)| {
        anyhow::anyhow!("--network-count/--rounds/--validation-networks ({f}): {m}")
    })?;
    let profiles = Profiles::load(&args.profiles)?;
    let out = out_file(&args.out)?;
    let pool = crate::thread_pool(args.threads)?;
    let progress = |line: &str| eprintln!("train-universal: {line}");
    let u = pool.install(|| universal::train(&profiles, &cfg, &s, args.seed, &progress))?;
    write(&out, &u)
}

/// Adapts the topology-free checkpoint `init` to `sc` within `budget` simulated queries (the
/// episodes are cut to fit; at least one), for `continuum train --init`.
pub(super) fn adapt(
    sc: &Scenario,
    init: &Checkpoint,
    budget: Option<f64>,
    seed: u64,
    out: &Path,
    pool: &rayon::ThreadPool,
) -> Result<()> {
    let s = UniversalSettings::default();
    let cfg = &init.meta.config;
    // One labelled episode costs about (1 + actions × (horizon + settle) / window) episodes of
    // queries; the validation about (actions + margins) × λs × 1 episode.
    let per_episode = {
        let windows = cfg.horizon_s / cfg.window_s;
        let fork = cfg.cf_horizon_windows as f64 + 0.4;
        1.0 + cfg.actions.len() as f64 * fork * (windows - cfg.warmup_windows as f64) / windows
    };
    let episode_queries = (cfg.lambda_range[0] + cfg.lambda_range[1]) / 2.0 / 60.0
        * sc.topology.schedulers.len() as f64
        * mean_stream_queries(sc)
        * cfg.horizon_s;
    let episodes = budget.map_or(2, |b| {
        let validation =
            (cfg.actions.len() + s.margins.len()) as f64 * s.validation_lambdas.len() as f64;
        ((b / episode_queries.max(1.0) - validation) / per_episode)
            .floor()
            .max(1.0) as usize
    });
    eprintln!(
        "train --init (topology-free): {episodes} labelled episodes on {}, then the default \
         rule and margin on {} validation episodes of it",
        sc.topology.name,
        s.validation_lambdas.len()
    );
    let progress = |line: &str| eprintln!("train: {line}");
    let u = pool.install(|| universal::adapt(sc, init, &s, episodes, 1, seed, &progress))?;
    write(out, &u)
}

/// Queries one client stream brings on average (rate × duration over the workload's mix).
fn mean_stream_queries(sc: &Scenario) -> f64 {
    let apps = &sc.workload.apps;
    let total: f64 = apps.iter().map(|a| a.share).sum();
    apps.iter()
        .map(|a| a.share / total.max(1e-9) * a.rate_qps.mean() * a.duration_s.mean())
        .sum()
}

/// The checkpoint file in `--out`.
fn out_file(out: &Path) -> Result<PathBuf> {
    let name = continuum_core::config::checkpoint_name("dqn");
    let (file, warning) =
        continuum_core::config::prepare_out(out, &name, &["dqn", "ckpt", "safetensors"])
            .map_err(anyhow::Error::msg)?;
    if let Some(w) = warning {
        eprintln!("{w}");
    }
    Ok(file)
}

/// Writes the checkpoint and its log, and says what the selection chose.
fn write(out: &Path, u: &Universal) -> Result<()> {
    continuum_learn::agent::save(out, &u.vars, &u.checkpoint.meta)?;
    let mut csv = String::from("kind,round,episodes,samples,success_ratio,loss,queries,wall_s\n");
    for l in &u.log {
        writeln!(
            csv,
            "round,{},{},{},{:.6},{:.6},{:.4e},{:.1}",
            l.round, l.episodes, l.samples, l.success_ratio, l.loss, l.queries, l.wall_s
        )?;
    }
    let actions = &u.checkpoint.meta.actions;
    csv.push_str("kind,default,margin,validation_success_ratio\n");
    for (c, score) in &u.selected.scores {
        writeln!(
            csv,
            "candidate,{},{},{score:.6}",
            actions[c.default], c.margin
        )?;
    }
    let log = out.with_extension("universal.csv");
    std::fs::write(&log, csv).with_context(|| log.display().to_string())?;
    let c = u.selected.chosen;
    let how = if c.margin.is_finite() {
        format!(
            "the network over `{}` (margin {} pp)",
            actions[c.default], c.margin
        )
    } else {
        format!(
            "`{}` alone: the network did not beat it on validation",
            actions[c.default]
        )
    };
    eprintln!(
        "wrote {} ({how}; {:.2e} simulated queries) and {}",
        out.display(),
        u.queries,
        log.display()
    );
    Ok(())
}
