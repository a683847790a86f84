//! Carrying out `continuum topology generate`: an ISP-shaped topology file of any size, checked
//! with the same validation as a hand-written one before it is written.

use anyhow::{Context, Result, anyhow};
use clap::{Args, Subcommand};
use continuum_core::config::Source;
use continuum_core::profiles::Profiles;
use continuum_core::topology::Topology;
use continuum_core::topology::generate::{GenerateOptions, generate};
use std::path::PathBuf;

/// `continuum topology …` subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum TopologyCommand {
    /// Write an ISP-shaped topology: antennas → central offices → regional DCs → cloud
    /// (defaults: `topologies/full-edge.yaml`'s fan-outs, links and per-site resources).
    Generate(GenerateArgs),
}

/// Options of `continuum topology generate`.
#[derive(Debug, Clone, Args)]
pub struct GenerateArgs {
    /// Antennas (one scheduler each).
    #[arg(long)]
    pub antennas: usize,
    /// Antennas per central office.
    #[arg(long, default_value_t = 4)]
    pub antennas_per_co: usize,
    /// Central offices per regional DC.
    #[arg(long, default_value_t = 2)]
    pub cos_per_rdc: usize,
    /// One-way link delay means, ms: antenna→CO,CO→regional DC,regional DC→cloud.
    #[arg(long, value_delimiter = ',', default_values_t = [1.5, 6.0, 20.0])]
    pub link_ms: Vec<f64>,
    /// Link jitter as a fraction of the link's mean.
    #[arg(long, default_value_t = 0.2)]
    pub jitter: f64,
    /// Each link's mean drawn uniformly within ± this fraction of its layer's (0: uniform).
    #[arg(long, default_value_t = 0.0)]
    pub link_spread: f64,
    /// Cores per site: antenna,CO,regional DC,cloud (memory: 4 GB per core).
    #[arg(long, value_delimiter = ',', default_values_t = [16.0, 64.0, 128.0, 256.0])]
    pub cpu: Vec<f64>,
    /// GPUs per site: CO,regional DC,cloud.
    #[arg(long, value_delimiter = ',', default_values_t = [10, 24, 32])]
    pub gpu: Vec<u32>,
    /// Share of antennas with one small GPU.
    #[arg(long, default_value_t = 0.5)]
    pub antenna_gpu_share: f64,
    /// Seed of the per-site draws.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Routing scope, ms: workers whose net distance (d + 2σ) from a scheduler exceeds it are
    /// not its candidates (default: every worker in the tree).
    #[arg(long)]
    pub max_reach_ms: Option<f64>,
    /// Topology name (default: `isp-<antennas>`).
    #[arg(long)]
    pub name: Option<String>,
    /// Variant profiles the file is checked against.
    #[arg(long, default_value = "profiles/object-detection.yaml")]
    pub profiles: PathBuf,
    /// File to write (default: standard output).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

fn options(a: &GenerateArgs) -> Result<GenerateOptions> {
    let arr = |v: &[f64], what: &str| -> Result<Vec<f64>> {
        let n = if what == "--cpu" { 4 } else { 3 };
        if v.len() != n || v.iter().any(|x| !x.is_finite()) {
            return Err(anyhow!("{what}: expected {n} comma-separated numbers"));
        }
        Ok(v.to_vec())
    };
    let link = arr(&a.link_ms, "--link-ms")?;
    let cpu = arr(&a.cpu, "--cpu")?;
    if a.gpu.len() != 3 {
        return Err(anyhow!("--gpu: expected 3 comma-separated GPU counts"));
    }
    let o = GenerateOptions {
        name: a
            .name
            .clone()
            .unwrap_or_else(|| format!("isp-{}", a.antennas)),
        antennas: a.antennas,
        antennas_per_co: a.antennas_per_co,
        cos_per_rdc: a.cos_per_rdc,
        link_ms: [link[0], link[1], link[2]],
        jitter: a.jitter,
        link_spread: a.link_spread,
        cpu: [cpu[0], cpu[1], cpu[2], cpu[3]],
        gpu: [a.gpu[0], a.gpu[1], a.gpu[2]],
        antenna_gpu_share: a.antenna_gpu_share,
        seed: a.seed,
        max_reach_ms: a.max_reach_ms,
    };
    o.validate().map_err(anyhow::Error::msg)?;
    Ok(o)
}

/// Runs `continuum topology …`.
pub fn execute(cmd: &TopologyCommand) -> Result<()> {
    let TopologyCommand::Generate(a) = cmd;
    let o = options(a)?;
    let text = generate(&o);
    let profiles = Profiles::load(&a.profiles)?;
    let name = a
        .out
        .as_ref()
        .map_or("generated topology".into(), |p| p.display().to_string());
    let t = Topology::from_source(&Source::inline(&name, &text), &profiles)
        .context("the generated topology does not validate (check --cpu and --gpu: each GPU replica also needs 2 cores)")?;
    match &a.out {
        Some(p) => {
            std::fs::write(p, &text).with_context(|| format!("cannot write {}", p.display()))?;
            let (cos, rdcs) = o.counts();
            eprintln!(
                "wrote {}: {} antennas, {cos} central offices, {rdcs} regional DCs, 1 cloud; {} workers",
                p.display(),
                o.antennas,
                t.workers.len()
            );
        }
        None => print!("{text}"),
    }
    Ok(())
}
