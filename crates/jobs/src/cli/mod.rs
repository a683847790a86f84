//! `continuum jobs simulate | compare`: the jobs simulator from the command line. `compare`
//! runs every placement configuration × mitigation asked for on the same jobs (same workload,
//! topology and seed) and prints one row each; `simulate` runs one and prints its queue over
//! time too. Rows run in parallel; the result does not depend on the number of threads.

mod load;

use crate::{JobsWorkload, Mitigation, Nodes, Placement, Report, SimSettings};
use anyhow::{Context, Result, anyhow};
use clap::{Args, Subcommand, ValueEnum};
use continuum_core::profiles::Profiles;
use continuum_core::topology::Topology;
use continuum_term::text_table::{new_table, render};
use rayon::prelude::*;
use serde::Serialize;
use std::path::PathBuf;

/// `continuum jobs …`.
#[derive(Debug, Subcommand)]
pub enum JobsCommand {
    /// Every placement configuration × mitigation asked for, on the same jobs: a row each.
    Compare(CompareArgs),
    /// One configuration: its summary and its queue at the end of every window.
    Simulate(SimulateArgs),
    /// Each configuration's job latency as the arrival rates grow: a row per configuration and
    /// rate factor on the same jobs' draws, and `jtl_vs_load.svg`.
    Load(load::LoadArgs),
}

/// What both commands share: the scenario and the run.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Topology file (YAML): its clusters become nodes (the workload's `nodes:` split).
    topology: PathBuf,
    /// Jobs workload file (docs/jobs.md).
    #[arg(long, default_value = "workloads/jobs/night.yaml")]
    workload: PathBuf,
    /// Variant profiles the topology's deployments name (only read to load the topology).
    #[arg(long, default_value = "profiles/object-detection.yaml")]
    profiles: PathBuf,
    /// Only this kind of the workload arrives, at its own rate (EdgeTuner runs its DAG batch
    /// and AI workloads apart: `dag-batch`, `ai` in the shipped files).
    #[arg(long)]
    kind: Option<String>,
    /// Every arrival rate times this (> 0): the same jobs more or less often.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    rate_scale: f64,
    /// Jobs arrive during this many simulated seconds.
    #[arg(long, default_value_t = 3600.0, allow_negative_numbers = true)]
    duration: f64,
    /// How long after `--duration` the last jobs may run on, s (`inf`: until every job ends).
    #[arg(long, default_value_t = f64::INFINITY, allow_negative_numbers = true)]
    drain: f64,
    /// Scheduling period, s (Volcano's default schedule period).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    step_s: f64,
    /// Seed of the jobs (every row runs the same jobs).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output format on standard output.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Also write `results.json` and `jtl_cdf.svg` (each row's job latency CDF) into this folder
    /// (checked before the runs).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Worker threads (default: every core); results do not depend on it.
    #[arg(long)]
    threads: Option<usize>,
}

/// `continuum jobs compare`'s options.
#[derive(Debug, Args)]
pub struct CompareArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Comma-separated placement configurations (kube-scheduler's `LRP`, `MRP`, `BRA`, `EP`,
    /// `RLP`, `RTCR`; Volcano's `GANG_LRP` … `SLA_BRA`), or `all`.
    #[arg(long, default_value = "all")]
    placements: String,
    /// Comma-separated mitigations (`none`, `restart@r`, `tdp@r`, or the paper's `Res_80%`,
    /// `Dis_80%`), or `grid` (none and both at r = 0.70, 0.72, …, 0.90).
    #[arg(long, default_value = "none")]
    mitigations: String,
}

/// `continuum jobs simulate`'s options.
#[derive(Debug, Args)]
pub struct SimulateArgs {
    #[command(flatten)]
    run: RunArgs,
    /// The placement configuration.
    #[arg(long, default_value = "LRP")]
    placement: String,
    /// The mitigation.
    #[arg(long, default_value = "none")]
    mitigation: String,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A text table.
    Table,
    /// JSON (the rows, without each job's record).
    Json,
}

/// One row: a configuration's run, without its per-job records.
#[derive(Debug, Serialize)]
struct Row {
    placement: String,
    mitigation: String,
    jobs_arrived: usize,
    jobs_completed: usize,
    jobs_unfinished: usize,
    jobs_rejected: usize,
    jtl: crate::LatencySummary,
    tasks: crate::TaskCounts,
    makespan_s: Option<f64>,
}

impl From<&Report> for Row {
    fn from(r: &Report) -> Self {
        Self {
            placement: r.placement.clone(),
            mitigation: r.mitigation.clone(),
            jobs_arrived: r.jobs_arrived,
            jobs_completed: r.jobs_completed,
            jobs_unfinished: r.jobs_unfinished,
            jobs_rejected: r.jobs_rejected,
            jtl: r.jtl,
            tasks: r.tasks,
            makespan_s: r.makespan_s,
        }
    }
}

/// What `results.json` and `--format json` hold.
#[derive(Debug, Serialize)]
struct Results<'a> {
    topology: &'a str,
    workload: String,
    seed: u64,
    duration_s: f64,
    nodes: usize,
    rows: Vec<Row>,
}

/// Runs `continuum jobs …`.
pub fn execute(cmd: &JobsCommand) -> Result<()> {
    match cmd {
        JobsCommand::Compare(a) => {
            let placements = placements(&a.placements)?;
            let mitigations = mitigations(&a.mitigations)?;
            let configs: Vec<(Placement, Mitigation)> = placements
                .iter()
                .flat_map(|p| mitigations.iter().map(move |m| (p.clone(), *m)))
                .collect();
            run_rows(&a.run, &configs, false)
        }
        JobsCommand::Load(a) => load::execute(a),
        JobsCommand::Simulate(a) => {
            let p = Placement::by_name(&a.placement).map_err(|e| anyhow!("--placement: {e}"))?;
            let m = Mitigation::parse(&a.mitigation).map_err(|e| anyhow!("--mitigation: {e}"))?;
            run_rows(&a.run, &[(p, m)], true)
        }
    }
}

fn placements(list: &str) -> Result<Vec<Placement>> {
    named(list, "--placements", "all", Placement::all, |n| {
        Placement::by_name(n).map_err(|e| e.to_string())
    })
}

fn mitigations(list: &str) -> Result<Vec<Mitigation>> {
    named(list, "--mitigations", "grid", Mitigation::grid, |n| {
        Mitigation::parse(n).map_err(|e| e.to_string())
    })
}

/// A comma-separated list of `flag`'s names read by `one`, or every one (`all`) for `every`.
fn named<T>(
    list: &str,
    flag: &str,
    every: &str,
    all: fn() -> Vec<T>,
    one: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<T>> {
    if list.trim() == every {
        return Ok(all());
    }
    let names: Vec<&str> = list
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if names.is_empty() {
        return Err(anyhow!("{flag}: expected at least one name, or `{every}`"));
    }
    names
        .iter()
        .map(|n| one(n).map_err(|e| anyhow!("{flag}: {e}")))
        .collect()
}

/// Loads a topology (with the profiles it names) and a jobs workload (only `kind`, when given,
/// its rates times `rate_scale`), and splits the topology into the workload's nodes.
pub fn load_scenario(
    topology: &std::path::Path,
    profiles: &std::path::Path,
    workload: &std::path::Path,
    kind: Option<&str>,
    rate_scale: f64,
) -> Result<(Topology, JobsWorkload, Nodes)> {
    if !(rate_scale.is_finite() && rate_scale > 0.0) {
        return Err(anyhow!(
            "--rate-scale: expected a finite value > 0, got {rate_scale}"
        ));
    }
    let mut w = JobsWorkload::load(workload)?;
    if let Some(k) = kind {
        w = w.only_kind(k).map_err(|e| anyhow!("--kind: {e}"))?;
    }
    let w = w.scaled(rate_scale);
    let profiles = Profiles::load(profiles)?;
    let topology = Topology::load(topology, &profiles)?;
    let nodes = Nodes::from_topology(&topology, &w.nodes)?;
    Ok((topology, w, nodes))
}

/// How a run names its workload: the file, the kind alone, the rate factor.
pub fn workload_label(path: &std::path::Path, kind: Option<&str>, rate_scale: f64) -> String {
    let mut s = path.display().to_string();
    if let Some(k) = kind {
        s += &format!(", kind {k} alone");
    }
    if rate_scale != 1.0 {
        s += &format!(", rates × {rate_scale}");
    }
    s
}

/// Where `--out`'s main file goes (checked, with any warning about an old form printed).
fn out_file(a: &RunArgs, name: &str) -> Result<Option<std::path::PathBuf>> {
    let Some(o) = &a.out else { return Ok(None) };
    let (f, w) =
        continuum_core::config::prepare_out(o, name, &["json"]).map_err(anyhow::Error::msg)?;
    if let Some(w) = w {
        eprintln!("{w}");
    }
    Ok(Some(f))
}

/// The run settings of `a`.
fn settings_of(a: &RunArgs) -> SimSettings {
    SimSettings {
        seed: a.seed,
        duration_s: a.duration,
        drain_s: a.drain,
        step_s: a.step_s,
        ..SimSettings::default()
    }
}

/// Every configuration on `nodes` under `workload` (in parallel on `threads`).
fn run_all(
    a: &RunArgs,
    nodes: &Nodes,
    workload: &JobsWorkload,
    configs: &[(Placement, Mitigation)],
) -> Result<Vec<Report>> {
    let settings = settings_of(a);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(a.threads.unwrap_or(0))
        .build()
        .context("cannot start worker threads")?;
    pool.install(|| {
        configs
            .par_iter()
            .map(|(p, m)| crate::run(nodes, workload, p, *m, &settings))
            .collect::<Result<Vec<_>, _>>()
    })
    .map_err(flag_named)
}

/// Loads the scenario, runs every configuration (in parallel), prints and writes the rows.
fn run_rows(a: &RunArgs, configs: &[(Placement, Mitigation)], queue: bool) -> Result<()> {
    continuum_core::config::check_threads(a.threads).map_err(anyhow::Error::msg)?;
    let out = out_file(a, "results.json")?;
    let (topology, workload, nodes) = load_scenario(
        &a.topology,
        &a.profiles,
        &a.workload,
        a.kind.as_deref(),
        a.rate_scale,
    )?;
    let reports = run_all(a, &nodes, &workload, configs)?;
    let results = Results {
        topology: &topology.name,
        workload: workload_label(&a.workload, a.kind.as_deref(), a.rate_scale),
        seed: a.seed,
        duration_s: a.duration,
        nodes: nodes.len(),
        rows: reports.iter().map(Row::from).collect(),
    };
    let json = continuum_core::config::versioned_json(&results)?;
    let text = match a.format {
        Format::Json => json.clone() + "\n",
        Format::Table => text_table(&results, queue.then(|| &reports[0])),
    };
    print!("{text}");
    if let Some(path) = out {
        std::fs::write(&path, &json).with_context(|| format!("cannot write {}", path.display()))?;
        let svg = path.with_file_name("jtl_cdf.svg");
        jtl_cdf(&reports, &topology.name, &svg)?;
        eprintln!("wrote {} and {}", path.display(), svg.display());
    }
    Ok(())
}

/// Each row's CDF of job latency (completed jobs), the row with the lowest mean in bold.
fn jtl_cdf(reports: &[Report], topology: &str, path: &std::path::Path) -> Result<()> {
    use continuum_plot::{Axis, Emphasis, Figure, Format as Ticks, Panel, Series};
    let best = reports
        .iter()
        .filter(|r| r.jtl.count > 0)
        .min_by(|a, b| a.jtl.mean_s.total_cmp(&b.jtl.mean_s))
        .map(|r| (r.placement.clone(), r.mitigation.clone()));
    let series = reports
        .iter()
        .map(|r| {
            let mut v: Vec<f64> = r
                .jobs
                .iter()
                .filter_map(crate::JobRecord::latency_s)
                .collect();
            v.sort_by(f64::total_cmp);
            let k = v.len().max(1) as f64;
            let pts = v
                .iter()
                .enumerate()
                .map(|(i, x)| (*x, (i + 1) as f64 / k))
                .collect();
            let mine = Some((r.placement.clone(), r.mitigation.clone())) == best;
            let emphasis = if mine {
                Emphasis::Bold
            } else {
                Emphasis::Faint
            };
            Series::new(format!("{} {}", r.placement, r.mitigation), pts, emphasis)
        })
        .collect();
    let fig = Figure {
        title: format!("Job latency CDF, {topology}"),
        x: Axis::new("job latency (s)", Ticks::Number),
        panels: vec![Panel {
            y: Axis::new("share of completed jobs", Ticks::Percent),
            series,
        }],
    };
    continuum_plot::line_chart(path, &fig).map_err(anyhow::Error::msg)
}

/// A run setting's error named by the flag that sets it.
fn flag_named(e: crate::JobsError) -> anyhow::Error {
    match e {
        crate::JobsError::Setting { setting, message } => {
            let flag = match setting {
                "duration_s" => "--duration",
                "drain_s" => "--drain",
                "step_s" => "--step-s",
                other => other,
            };
            anyhow!("{flag}: {message}")
        }
        other => other.into(),
    }
}

/// A table's first line: what ran.
fn header(topology: &str, nodes: usize, workload: &str, duration_s: f64, seed: u64) -> String {
    format!(
        "topology {topology}  {nodes} nodes  workload {workload}  {duration_s} s  seed {seed}\n"
    )
}

/// The rows as a text table (JTL in seconds), and with `queue` its queue over time.
fn text_table(r: &Results, queue: Option<&Report>) -> String {
    let mut s = header(r.topology, r.nodes, &r.workload, r.duration_s, r.seed);
    let mut t = new_table(&[
        "placement",
        "mitigation",
        "jobs",
        "completed",
        "unfinished",
        "JTL mean s",
        "p50 s",
        "p95 s",
        "p99 s",
        "restarted",
        "discarded",
    ]);
    for row in &r.rows {
        t.add_row(vec![
            row.placement.clone(),
            row.mitigation.clone(),
            row.jobs_arrived.to_string(),
            row.jobs_completed.to_string(),
            row.jobs_unfinished.to_string(),
            format!("{:.1}", row.jtl.mean_s),
            format!("{:.1}", row.jtl.p50_s),
            format!("{:.1}", row.jtl.p95_s),
            format!("{:.1}", row.jtl.p99_s),
            row.tasks.restarted.to_string(),
            (row.tasks.discarded_running + row.tasks.discarded_waiting).to_string(),
        ]);
    }
    s.push_str(&render(&mut t, 0, &[0, 1]));
    if let Some(rep) = queue {
        let mut q = new_table(&["window end s", "waiting", "running", "CPU allocated"]);
        for x in &rep.queue {
            q.add_row(vec![
                format!("{:.0}", x.t_s),
                x.waiting.to_string(),
                x.running.to_string(),
                continuum_term::text_table::percent(x.cpu_allocated),
            ]);
        }
        s.push('\n');
        s.push_str(&render(&mut q, 0, &[]));
    }
    s
}
