//! Carrying out `simulate` and `compare`: load the scenario, run the policies (in parallel,
//! each on its own simulation), and write the report.

use super::args::{Cli, Command, Format, RunArgs};
use super::runner::Runner;
use crate::report::{self, PolicyResult, Report, SimSummary};
use anyhow::{Context, Result, bail};
use continuum_core::mitigation::{Configuration, MitigationKind};
use continuum_core::policy::{self, StreamClasses};
use continuum_sim::{CapacityScale, QueueBound, Scenario, SimConfig};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use std::sync::Arc;
use std::time::Instant;

/// Runs the parsed command.
pub fn execute(cli: &Cli) -> Result<()> {
    let (runners, run, series): (Vec<Runner>, _, _) = match &cli.command {
        Command::Simulate { policy, run } => (parse_rows(policy)?, run, true),
        Command::Compare {
            policies,
            configs,
            grid,
            ratios,
            kinds,
            run,
            agent,
            agent_tables,
            agent_network,
            oracle,
            allocators,
            alloc_slot_s,
            alloc_units,
            alloc_eta0,
        } => {
            let mut runners = match (policies, configs, grid) {
                (_, _, true) => {
                    grid_rows(policies.as_deref(), ratios.as_deref(), kinds.as_deref())?
                }
                (None, None, false) => policy::REGISTRY
                    .iter()
                    .map(|&p| Runner::Static(Configuration::plain(p)))
                    .collect(),
                (p, c, false) => {
                    let mut rows = parse_rows(p.as_deref().unwrap_or(""))?;
                    rows.extend(parse_rows(c.as_deref().unwrap_or(""))?);
                    rows
                }
            };
            for path in agent {
                let name = if agent.len() == 1 {
                    "dqn".to_string()
                } else {
                    format!(
                        "dqn:{}",
                        path.file_stem().and_then(|s| s.to_str()).unwrap_or("agent")
                    )
                };
                runners.push(Runner::dqn(name, path)?);
            }
            let stem = |p: &std::path::Path| {
                p.file_stem()
                    .and_then(|s| s.to_str())
                    .unwrap_or("agent")
                    .to_string()
            };
            for path in agent_tables {
                runners.push(Runner::dqn_with_margin(
                    format!("tables:{}", stem(path)),
                    path,
                    f64::INFINITY,
                )?);
            }
            for path in agent_network {
                runners.push(Runner::dqn_with_margin(
                    format!("network:{}", stem(path)),
                    path,
                    0.0,
                )?);
            }
            if *oracle {
                let choices = match runners.iter().find_map(Runner::agent_choices) {
                    Some(c) => c,
                    None => {
                        let w = continuum_core::workload::Workload::load(
                            &run.workload,
                            &continuum_core::profiles::Profiles::load(&run.profiles)?,
                        )?;
                        super::runner::OracleChoices {
                            candidates: continuum_learn::meta::default_oracle_policies(),
                            classes: StreamClasses::from_workload(
                                &w,
                                &continuum_core::observe::DemandBuckets::default(),
                            ),
                            objective: continuum_core::metrics::Objective::SuccessRatio,
                        }
                    }
                };
                runners.push(Runner::Oracle(choices));
            }
            if let Some(list) = allocators {
                let units = continuum_alloc::placement::Units::parse(alloc_units)
                    .map_err(|m| anyhow::anyhow!("--alloc-units: {m}"))?;
                if let Some(e) = alloc_eta0 {
                    if !(*e > 0.0 && e.is_finite()) {
                        bail!("--alloc-eta0: expected a learning rate > 0, got {e}");
                    }
                }
                let model = continuum_alloc::placement::ModelOptions {
                    units,
                    eta0: *alloc_eta0,
                };
                runners = allocated_rows(runners, list, *alloc_slot_s, model)?;
            }
            (runners, run, false)
        }
        Command::Table(args) => return super::table::execute(args),
        Command::Topology { cmd } => return super::topology::execute(cmd),
        Command::Train(args) => return super::train::execute(args),
        Command::Deeprm { cmd } => return super::deeprm::execute(cmd),
        Command::MetaTrain(a) => return super::meta_train::execute(a),
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

/// Every configuration row under every allocator of `list` (comma-separated).
fn allocated_rows(
    rows: Vec<Runner>,
    list: &str,
    slot_s: f64,
    model: continuum_alloc::placement::ModelOptions,
) -> Result<Vec<Runner>> {
    if !(slot_s > 0.0 && slot_s.is_finite()) {
        bail!("--alloc-slot-s: expected a slot in s > 0, got {slot_s}");
    }
    let names: Vec<&str> = list
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if names.is_empty() {
        bail!("--allocators: expected at least one allocator name");
    }
    for n in &names {
        super::allocated::check_allocator(n)?;
    }
    let mut out = Vec::new();
    for r in rows {
        let Runner::Static(config) = r else {
            bail!(
                "--allocators: row `{}` is not a configuration (agents, oracles and per-class tables run on the file's deployment only)",
                r.name()
            );
        };
        for n in &names {
            out.push(Runner::Allocated {
                config,
                allocator: n.to_string(),
                slot_s,
                model,
            });
        }
    }
    Ok(out)
}

/// Rows from a comma-separated list: configurations (`policy` or `policy+mitigation`),
/// `per-class:<file>` tables, and pull rows (`greedy-pull`, `random-pull`,
/// `tapfinger:<checkpoint>`, or `tapfinger[<resolution>]:<checkpoint>` to resolve its conflicts
/// otherwise: `bayes`, `uniform-prior`, `first-claim`).
fn parse_rows(list: &str) -> Result<Vec<Runner>> {
    let mut rows = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if let Some(file) = item.strip_prefix("per-class:") {
            rows.push(Runner::table(file)?);
        } else if let Some(file) = item.strip_prefix("tapfinger:") {
            rows.push(Runner::tapfinger(file, None)?);
        } else if let Some(rest) = item.strip_prefix("tapfinger[") {
            let (how, file) = rest.split_once("]:").with_context(|| {
                format!("`{item}`: expected `tapfinger[<resolution>]:<checkpoint>`")
            })?;
            rows.push(Runner::tapfinger(file, Some(how))?);
        } else if let Some(name) = ["greedy-pull", "random-pull"]
            .into_iter()
            .find(|n| *n == item)
        {
            rows.push(Runner::Pull(super::runner::PullRow::Baseline(name)));
        } else {
            rows.push(Runner::Static(
                Configuration::parse(item).map_err(anyhow::Error::msg)?,
            ));
        }
    }
    Ok(rows)
}

/// The rows of `--grid`: every policy of `policies` (default: all) × none, and each mitigation
/// kind of `kinds` (default: reissue and discard) at every ratio of `ratios` (default:
/// EdgeTuner's 0.70, 0.72, …, 0.90).
fn grid_rows(
    policies: Option<&str>,
    ratios: Option<&str>,
    kinds: Option<&str>,
) -> Result<Vec<Runner>> {
    let policies = match policies {
        Some(p) => policy::parse_list(p).map_err(anyhow::Error::msg)?,
        None => policy::REGISTRY.to_vec(),
    };
    let ratios = match ratios {
        Some(r) => r
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|x| match x.parse::<f64>() {
                Ok(v) if v > 0.0 && v <= 1.0 => Ok(v),
                _ => bail!("--ratios: expected numbers in (0, 1], got `{x}`"),
            })
            .collect::<Result<Vec<_>>>()?,
        None => continuum_core::mitigation::grid_ratios(),
    };
    let kinds = match kinds {
        Some(k) => {
            let kinds = k
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|x| MitigationKind::parse(x).map_err(|e| anyhow::anyhow!("--kinds: {e}")))
                .collect::<Result<Vec<_>>>()?;
            if kinds.is_empty() {
                bail!("--kinds: expected at least one of `reissue`, `discard`, `restart`, `tdp`");
            }
            kinds
        }
        None => vec![MitigationKind::Reissue, MitigationKind::Discard],
    };
    Ok(Configuration::grid_of(&policies, &ratios, &kinds)
        .into_iter()
        .map(Runner::Static)
        .collect())
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
    let bar = ProgressBar::with_draw_target(
        Some(steps * runners.len() as u64),
        ProgressDrawTarget::stderr(),
    );
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

fn write_outputs(r: &Report, dir: &std::path::Path) -> Result<()> {
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
