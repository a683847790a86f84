//! Carrying out `continuum train`: load the scenario and the hyper-parameters, train with
//! progress on standard error ([`continuum_term`]), write
//! the checkpoint, the episode log and the training curve, and say what validation chose.

use super::TrainArgs;
use anyhow::{Context, Result, bail};
use continuum_infer::agent::DqnConfig;
use continuum_learn::train::{self, EpisodeLog, TrainEvent};
use continuum_sim::Scenario;

/// Where the snapshot after `episodes` episodes of training into `out` goes.
fn snapshot_path(out: &std::path::Path, episodes: usize) -> std::path::PathBuf {
    let stem = out.file_stem().and_then(|s| s.to_str()).unwrap_or("dqn");
    out.with_file_name(format!("{stem}.at-{episodes}.dqn"))
}

/// The scenario and the hyper-parameters `args` name, with their overrides applied.
fn load(args: &TrainArgs) -> Result<(DqnConfig, Scenario)> {
    let mut cfg = if args.config.exists() {
        DqnConfig::load(&args.config)?
    } else if args.config.as_os_str() == "config/dqn.yaml" {
        DqnConfig::default()
    } else {
        bail!("{}: cannot read file: not found", args.config.display());
    };
    if cfg.state == continuum_infer::agent::StateKind::Situation {
        bail!(
            "{}: `state: situation` is a network for any topology: train it across generated \
             networks with `continuum train-universal`, or adapt one to this topology with \
             `--init <its checkpoint>`",
            args.config.display()
        );
    }
    if let Some(e) = args.episodes {
        if e == 0 {
            bail!("--episodes: expected at least 1");
        }
        cfg.episodes = e;
    }
    if let Some(c) = args.capacity_scale {
        cfg.capacity_scale = c;
        cfg.validate()
            .map_err(|(f, m)| anyhow::anyhow!("--capacity-scale ({f}): {m}"))?;
    }
    let sc = Scenario::load(&args.topology, &args.profiles, &args.workload)?;
    if let Some(b) = args.budget {
        super::check_budget(b)?;
        cfg.validate()
            .map_err(|(f, m)| anyhow::anyhow!("{f}: {m}"))?;
        let classes = train::classes_for(&sc, &cfg).len();
        let changes = train::fit_budget(&sc, &mut cfg, classes, b);
        if !changes.is_empty() {
            eprintln!("--budget {b:.2e}: shrunk to fit it: {}", changes.join(", "));
        }
        cfg.budget_queries = b + train::Budget::plan(&sc, &cfg, classes).validation_queries;
    }
    Ok((cfg, sc))
}

/// Runs `continuum train`.
pub(super) fn execute(args: &TrainArgs) -> Result<()> {
    let (cfg, sc) = load(args)?;
    if cfg.apex.is_none() && (args.apex_learner || args.apex_actor.is_some()) {
        bail!(
            "--apex-learner and --apex-actor need a config with an `apex:` block ({})",
            args.config.display()
        );
    }
    let pool = crate::thread_pool(args.threads)?;
    if let Some(job) = &args.apex_actor {
        return pool.install(|| super::apex::actor(args, &sc, &cfg, job));
    }
    let init = match &args.init {
        Some(p) => Some(train::init_weights_from(&sc, &cfg, p)?),
        None => None,
    };
    let progress = continuum_term::Progress::new(args.progress);
    if args.snapshot_every == Some(0) {
        bail!("--snapshot-every: expected at least 1 episode");
    }
    let snap_meta = train::snapshot_meta(&sc, &cfg);
    let snapped = std::sync::Mutex::new(0usize);
    let snap_err = std::sync::Mutex::new(None);
    let on_event = |event: TrainEvent| match event {
        TrainEvent::Learnt { episodes, vars } => {
            let Some(every) = args.snapshot_every else {
                return;
            };
            let mut last = snapped.lock().expect("snapshot count");
            if episodes / every > *last / every {
                *last = episodes;
                let path = snapshot_path(&args.out, episodes);
                if let Err(e) = continuum_learn::agent::save(&path, vars, &snap_meta) {
                    snap_err.lock().expect("snapshot error").get_or_insert(e);
                }
            }
        }
        TrainEvent::Episode(log, total) => progress.step(
            "episodes",
            &format!(
                "ε {:.2}  value {:+.3}  success {:.3}  λ {:.0}",
                log.epsilon, log.mean_reward, log.success_ratio, log.lambda
            ),
            log.episode + 1,
            total,
        ),
        TrainEvent::Phase(what) => progress.line(what),
        TrainEvent::Step {
            phase,
            what,
            done,
            total,
        } => progress.step(phase, &what, done, total),
    };
    let started = std::time::Instant::now();
    let mut stdio = args
        .apex_learner
        .then(|| super::apex::StdioActors::new(&args.out))
        .transpose()?;
    let outcome = pool.install(|| {
        train::train_with_actors(
            &sc,
            &cfg,
            args.seed,
            init.as_ref(),
            &args.out,
            &on_event,
            stdio.as_mut().map(|s| s as &mut dyn train::apex::ActorPool),
        )
    })?;
    progress.finish();
    if let Some(e) = snap_err.into_inner().expect("snapshot error") {
        return Err(e).context("--snapshot-every");
    }
    if let Some(s) = stdio {
        s.finish(&args.out)?;
    }
    let (csv, svg) = write_logs(&args.out, &outcome, &sc.topology.name)?;
    print_summary(&cfg, &outcome, started.elapsed().as_secs_f64());
    eprintln!(
        "wrote {}, {}, {}",
        args.out.display(),
        csv.display(),
        svg.display()
    );
    Ok(())
}

/// Writes the training's CSV and curve (and Ape-X's rounds) beside the checkpoint `out`; their
/// paths.
fn write_logs(
    out: &std::path::Path,
    outcome: &train::TrainOutcome,
    topology: &str,
) -> Result<(std::path::PathBuf, std::path::PathBuf)> {
    let logs = &outcome.logs;
    let stem = out.with_extension("");
    let name = stem
        .file_name()
        .and_then(|s| s.to_str())
        .unwrap_or("dqn")
        .to_string();
    let csv = stem.with_file_name(format!("{name}.training.csv"));
    let svg = stem.with_file_name(format!("{name}.training_curve.svg"));
    std::fs::write(&csv, train::training_csv(logs))
        .with_context(|| format!("cannot write {}", csv.display()))?;
    train::plot_training_curve(logs, topology, &svg).map_err(anyhow::Error::msg)?;
    if !outcome.apex_rounds.is_empty() {
        let path = stem.with_file_name(format!("{name}.apex.csv"));
        std::fs::write(&path, super::apex::rounds_csv(&outcome.apex_rounds))
            .with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!(
            "wrote {} (Ape-X's rounds: actors' and learner's seconds)",
            path.display()
        );
    }
    Ok((csv, svg))
}

/// Prints what the training found: the fallback tables per level, the episodes and their last
/// success ratio, the validation of the margins.
fn print_summary(cfg: &DqnConfig, outcome: &train::TrainOutcome, wall_s: f64) {
    let logs = &outcome.logs;
    let last: Vec<&EpisodeLog> = logs.iter().rev().take(10).collect();
    let mean = last.iter().map(|l| l.success_ratio).sum::<f64>() / last.len().max(1) as f64;
    let sel = &outcome.selection;
    let action = |a: usize| cfg.actions[a].as_str();
    // Scores print as percentages of success ratio; under the tail objective they are success
    // ratio − weight · ln(p99 ms), in the same unit.
    let unit = match cfg.objective {
        continuum_core::metrics::Objective::SuccessRatio => "%",
        continuum_core::metrics::Objective::Tail { .. } => " (score: success % − 100·w·ln p99)",
    };
    for l in &sel.levels {
        eprintln!(
            "fallback at λ {:.0}: best single action {} {:.2}{unit}; table {} {:.2}{unit}",
            l.lambda,
            action(l.best_single.0),
            100.0 * l.best_single.1,
            l.table
                .0
                .iter()
                .map(|&a| action(a))
                .collect::<Vec<_>>()
                .join(","),
            100.0 * l.table.1,
        );
    }
    let margins: Vec<String> = sel
        .margins
        .iter()
        .map(|(m, r)| format!("{m}: {:.2}{unit}", 100.0 * r))
        .collect();
    eprintln!(
        "trained {} episodes in {:.1} s (budget: {:.2e} simulated queries per episode); success ratio of the last {}: {mean:.4}",
        logs.len(),
        wall_s,
        outcome.budget.episode_queries,
        last.len(),
    );
    if cfg.fallback_levels == 0 {
        eprintln!("no fallback tables and no margin (fallback_levels: 0): the network decides");
    } else {
        eprintln!(
            "validation ({} episodes): fallback tables alone {:.2}{unit}; agent by margin {}; kept margin {}",
            cfg.validation_episodes,
            100.0 * sel.fallback_ratio,
            margins.join(", "),
            if sel.margin.is_finite() {
                sel.margin.to_string()
            } else {
                "none (the agent is its fallback tables)".into()
            }
        );
    }
    if let Some((per_level, score)) = &sel.level_margins {
        let shown: Vec<String> = sel
            .levels
            .iter()
            .zip(per_level)
            .map(|(l, m)| {
                let m = m.map_or("none".to_string(), |m| m.to_string());
                format!("λ {:.0}: {m} ({:.2}{unit})", l.lambda, 100.0 * l.margin.1)
            })
            .collect();
        eprintln!(
            "margins per level: {}; on the validation episodes {:.2}{unit}: {}",
            shown.join(", "),
            100.0 * score,
            if sel.fallback.margins.is_empty() {
                "not kept (the one margin scored at least as well)"
            } else {
                "kept"
            }
        );
    }
}
