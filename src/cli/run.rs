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
        Command::Sweep { cmd } => return crate::sweep::execute(cmd),
        Command::Topology { cmd } => return super::topology::execute(cmd),
        Command::Train(args) => return super::train::execute(args),
        Command::Deeprm { cmd } => return super::deeprm::execute(cmd),
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
    println!("{}", text.trim_end());
    if let Some(dir) = &run.out {
        write_outputs(&report, dir)?;
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
    };
    cfg.validate().map_err(|m| anyhow::anyhow!("--{m}"))?;
    let pull = continuum_sim::PullConfig {
        step_ms: run.pull_step_ms.unwrap_or(run.staleness_ms),
        patience: run.patience,
    };
    pull.validate()
        .map_err(|m| anyhow::anyhow!("--pull-step-ms/--patience: {m}"))?;
    let mut sc = Scenario::load(&run.topology, &run.profiles, &run.workload)?;
    if let Some(l) = run.lambda {
        if !(l >= 0.0 && l.is_finite()) {
            bail!("--lambda: expected clients per minute >= 0, got {l}");
        }
        sc = sc.with_lambda(l);
    }
    let candidates = if runners
        .iter()
        .any(|r| matches!(r, Runner::Allocated { .. }))
    {
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
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(run.threads.unwrap_or(0))
        .build()
        .context("cannot start worker threads")?;
    let steps = (run.duration / run.window).ceil() as u64;
    let bar = ProgressBar::with_draw_target(Some(steps * runners.len() as u64), progress);
    bar.set_style(
        ProgressStyle::with_template(
            "{elapsed_precise} [{bar:40}] {percent}% simulated ({eta} left)",
        )
        .expect("valid template"),
    );
    let start = Instant::now();
    let runs: Vec<(PolicyResult, continuum_sim::SimStats)> = pool.install(|| {
        runners
            .par_iter()
            .map(|r| r.run(&sc, candidates.as_ref(), cfg, pull, run.window, &bar))
            .collect::<Result<Vec<_>>>()
    })?;
    bar.finish_and_clear();
    let wall_s = start.elapsed().as_secs_f64();
    let stats: Vec<_> = runs.iter().map(|r| r.1).collect();
    let lambda = sc.workload.lambda.mean_over(run.duration * 1000.0);
    let lambda_profile = sc.workload.lambda.describe();
    Ok(Report {
        topology: sc.topology.name.clone(),
        seed: run.seed,
        lambda,
        lambda_profile,
        duration_s: run.duration,
        results: runs.into_iter().map(|r| r.0).collect(),
        sim: SimSummary::new(&stats, run.duration, wall_s, pool.current_num_threads()),
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
