//! Carrying out `continuum table`: search the best static per-class table on the given seeds
//! and write it.

use anyhow::{Context, Result, bail};
use clap::Args;
use continuum_core::policy::StreamClasses;
use continuum_core::workload::Lambda;
use continuum_learn::meta::table_search::TableSearch;
use continuum_learn::train::EpisodeSpec;
use continuum_sim::Scenario;
use continuum_term::ProgressArgs;
use std::path::PathBuf;

/// Runs `continuum table`.
pub fn execute(args: &TableArgs) -> Result<()> {
    let (out, warning) =
        continuum_core::config::prepare_out(&args.out, "table.yaml", &["yaml", "yml"])
            .map_err(anyhow::Error::msg)?;
    if let Some(w) = warning {
        eprintln!("{w}");
    }
    let seeds = args
        .seeds
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<u64>()
                .map_err(|_| anyhow::anyhow!("--seeds: expected integers, got `{s}`"))
        })
        .collect::<Result<Vec<_>>>()?;
    if seeds.is_empty() {
        bail!("--seeds: expected at least one seed");
    }
    if !(args.duration > 0.0 && args.duration.is_finite()) {
        bail!("--duration: expected a number of seconds > 0");
    }
    let mut sc = Scenario::load(&args.topology, &args.profiles, &args.workload)?;
    if let Some(l) = args.lambda {
        if !(l >= 0.0 && l.is_finite()) {
            bail!("--lambda: expected clients per minute >= 0, got {l}");
        }
        sc = sc.with_lambda(l);
    }
    let actions = match &args.policies {
        Some(p) => continuum_core::policy::parse_list(p)
            .map_err(anyhow::Error::msg)?
            .into_iter()
            .map(continuum_core::mitigation::Configuration::plain)
            .collect(),
        None => continuum_learn::meta::default_oracle_policies(),
    };
    if actions.is_empty() {
        bail!("--policies: expected at least one policy name");
    }
    let classes = StreamClasses::from_workload(
        &sc.workload,
        &continuum_core::observe::DemandBuckets::default(),
    );
    let lambda: Lambda = sc.workload.lambda.clone();
    let episodes: Vec<EpisodeSpec> = seeds
        .iter()
        .map(|&seed| EpisodeSpec::new(lambda.clone(), seed))
        .collect();
    let pool = crate::thread_pool(args.threads)?;
    let search = TableSearch {
        scenario: &sc,
        episodes: &episodes,
        duration_s: args.duration,
        queue_bound: continuum_sim::QueueBound::Deadline,
        load_view: Default::default(),
        actions: &actions,
        classes: &classes,
        objective: continuum_core::metrics::Objective::SuccessRatio,
        every_episode: false,
    };
    let progress = continuum_term::Progress::new(args.progress);
    let found = pool.install(|| {
        search.search_with(&|done, planned| {
            progress.step("table search", "simulated runs", done, planned)
        })
    });
    progress.finish();
    let table = search.table(&found.table.0);
    table
        .save(&out)
        .with_context(|| format!("cannot write {}", out.display()))?;
    crate::print(&format!(
        "best single policy {} {:.2}%; per-class table {} {:.2}% ({} runs on seeds {}); wrote {}",
        actions[found.best_single.0].policy.name(),
        100.0 * found.best_single.1,
        table.describe(),
        100.0 * found.table.1,
        found.runs,
        args.seeds,
        out.display()
    ))?;
    Ok(())
}

/// Options of `continuum table`.
#[derive(Debug, Clone, Args)]
pub struct TableArgs {
    /// Topology file (YAML).
    pub topology: PathBuf,
    /// Variant profiles file (YAML).
    #[arg(long, default_value = "profiles/object-detection.yaml")]
    pub profiles: PathBuf,
    /// Workload file (YAML); its application classes are the table's classes.
    #[arg(long, default_value = "workloads/default.yaml")]
    pub workload: PathBuf,
    /// Constant client arrival rate per antenna, clients/min (overrides the workload's λ).
    #[arg(long, allow_negative_numbers = true)]
    pub lambda: Option<f64>,
    /// Simulated duration of each run, s.
    #[arg(long, default_value_t = 300.0, allow_negative_numbers = true)]
    pub duration: f64,
    /// Comma-separated seeds the table is chosen on.
    #[arg(long, default_value = "1,2,3")]
    pub seeds: String,
    /// Comma-separated candidate policies (default: the meta-policy's default actions).
    #[arg(long)]
    pub policies: Option<String>,
    /// Folder to write the table into, as `table.yaml` (a file name ending in `.yaml` is the
    /// former form: accepted, with a warning).
    #[arg(long)]
    pub out: PathBuf,
    /// Worker threads (default: all cores). The table does not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Progress on standard error.
    #[command(flatten)]
    pub progress: ProgressArgs,
}
