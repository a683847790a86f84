//! `continuum oga-bench`: the reproduction of OGASched's comparison (its Fig. 2a and regret)
//! as the command line runs it. The computation (the synthetic trace drawn from the paper's
//! Table 2 ranges, every allocator run on it, the regret against the best fixed allocation in
//! hindsight) is [`continuum_alloc::oga_bench`]'s; here are the command's options, its report
//! (average reward of OGA and the four heuristics, OGA's gains next to the paper's, the regret;
//! as text tables or JSON) and its SVGs.

mod output;
mod plot;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use continuum_alloc::alloc::StepSize;
use continuum_alloc::oga_bench::synthetic::{
    self, Links, Requests, SyntheticConfig, UtilityChoice,
};
use continuum_alloc::oga_bench::{self as bench, BenchConfig};
use output::{to_json, to_text_table};
use std::path::PathBuf;
use std::time::Instant;

/// Output formats of `oga-bench` on standard output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BenchFormat {
    /// Text tables.
    Table,
    /// The JSON report.
    Json,
}

/// Options of `continuum oga-bench` (defaults: OGASched's Table 2).
#[derive(Debug, Clone, Args)]
pub struct OgaBenchArgs {
    /// |L|: ports (job types).
    #[arg(long, default_value_t = 10, allow_negative_numbers = true)]
    pub ports: i64,
    /// |R|: computing instances.
    #[arg(long, default_value_t = 128, allow_negative_numbers = true)]
    pub instances: i64,
    /// T: time slots (the paper's main figure uses 8000).
    #[arg(long, default_value_t = 2000, allow_negative_numbers = true)]
    pub slots: i64,
    /// Probability that a job of each type arrives in a slot.
    #[arg(long, default_value_t = 0.7, allow_negative_numbers = true)]
    pub arrival_prob: f64,
    /// Contention level ℓ, a multiplier on the job types' base requests (OGASched's Table 2
    /// has ℓ = 10, its Fig. 2 ℓ = 11).
    #[arg(long, default_value_t = 10.0, allow_negative_numbers = true)]
    pub contention: f64,
    /// Base requests: `trace` (ranges around one task of the Alibaba GPU trace the paper
    /// names) or `capacity` (a draw from the instances' capacity range: the earlier reading).
    #[arg(long, default_value = "trace")]
    pub requests: String,
    /// How instances are linked to ports: `regular:D` (right-d-regular: every instance serves D
    /// ports, a fractional D mixing ⌊D⌋ and ⌈D⌉; the prototype's default mode, with the
    /// paper's Table 3 density) or `random` (a uniform number in 1..=|L| per instance).
    #[arg(long, default_value = "regular:2.5")]
    pub links: String,
    /// Range of the gain coefficients α, `MIN,MAX`.
    #[arg(long, default_value = "1.0,1.5", allow_hyphen_values = true)]
    pub alpha: String,
    /// Range of the overhead coefficients β, `MIN,MAX`.
    #[arg(long, default_value = "0.3,0.5", allow_hyphen_values = true)]
    pub beta: String,
    /// Utilities: `linear` (the authors' prototype's default), `log`, `reciprocal`, `poly`, or
    /// `mixed` (one of the four drawn per instance and resource).
    #[arg(long, default_value = "linear")]
    pub utility: String,
    /// OGA's initial learning rate η0.
    #[arg(long, default_value_t = 25.0, allow_negative_numbers = true)]
    pub eta0: f64,
    /// OGA's learning-rate decay per slot.
    #[arg(long, default_value_t = 0.9999, allow_negative_numbers = true)]
    pub decay: f64,
    /// Seed of the drawn cluster and trace.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Horizons at which the regret is measured (evenly spaced up to T).
    #[arg(long, default_value_t = 20, allow_negative_numbers = true)]
    pub regret_points: i64,
    /// Projected-gradient steps of the best-in-hindsight comparator at each horizon, after 4
    /// times as many at T that warm-start them all.
    #[arg(long, default_value_t = 2000, allow_negative_numbers = true)]
    pub hindsight_iterations: i64,
    /// Output format on standard output.
    #[arg(long, value_enum, default_value_t = BenchFormat::Table)]
    pub format: BenchFormat,
    /// Also write results.json, average_reward.svg and regret.svg into this directory.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long, allow_negative_numbers = true)]
    pub threads: Option<i64>,
}

fn count(name: &str, v: i64, min: i64) -> Result<usize, String> {
    if v < min {
        return Err(format!("--{name}: expected an integer ≥ {min}, got {v}"));
    }
    usize::try_from(v).map_err(|_| format!("--{name}: {v} is too large"))
}

fn range(name: &str, s: &str) -> Result<(f64, f64), String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    match parts.as_slice() {
        [a, b] => match (a.parse::<f64>(), b.parse::<f64>()) {
            (Ok(a), Ok(b)) => Ok((a, b)),
            _ => Err(format!("--{name}: expected two numbers MIN,MAX, got `{s}`")),
        },
        _ => Err(format!("--{name}: expected two numbers MIN,MAX, got `{s}`")),
    }
}

impl OgaBenchArgs {
    /// The validated configuration; the error names the option.
    pub(crate) fn config(&self) -> Result<BenchConfig, String> {
        let utility = UtilityChoice::parse(&self.utility).ok_or_else(|| {
            format!(
                "--utility: expected linear, log, reciprocal, poly or mixed, got `{}`",
                self.utility
            )
        })?;
        let synthetic = SyntheticConfig {
            ports: count("ports", self.ports, 1)?,
            instances: count("instances", self.instances, 1)?,
            slots: count("slots", self.slots, 1)?,
            arrival_prob: self.arrival_prob,
            contention: self.contention,
            requests: Requests::parse(&self.requests)?,
            links: Links::parse(&self.links)?,
            alpha: range("alpha", &self.alpha)?,
            beta: range("beta", &self.beta)?,
            utility,
            seed: self.seed,
        };
        synthetic::validate(&synthetic)?;
        let step = StepSize::Geometric {
            eta0: self.eta0,
            decay: self.decay,
        };
        step.validate().map_err(|e| format!("--{e}"))?;
        Ok(BenchConfig {
            synthetic,
            step,
            regret_points: count("regret-points", self.regret_points, 1)?,
            hindsight_iterations: count("hindsight-iterations", self.hindsight_iterations, 0)?,
        })
    }
}

/// Runs `continuum oga-bench`.
pub fn execute(args: &OgaBenchArgs) -> Result<()> {
    let cfg = args.config().map_err(anyhow::Error::msg)?;
    let threads = match args.threads {
        Some(t) => count("threads", t, 1).map_err(anyhow::Error::msg)?,
        None => 0,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("cannot start worker threads")?;
    let start = Instant::now();
    let inst = synthetic::draw(&cfg.synthetic);
    let res = pool.install(|| bench::run(&cfg, &inst));
    let wall_s = start.elapsed().as_secs_f64();
    let report = output::build(&cfg, &inst, &res, wall_s, pool.current_num_threads());
    let text = match args.format {
        BenchFormat::Table => to_text_table(&report),
        BenchFormat::Json => to_json(&report),
    };
    // A closed pipe (`… | head`) is an error the binary exits on quietly, not a panic.
    crate::print(text.trim_end())?;
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("--out: cannot create {}", dir.display()))?;
        let json = dir.join("results.json");
        std::fs::write(&json, to_json(&report))
            .with_context(|| format!("cannot write {}", json.display()))?;
        let s = &cfg.synthetic;
        let caption = format!(
            "|L| {} |R| {} T {} {} seed {}",
            s.ports,
            s.instances,
            s.slots,
            s.utility.name(),
            s.seed
        );
        plot::plot_average_reward(&res, &caption, &dir.join("average_reward.svg"))
            .map_err(anyhow::Error::msg)?;
        plot::plot_regret(&res, &caption, &dir.join("regret.svg")).map_err(anyhow::Error::msg)?;
    }
    Ok(())
}
