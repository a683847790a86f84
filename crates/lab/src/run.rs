//! Running the rows of `simulate` and `compare` on one scenario: the run's options ([`RunArgs`],
//! parsed by the command line), the scenario and simulation settings they describe, every row
//! simulated in parallel (each on its own simulation; the result does not depend on the number
//! of threads), the offline bound, and the report's files.

use crate::report::{self, PolicyResult, Report, SimSummary};
use crate::runner::Runner;
use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use continuum_sim::{CapacityScale, QueueBound, Scenario, SimConfig};
use continuum_term::ProgressArgs;
use rayon::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A text table.
    Table,
    /// The JSON report.
    Json,
    /// CSV rows.
    Csv,
}

/// Options of a simulation run.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Topology file (YAML).
    pub topology: PathBuf,
    /// Variant profiles file (YAML).
    #[arg(long, default_value = "profiles/object-detection.yaml")]
    pub profiles: PathBuf,
    /// Workload file (YAML).
    #[arg(long, default_value = "workloads/default.yaml")]
    pub workload: PathBuf,
    /// Constant client arrival rate per antenna, clients/min (overrides the workload's λ).
    #[arg(long, allow_negative_numbers = true)]
    pub lambda: Option<f64>,
    /// Simulated duration, s.
    #[arg(long, default_value_t = 600.0, allow_negative_numbers = true)]
    pub duration: f64,
    /// Seed of every random stream.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Window T over which success ratios are reported, s.
    #[arg(long, default_value_t = 5.0, allow_negative_numbers = true)]
    pub window: f64,
    /// Load publication period Δ (staleness of what schedulers see), ms.
    #[arg(long, default_value_t = 100.0, allow_negative_numbers = true)]
    pub staleness_ms: f64,
    /// Sliding window over which worker loads are measured, ms.
    #[arg(long, default_value_t = 1000.0, allow_negative_numbers = true)]
    pub load_window_ms: f64,
    /// Worker queue bound: `deadline` (drop what cannot finish in time), `unbounded`, or a
    /// number of waiting queries.
    #[arg(long, default_value = "deadline")]
    pub queue_bound: String,
    /// Actual worker capacity against the profiles, which schedulers keep believing: a multiple
    /// for every worker (`0.5`: processing takes twice as long) or `perturb:<spread>[:<seed>]`
    /// (each cluster its own multiple in [1 − spread, 1 + spread]; the seed defaults to
    /// `--seed`).
    #[arg(long, default_value = "1", allow_negative_numbers = true)]
    pub capacity_scale: String,
    /// Output format on standard output.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also write results.json, results.csv and the SVG plots into this directory.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Worker threads (default: all cores): `compare` runs its rows on them in parallel,
    /// `simulate` its one run. Results do not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Pull rows (`greedy-pull`, `random-pull`, `prior-pull`, `tapfinger:<checkpoint>`): time between
    /// decision steps, ms (default: the load publication period).
    #[arg(long, allow_negative_numbers = true)]
    pub pull_step_ms: Option<f64>,
    /// Pull rows: decision steps a stream may wait unclaimed before it is refused.
    #[arg(long, default_value_t = 1)]
    pub patience: u32,
    /// How a scheduler counts its own bindings since the last load publication
    /// (docs/model.md §8): `off`, `publication` (in full until the next publication) or
    /// `window` (the share of the load window that has not measured them yet).
    #[arg(long, default_value = continuum_core::load::OwnBindings::default().name())]
    pub own_bindings: String,
    /// The load view schedulers decide on (docs/model.md §8): `published` (the 1 s average
    /// republished every --staleness-ms, their own bindings counted as --own-bindings says) or
    /// `current` (every worker's present load, every scheduler's bindings included, ASET's
    /// assumption; needs --own-bindings off).
    #[arg(long, default_value = continuum_core::load::LoadViewMode::default().name())]
    pub load_view: String,
    /// Also compute the offline upper bound of the run (docs/model.md §16: a clairvoyant fluid
    /// assignment of the same streams, a linear program) and give every row its share of it.
    /// Not with `compare --allocators` (the bound keeps the file's deployment).
    #[arg(long)]
    pub bound: bool,
    /// The bound's time slices, in each of which every worker's capacity holds, ms.
    #[arg(long, default_value_t = 1000.0, allow_negative_numbers = true)]
    pub bound_slice_ms: f64,
    /// Progress on standard error (a bar of the windows simulated).
    #[command(flatten)]
    pub progress: ProgressArgs,
}

fn parse_queue_bound(s: &str) -> Result<QueueBound> {
    s.parse().map_err(|e| anyhow::anyhow!("--queue-bound: {e}"))
}

/// Loads the scenario named by `run` and simulates each policy on it; the report lists them in
/// the order given. Runs are independent and in parallel; the result does not depend on the
/// number of threads. Progress as `run.progress` says (a sweep's cells: `--quiet`).
pub fn build_report(run: &RunArgs, runners: &[Runner]) -> Result<Report> {
    let (sc, cfg) = scenario_and_config(run)?;
    for r in runners {
        if let Runner::Dqn(name, ck, _) = r {
            let trained = ck.meta.config.queue_bound;
            if trained != cfg.queue_bound {
                eprintln!(
                    "warning: `{name}` was trained with the workers' queue bound `{trained}`, \
                     and runs under `{}` (--queue-bound {trained} runs it as trained)",
                    cfg.queue_bound
                );
            }
            let view = ck.meta.config.load_view;
            if view != cfg.load_view {
                eprintln!(
                    "warning: `{name}` was trained under the load view `{view}`, and runs under \
                     `{}` (--load-view {view} runs it as trained)",
                    cfg.load_view
                );
            }
        }
    }
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
        None => Some(crate::thread_pool(run.threads)?),
    };
    let steps = (run.duration / run.window).ceil() as u64;
    let bar = run.progress.bar(
        steps * runners.len() as u64,
        "{elapsed_precise} [{bar:40}] {percent}% simulated ({eta} left)",
        "{percent}% simulated ({eta} left)",
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
        load_view: report::load_view_field(cfg.load_view),
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
        load_view: continuum_core::load::LoadViewMode::parse(&run.load_view)
            .map_err(|m| anyhow::anyhow!("--load-view: {m}"))?,
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
    cfg.check_size(&sc).map_err(|m| anyhow::anyhow!("{m}"))?;
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
        load_view: report::load_view_field(cfg.load_view),
        results: Vec::new(),
        sim: SimSummary::new(&[], run.duration, start.elapsed().as_secs_f64(), 1),
        bound: Some(bound),
    })
}

/// Checks, before a run, that `dir` can take its outputs: creates it and writes and removes a
/// probe file, so that an unwritable `--out` fails at once rather than after the run.
pub fn check_out_dir(dir: &std::path::Path) -> Result<()> {
    continuum_core::config::writable_dir(dir).map_err(anyhow::Error::msg)
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
