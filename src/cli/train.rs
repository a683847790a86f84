//! Carrying out `continuum train`: load the scenario and the hyper-parameters, train with a
//! progress bar, write the checkpoint, the episode log and the training curve.

use super::args::TrainArgs;
use crate::agent::DqnConfig;
use crate::sim::Scenario;
use crate::train::{self, EpisodeLog};
use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Runs `continuum train`.
pub fn execute(args: &TrainArgs) -> Result<()> {
    let mut cfg = if args.config.exists() {
        DqnConfig::load(&args.config)?
    } else if args.config.as_os_str() == "config/dqn.yaml" {
        DqnConfig::default()
    } else {
        bail!("{}: cannot read file: not found", args.config.display());
    };
    if let Some(e) = args.episodes {
        if e == 0 {
            bail!("--episodes: expected at least 1");
        }
        cfg.episodes = e;
    }
    let sc = Scenario::load(&args.topology, &args.profiles, &args.workload)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads.unwrap_or(0))
        .build()
        .context("cannot start worker threads")?;
    let bar =
        ProgressBar::with_draw_target(Some(cfg.episodes as u64), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] episode {pos}/{len} {msg}")
            .expect("valid template"),
    );
    let progress = |log: &EpisodeLog, _total: usize| {
        bar.set_message(format!(
            "ε {:.2}  reward {:.3}  success {:.3}  λ {:.0}",
            log.epsilon, log.mean_reward, log.success_ratio, log.lambda
        ));
        bar.inc(1);
    };
    let logs = pool.install(|| train::train(&sc, &cfg, args.seed, &args.out, &progress))?;
    bar.finish_and_clear();
    let stem = args.out.with_extension("");
    let csv = stem.with_file_name(format!(
        "{}.training.csv",
        stem.file_name().and_then(|s| s.to_str()).unwrap_or("dqn")
    ));
    let svg = stem.with_file_name(format!(
        "{}.training_curve.svg",
        stem.file_name().and_then(|s| s.to_str()).unwrap_or("dqn")
    ));
    std::fs::write(&csv, train::training_csv(&logs))
        .with_context(|| format!("cannot write {}", csv.display()))?;
    train::plot_training_curve(&logs, &sc.topology.name, &svg).map_err(anyhow::Error::msg)?;
    let last: Vec<&EpisodeLog> = logs.iter().rev().take(10).collect();
    let mean = last.iter().map(|l| l.success_ratio).sum::<f64>() / last.len().max(1) as f64;
    let wall = logs.last().map_or(0.0, |l| l.wall_s);
    eprintln!(
        "trained {} episodes in {wall:.1} s; success ratio of the last {}: {mean:.4}; wrote {}, {}, {}",
        logs.len(),
        last.len(),
        args.out.display(),
        csv.display(),
        svg.display()
    );
    Ok(())
}
