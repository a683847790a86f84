//! `continuum deeprm train | meta-train | eval`: the DeepRM reproduction (docs/deeprm.md).

mod eval;

use crate::eval::EvalFigures;
use crate::meta_train::{MetaTrainConfig, MetaTrainMethod, meta_train};
use crate::net::build;
use crate::train::{PgIterLog, train};
use crate::{End, PgCheckpoint, PgConfig, PgVariant};
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use continuum_learn::agent::set_flat;
use continuum_plot::{Axis, Emphasis, Figure, Format, Panel, Series};
pub use eval::DeepRmEvalArgs;
use std::path::{Path, PathBuf};

/// What to do with the reproduction.
#[derive(Debug, Subcommand)]
pub enum DeepRmCommand {
    /// Train a policy (REINFORCE or an improved variant) and write its checkpoint, its
    /// per-iteration log (`<out stem>.training.csv`) and learning curve (`.training_curve.svg`).
    Train(DeepRmTrainArgs),
    /// Meta-train an initialisation over a distribution of loads and job mixes.
    MetaTrain(DeepRmMetaTrainArgs),
    /// Measure checkpoints and the heuristics (tetris, sjf, random) at several loads on
    /// held-out jobsets, run until every job is done.
    Eval(DeepRmEvalArgs),
}

/// Options of `deeprm train`.
#[derive(Debug, Args)]
pub struct DeepRmTrainArgs {
    /// Training config (YAML; every field optional, defaults: the public code's).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Reward objective: slowdown, completion, utilisation, makespan, within-2,
    /// within-2-slowdown.
    #[arg(long)]
    pub objective: Option<String>,
    /// Policy-gradient variant: plain, entropy, normalised, masked (= improved), critic.
    #[arg(long)]
    pub variant: Option<String>,
    /// Offered load (sets the arrival rate).
    #[arg(long)]
    pub load: Option<f64>,
    /// Visible job slots M (`num_nw`; default: the config's, else the parameters file's 5).
    /// The authors' experiment mains use 10.
    #[arg(long)]
    pub slots: Option<usize>,
    /// When training episodes end: `no-new-job` (the public code's) or `all-done`.
    #[arg(long)]
    pub end: Option<String>,
    /// Policy-gradient iterations.
    #[arg(long)]
    pub iterations: Option<usize>,
    /// Training jobsets.
    #[arg(long)]
    pub jobsets: Option<usize>,
    /// Start from this checkpoint's weights (adaptation); its network must match.
    #[arg(long)]
    pub init: Option<PathBuf>,
    /// Epochs of imitating SJF before REINFORCE (the public code's supervised pre-training).
    #[arg(long)]
    pub imitate_sjf: Option<usize>,
    /// Keep the best validated iteration's weights instead of the last's (early stopping).
    #[arg(long)]
    pub keep_best: bool,
    /// Seed, threads, checkpoint.
    #[command(flatten)]
    pub common: TrainCommon,
}

/// Options of `deeprm meta-train`.
#[derive(Debug, Args)]
pub struct DeepRmMetaTrainArgs {
    /// Meta-training config (YAML; every field optional).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// `reptile` or `fomaml`.
    #[arg(long)]
    pub method: Option<String>,
    /// Meta-iterations.
    #[arg(long)]
    pub meta_iterations: Option<usize>,
    /// Seed, threads, checkpoint.
    #[command(flatten)]
    pub common: TrainCommon,
}

/// Options `deeprm train` and `meta-train` share.
#[derive(Debug, Args)]
pub struct TrainCommon {
    /// Seed of the weights, jobsets (tasks) and rollouts.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Worker threads (default: one per core); results do not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Folder to write into: `checkpoint.deeprm` and its training log and curve (`deeprm eval
    /// --agent name=<folder>` reads it). A file name (`--out out/dr.deeprm`) is the former
    /// form: accepted, with a warning.
    #[arg(long)]
    pub out: PathBuf,
    /// Progress on standard error (a line per validated iteration, or per 10 meta-iterations).
    #[command(flatten)]
    pub progress: continuum_term::ProgressArgs,
}

impl TrainCommon {
    /// The checkpoint file `--out` names, its folder made and checked before the training;
    /// the former file form warns.
    fn checkpoint(&self) -> Result<PathBuf> {
        let (file, warning) = continuum_core::config::prepare_out(
            &self.out,
            &continuum_core::config::checkpoint_name("deeprm"),
            &["deeprm", "ckpt", "safetensors"],
        )
        .map_err(anyhow::Error::msg)?;
        if let Some(w) = warning {
            eprintln!("{w}");
        }
        Ok(file)
    }
}

/// Runs a `deeprm` subcommand.
pub fn execute(cmd: &DeepRmCommand) -> Result<()> {
    keep_freed_memory();
    let threads = match cmd {
        DeepRmCommand::Train(a) => a.common.threads,
        DeepRmCommand::MetaTrain(a) => a.common.threads,
        DeepRmCommand::Eval(a) => a.threads,
    };
    continuum_core::config::check_threads(threads).map_err(anyhow::Error::msg)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .build()
        .context("cannot start worker threads")?;
    pool.install(|| match cmd {
        DeepRmCommand::Train(a) => train_cmd(a),
        DeepRmCommand::MetaTrain(a) => meta_train_cmd(a),
        DeepRmCommand::Eval(a) => eval::eval_cmd(a),
    })
}

/// Asks glibc's allocator to keep freed memory for reuse instead of handing it back to the
/// system. A training update allocates and frees tensors of a few MB per chunk of decisions
/// (reinforce.rs), and by default each is a fresh mapping whose pages the kernel zeroes again:
/// measured, 5 iterations at load 150 % with M = 10 took 23.8 s (16.6 s of it in the kernel)
/// by default and 12.6 s (1.4 s) with these settings. With another C library, nothing changes.
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes the allocator's thresholds; it is called before any
    // worker thread starts, and an unaccepted value is refused (return 0) and ignored.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20); // glibc's largest on 64-bit
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
        libc::mallopt(libc::M_TOP_PAD, 64 << 20);
    }
}

fn train_cmd(a: &DeepRmTrainArgs) -> Result<()> {
    let out = a.common.checkpoint()?;
    let mut cfg = match &a.config {
        Some(p) => PgConfig::load(p)?,
        None => PgConfig::default(),
    };
    if let Some(o) = &a.objective {
        cfg.objective = o.parse().map_err(|e| anyhow::anyhow!("--objective: {e}"))?;
    }
    if let Some(v) = &a.variant {
        cfg.variant = PgVariant::preset(v).map_err(|e| anyhow::anyhow!("--variant: {e}"))?;
    }
    if let Some(m) = a.slots {
        cfg.env.num_nw = m;
        cfg.env
            .validate()
            .map_err(|e| anyhow::anyhow!("--slots: {m} is not a valid M ({e})"))?;
    }
    if let Some(l) = a.load {
        cfg.env.new_job_rate = rate_for(&cfg, l)?;
    }
    if let Some(i) = a.iterations {
        cfg.iterations = i;
    }
    if let Some(e) = &a.end {
        cfg.end = match e.as_str() {
            "no-new-job" => End::NoNewJob,
            "all-done" => End::AllDone,
            _ => bail!("--end: unknown `{e}`; expected no-new-job or all-done"),
        };
    }
    if let Some(j) = a.jobsets {
        cfg.jobsets = j;
    }
    if let Some(e) = a.imitate_sjf {
        cfg.imitate_sjf = e;
    }
    cfg.keep_best |= a.keep_best;
    cfg.validate()?;
    let mut init = match &a.init {
        Some(p) => {
            let ck = PgCheckpoint::load(p)?;
            Some((
                ck.init_for(cfg.shape(), p)?.to_vec(),
                p.display().to_string(),
            ))
        }
        None => None,
    };
    if cfg.imitate_sjf > 0 {
        let (w, im) = crate::imitate::pretrain(
            &cfg,
            a.common.seed,
            init.as_ref().map(|(w, _)| w.as_slice()),
        )?;
        eprintln!(
            "imitated SJF for {} epochs on {} decisions: the policy's most likely action is SJF's in {:.1} % of them",
            cfg.imitate_sjf,
            im.decisions,
            100.0 * im.agreement
        );
        let from = init.map_or(String::new(), |(_, p)| format!(" from {p}"));
        init = Some((
            w,
            format!("SJF imitation ({} epochs){from}", cfg.imitate_sjf),
        ));
    }
    eprintln!(
        "training {} on load {:.2} ({} iterations × {} jobsets × {} rollouts), objective {}",
        variant_name(&cfg.variant),
        cfg.env.load(),
        cfg.iterations,
        cfg.jobsets,
        cfg.rollouts,
        cfg.objective
    );
    let reporter = continuum_term::Progress::new(a.common.progress);
    let progress = |l: &PgIterLog| {
        if let Some(e) = &l.eval {
            reporter.line(&format!(
                "iteration {:>4}  return {:+9.2}  validation slowdown {:.3}  entropy {:.3}",
                l.iteration, l.mean_return, e.mean_slowdown, l.entropy
            ));
        }
    };
    let t = train(
        &cfg,
        a.common.seed,
        init.as_ref().map(|(w, _)| w.as_slice()),
        &progress,
    );
    reporter.finish();
    let t = t?;
    let origin = match &init {
        Some((_, p)) => format!("adapt from {p}"),
        None => "train".into(),
    };
    if let Some(it) = t.kept {
        let (v, share) = t.log[it].eval.as_ref().map_or((f64::NAN, f64::NAN), |e| {
            (e.mean_slowdown, e.share_slowdown_le2)
        });
        eprintln!(
            "kept iteration {it}: the best validation score for {} (mean slowdown {v:.3}, \
             share with slowdown <= 2 {share:.3})",
            cfg.objective
        );
    }
    PgCheckpoint::save(&out, &t.vars, &t.net, &cfg, &origin)?;
    write_log(&out, &t.log)?;
    eprintln!("wrote {}", out.display());
    Ok(())
}

/// The arrival rate for `load`, or why it cannot be offered.
pub fn rate_for(cfg: &PgConfig, load: f64) -> Result<f64> {
    let r = cfg.env.rate_for_load(load);
    if !(load > 0.0 && r <= 1.0) {
        bail!(
            "--load: expected a load in (0, {:.2}] (one job per timestep at most)",
            cfg.env.rate_for_load(1.0).recip()
        );
    }
    Ok(r)
}

fn variant_name(v: &PgVariant) -> &'static str {
    ["plain", "entropy", "normalised", "masked", "critic"]
        .into_iter()
        .find(|n| PgVariant::preset(n).is_ok_and(|p| p == *v))
        .unwrap_or("custom variant")
}

fn write_log(out: &Path, log: &[PgIterLog]) -> Result<()> {
    let stem = out.with_extension("");
    let name = stem
        .file_name()
        .and_then(|s| s.to_str())
        .unwrap_or("deeprm")
        .to_string();
    let csv = stem.with_file_name(format!("{name}.training.csv"));
    let svg = stem.with_file_name(format!("{name}.training_curve.svg"));
    let mut text = String::from(
        "iteration,mean_return,train_slowdown,entropy,wall_s,val_slowdown,val_share_le2\n",
    );
    for l in log {
        let (s, q) = l.eval.as_ref().map_or((String::new(), String::new()), |e| {
            (
                format!("{:.4}", e.mean_slowdown),
                format!("{:.4}", e.share_slowdown_le2),
            )
        });
        text.push_str(&format!(
            "{},{:.4},{:.4},{:.4},{:.2},{s},{q}\n",
            l.iteration, l.mean_return, l.train_slowdown, l.entropy, l.wall_s
        ));
    }
    std::fs::write(&csv, text).with_context(|| format!("cannot write {}", csv.display()))?;
    let pts = |f: &dyn Fn(&EvalFigures) -> f64| -> Vec<(f64, f64)> {
        log.iter()
            .filter_map(|l| l.eval.as_ref().map(|e| (l.iteration as f64, f(e))))
            .collect()
    };
    let fig = Figure {
        title: format!("DeepRM training ({name})"),
        x: Axis::new("iteration", Format::Number),
        panels: vec![
            Panel {
                y: Axis::new("validation mean slowdown", Format::Number),
                series: vec![Series::new(
                    "slowdown",
                    pts(&|e| e.mean_slowdown),
                    Emphasis::Bold,
                )],
            },
            Panel {
                y: Axis::new("mean return", Format::Number),
                series: vec![Series::new(
                    "return",
                    log.iter()
                        .map(|l| (l.iteration as f64, l.mean_return))
                        .collect(),
                    Emphasis::Normal,
                )],
            },
        ],
    };
    continuum_plot::line_chart(&svg, &fig).map_err(anyhow::Error::msg)
}

fn meta_train_cmd(a: &DeepRmMetaTrainArgs) -> Result<()> {
    let out = a.common.checkpoint()?;
    let mut cfg = match &a.config {
        Some(p) => MetaTrainConfig::load(p)?,
        None => MetaTrainConfig::default(),
    };
    if let Some(m) = &a.method {
        cfg.method = match m.as_str() {
            "reptile" => MetaTrainMethod::Reptile,
            "fomaml" => MetaTrainMethod::Fomaml,
            _ => bail!("--method: unknown method `{m}`; expected reptile or fomaml"),
        };
    }
    if let Some(i) = a.meta_iterations {
        cfg.meta_iterations = i;
    }
    cfg.validate()?;
    let reporter = continuum_term::Progress::new(a.common.progress);
    let progress = |l: &crate::meta_train::MetaTrainLog| {
        if l.iteration % 10 == 0 {
            reporter.line(&format!(
                "meta-iteration {:>4}  inner return {:+9.2}  mean load {:.2}",
                l.iteration, l.mean_return, l.mean_load
            ));
        }
    };
    let trained = meta_train(&cfg, a.common.seed, &progress);
    reporter.finish();
    let (theta, log) = trained?;
    let (vars, net) = build(cfg.base.shape(), a.common.seed)?;
    set_flat(&vars, &theta)?;
    let method = match cfg.method {
        MetaTrainMethod::Reptile => "reptile",
        MetaTrainMethod::Fomaml => "fomaml",
    };
    PgCheckpoint::save(
        &out,
        &vars,
        &net,
        &cfg.base,
        &format!("meta-train ({method})"),
    )?;
    let csv = out.with_extension("meta.csv");
    let mut text = String::from("meta_iteration,mean_return,mean_load,wall_s\n");
    for l in &log {
        text.push_str(&format!(
            "{},{:.4},{:.4},{:.2}\n",
            l.iteration, l.mean_return, l.mean_load, l.wall_s
        ));
    }
    std::fs::write(&csv, text).with_context(|| format!("cannot write {}", csv.display()))?;
    eprintln!("wrote {} and {}", out.display(), csv.display());
    Ok(())
}
