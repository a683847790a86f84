//! Carrying out `simulate` and `compare`: load the scenario, run the policies (in parallel,
//! each on its own simulation), and write the report.

use super::args::{Cli, Command, Format, RunArgs};
use super::runner::Runner;
use crate::report::{self, PolicyResult, Report, SimSummary};
use anyhow::{Context, Result, bail};
use continuum_sim::{CapacityScale, QueueBound, Scenario, SimConfig};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use std::sync::Arc;
use std::time::Instant;

/// Runs the parsed command.
pub fn execute(cli: &Cli) -> Result<()> {
    let (runners, run, series): (Vec<Runner>, _, _) = match &cli.command {
        Command::Simulate { policy, run } => (super::rows::parse_rows(policy)?, run, true),
        Command::Compare { run, .. } => (
            super::rows::compare_rows(&cli.command)?.unwrap_or_default(),
            run,
            false,
        ),
        Command::Table(args) => return super::table::execute(args),
        Command::Sweep { .. } => bail!("`sweep` is carried out by continuum::app::execute"),
        Command::Topology { cmd } => return super::topology::execute(cmd),
        Command::Train(args) => return super::train::execute(args),
        Command::Deeprm { cmd } => return continuum_deeprm::cli::execute(cmd),
        Command::MetaTrain(a) => return super::meta_steps::execute(a),
        Command::Worker { config } => return continuum_worker::run_from_file(config),
        Command::Gateway { config } => return continuum_gateway::run_from_file(config),
        Command::Allocator { config, slots } => {
            return crate::allocator::run_from_file(config, *slots);
        }
        Command::Loadgen(args) => return continuum_loadgen::execute(args),
        Command::OgaBench(args) => return continuum_alloc::oga_bench::execute(args),
        Command::Profile {
            models,
            out,
            reps,
            min_time_ms,
        } => {
            let opts = continuum_worker::profiler::ProfileOptions {
                reps: *reps,
                min_time: std::time::Duration::from_millis(*min_time_ms),
                ..Default::default()
            };
            return continuum_worker::profiler::run_cli(models, out, &opts);
        }
    };
    if runners.is_empty() {
        bail!("--policies: expected at least one policy name");
    }
    let report = build_report(run, &runners)?;
    let text = match run.format {
        Format::Json => report.to_json(),
        Format::Csv => report::to_csv(&report),
        Format::Table if series => format!(
            "{}\n{}",
            report::to_time_series_table(&report),
            report::to_table(&report)
        ),
        Format::Table => report::to_table(&report),
    };
    super::print(text.trim_end())?;
    if let Some(dir) = &run.out {
        write_outputs(&report, dir)?;
        eprintln!(
            "wrote {}: results.json, results.csv, success_over_time.svg, success_per_app.svg, p99_over_time.svg",
            dir.display()
        );
    }
    Ok(())
}

fn parse_queue_bound(s: &str) -> Result<QueueBound> {
    match s {
        "deadline" => Ok(QueueBound::Deadline),
        "unbounded" => Ok(QueueBound::Unbounded),
        n => match n.parse::<u32>() {
            Ok(n) => Ok(QueueBound::MaxQueries(n)),
            Err(_) => bail!(
                "--queue-bound: expected `deadline`, `unbounded` or a number of queries, got `{s}`"
            ),
        },
    }
}

/// Loads the scenario named by `run` and simulates each policy on it; the report lists them in
/// the order given. Runs are independent and in parallel; the result does not depend on the
/// number of threads.
pub fn build_report(run: &RunArgs, runners: &[Runner]) -> Result<Report> {
    build_report_with(run, runners, ProgressDrawTarget::stderr())
}

/// [`build_report`], drawing its progress bar on `progress` (hidden for a sweep's cells).
pub fn build_report_with(
    run: &RunArgs,
    runners: &[Runner],
    progress: ProgressDrawTarget,
) -> Result<Report> {
    let (sc, cfg) = scenario_and_config(run)?;
    let pull = continuum_sim::PullConfig {
        step_ms: run.pull_step_ms.unwrap_or(run.staleness_ms),
        patience: run.patience,
    };
    pull.validate()
        .map_err(|m| anyhow::anyhow!("--pull-step-ms/--patience: {m}"))?;
    let allocated = runners
        .iter()
        .any(|r| matches!(r, Runner::Allocated { .. }));
    if run.bound && allocated {
        bail!(
            "--bound: not with --allocators (the bound keeps the topology file's deployment, which an allocator changes)"
        );
    }
    let candidates = if allocated {
        let topology =
            continuum_core::topology::Topology::load_candidates(&run.topology, &sc.profiles)?;
        Some(Arc::new(Scenario::new(
            sc.profiles.clone(),
            topology,
            sc.workload.clone(),
        )))
    } else {
        None
    };
    let sc = Arc::new(sc);
    // Inside a pool already (a sweep's cells): run in it. A pool installed from another pool's
    // worker lets that worker take the outer pool's next job while it waits, one on top of the
    // other on its stack, which overflows over thousands of cells.
    let pool = match rayon::current_thread_index() {
        Some(_) => None,
        None => Some(
            rayon::ThreadPoolBuilder::new()
                .num_threads(run.threads.unwrap_or(0))
                .build()
                .context("cannot start worker threads")?,
        ),
    };
    let steps = (run.duration / run.window).ceil() as u64;
    let bar = ProgressBar::with_draw_target(Some(steps * runners.len() as u64), progress);
    bar.set_style(
        ProgressStyle::with_template(
            "{elapsed_precise} [{bar:40}] {percent}% simulated ({eta} left)",
        )
        .expect("valid template"),
    );
    let start = Instant::now();
    let work = || {
        rayon::join(
            || {
                runners
                    .par_iter()
                    .map(|r| r.run(&sc, candidates.as_ref(), cfg, pull, run.window, &bar))
                    .collect::<Result<Vec<(PolicyResult, continuum_sim::SimStats)>>>()
            },
            || run.bound.then(|| bound_of(run, &sc, &cfg)).transpose(),
        )
    };
    let (runs, bound) = match &pool {
        Some(p) => p.install(work),
        None => work(),
    };
    let threads = pool
        .as_ref()
        .map_or_else(rayon::current_num_threads, |p| p.current_num_threads());
    let (runs, bound) = (runs?, bound?);
    bar.finish_and_clear();
    let wall_s = start.elapsed().as_secs_f64();
    let stats: Vec<_> = runs.iter().map(|r| r.1).collect();
    let lambda = sc.workload.lambda.mean_over(run.duration * 1000.0);
    let lambda_profile = sc.workload.lambda.describe();
    let mut report = Report {
        topology: sc.topology.name.clone(),
        seed: run.seed,
        lambda,
        lambda_profile,
        duration_s: run.duration,
        own_bindings: cfg.own_bindings.name().to_string(),
        results: runs.into_iter().map(|r| r.0).collect(),
        sim: SimSummary::new(&stats, run.duration, wall_s, threads),
        bound: None,
    };
    if let Some(b) = bound {
        report.set_bound(b);
    }
    Ok(report)
}

/// The offline upper bound of the run `run` describes, on scenario `sc` under `cfg`
/// (docs/model.md §16).
fn bound_of(run: &RunArgs, sc: &Scenario, cfg: &SimConfig) -> Result<report::BoundReport> {
    let settings = continuum_bound::BoundSettings {
        seed: cfg.seed,
        duration_s: cfg.duration_s,
        slice_ms: run.bound_slice_ms,
        slowdown: cfg.capacity.slowdowns(&sc.topology),
    };
    let b = continuum_bound::offline_bound(sc, &settings)
        .map_err(|e| anyhow::anyhow!("--bound: {e}"))?;
    Ok(report::BoundReport::new(&b, run.bound_slice_ms))
}

/// The scenario and run settings `run` describes (λ replaced where it says so); the error names
/// the option at fault.
fn scenario_and_config(run: &RunArgs) -> Result<(Scenario, SimConfig)> {
    let cfg = SimConfig {
        duration_s: run.duration,
        window_s: run.window,
        staleness_ms: run.staleness_ms,
        load_window_ms: run.load_window_ms,
        queue_bound: parse_queue_bound(&run.queue_bound)?,
        seed: run.seed,
        mitigation: continuum_core::mitigation::Mitigation::None,
        capacity: CapacityScale::parse(&run.capacity_scale, run.seed)
            .map_err(|m| anyhow::anyhow!("--capacity-scale: {m}"))?,
        own_bindings: continuum_core::load::OwnBindings::parse(&run.own_bindings)
            .map_err(|m| anyhow::anyhow!("--own-bindings: {m}"))?,
    };
    cfg.validate().map_err(|m| anyhow::anyhow!("--{m}"))?;
    if !(run.bound_slice_ms > 0.0 && run.bound_slice_ms.is_finite()) {
        bail!(
            "--bound-slice-ms: expected a slice in ms > 0, got {}",
            run.bound_slice_ms
        );
    }
    let mut sc = Scenario::load(&run.topology, &run.profiles, &run.workload)?;
    if let Some(l) = run.lambda {
        if !(l >= 0.0 && l.is_finite()) {
            bail!("--lambda: expected clients per minute >= 0, got {l}");
        }
        sc = sc.with_lambda(l);
    }
    Ok((sc, cfg))
}

/// A report of the run `run` describes with no row, only its offline bound (a sweep's bound
/// cell).
pub fn bound_report(run: &RunArgs) -> Result<Report> {
    let (sc, cfg) = scenario_and_config(run)?;
    let start = Instant::now();
    let bound = bound_of(run, &sc, &cfg)?;
    let lambda = sc.workload.lambda.mean_over(run.duration * 1000.0);
    Ok(Report {
        topology: sc.topology.name.clone(),
        seed: run.seed,
        lambda,
        lambda_profile: sc.workload.lambda.describe(),
        duration_s: run.duration,
        own_bindings: cfg.own_bindings.name().to_string(),
        results: Vec::new(),
        sim: SimSummary::new(&[], run.duration, start.elapsed().as_secs_f64(), 1),
        bound: Some(bound),
    })
}

/// Writes results.json, results.csv and the SVG plots of `r` into `dir`.
pub fn write_outputs(r: &Report, dir: &std::path::Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let put = |name: &str, text: String| {
        std::fs::write(dir.join(name), text)
            .with_context(|| format!("cannot write {}", dir.join(name).display()))
    };
    put("results.json", r.to_json())?;
    put("results.csv", report::to_csv(r))?;
    report::plot_success_over_time(r, &dir.join("success_over_time.svg"))
        .map_err(anyhow::Error::msg)?;
    report::plot_success_per_app(r, &dir.join("success_per_app.svg"))
        .map_err(anyhow::Error::msg)?;
    report::plot_p99_over_time(r, &dir.join("p99_over_time.svg")).map_err(anyhow::Error::msg)?;
    Ok(())
}
