//! Carrying out `continuum topology generate | import`: an ISP-shaped topology file of any size,
//! or one made from a real network, checked with the same validation as a hand-written one
//! before it is written.

use anyhow::{Context, Result, anyhow};
use clap::{Args, Subcommand};
use continuum_core::config::Source;
use continuum_core::profiles::Profiles;
use continuum_core::topology::Topology;
use continuum_topogen::generate::{GenerateOptions, generate};
use continuum_topogen::import::{ImportOptions, import, network};
use std::path::PathBuf;

/// `continuum topology …` subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum TopologyCommand {
    /// Write an ISP-shaped topology: antennas → central offices → regional DCs → cloud
    /// (defaults: `topologies/full-edge.yaml`'s fan-outs, links and per-site resources).
    Generate(GenerateArgs),
    /// Turn a real network (Topology Zoo GML or networkx node-link JSON) into a topology: PoPs
    /// become central offices, regional DCs and the cloud sit at chosen PoPs, delays follow
    /// fibre distance (docs/model.md §2.6 states the rules).
    Import(ImportArgs),
}

/// Per-site resources and output, shared by `generate` and `import`.
#[derive(Debug, Clone, Args)]
pub struct SiteArgs {
    /// Link jitter as a fraction of the link's mean.
    #[arg(long, default_value_t = 0.2)]
    pub jitter: f64,
    /// Cores per site: antenna,CO,regional DC,cloud (memory: 4 GB per core) [default:
    /// 16,64,128,256].
    #[arg(long, value_delimiter = ',', default_values_t = [16.0, 64.0, 128.0, 256.0], hide_default_value = true)]
    pub cpu: Vec<f64>,
    /// GPUs per site: CO,regional DC,cloud [default: 10,24,32].
    #[arg(long, value_delimiter = ',', default_values_t = [10, 24, 32], hide_default_value = true)]
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
    /// Antennas and central offices only forward traffic: compute only in the regional DCs
    /// and the cloud (`topologies/dc-cloud.yaml`'s shape).
    #[arg(long)]
    pub bare_edge: bool,
    /// Topology name (default: `isp-<antennas>`, or the imported network's).
    #[arg(long)]
    pub name: Option<String>,
    /// Variant profiles the file is checked against.
    #[arg(long, default_value = "profiles/object-detection.yaml")]
    pub profiles: PathBuf,
    /// Folder to write the topology into, as `topology.yaml` (default: standard output; a
    /// file name ending in `.yaml` is the former form: accepted, with a warning).
    #[arg(long)]
    pub out: Option<PathBuf>,
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
    /// One-way link delay means, ms: antenna→CO,CO→regional DC,regional DC→cloud [default:
    /// 1.5,6,20].
    #[arg(long, value_delimiter = ',', default_values_t = [1.5, 6.0, 20.0], hide_default_value = true)]
    pub link_ms: Vec<f64>,
    /// Each link's mean drawn uniformly within ± this fraction of its layer's (0: uniform).
    #[arg(long, default_value_t = 0.0)]
    pub link_spread: f64,
    #[command(flatten)]
    pub sites: SiteArgs,
}

/// Options of `continuum topology import`.
#[derive(Debug, Clone, Args)]
pub struct ImportArgs {
    /// The network: a Topology Zoo `.gml` file or networkx node-link JSON (TopoHub's form).
    pub file: PathBuf,
    /// Antennas per PoP.
    #[arg(long, default_value_t = 2)]
    pub antennas_per_co: usize,
    /// Regional DCs, at PoPs chosen by greedy k-median on delay (default ⌈√PoPs⌉).
    #[arg(long)]
    pub regional_dcs: Option<usize>,
    /// Fibre route length over great-circle length (an assumption; see docs/model.md §2.6).
    #[arg(long, default_value_t = 1.5)]
    pub route_factor: f64,
    /// One-way delay of an antenna's access link, ms.
    #[arg(long, default_value_t = 1.5)]
    pub access_ms: f64,
    /// Extra one-way delay from the most central PoP to the cloud, ms.
    #[arg(long, default_value_t = 5.0)]
    pub cloud_extra_ms: f64,
    /// Floor of every link's delay, ms.
    #[arg(long, default_value_t = 0.1)]
    pub min_link_ms: f64,
    /// Write the mesh delay as an override where it beats the tree path by more than this, ms.
    #[arg(long, default_value_t = 0.5)]
    pub override_threshold_ms: f64,
    /// Write no overrides: the tree's delays only.
    #[arg(long)]
    pub no_overrides: bool,
    /// A line crediting the source data, written at the top of the file.
    #[arg(long)]
    pub attribution: Option<String>,
    #[command(flatten)]
    pub sites: SiteArgs,
}

fn site_options(a: &SiteArgs) -> Result<GenerateOptions> {
    if a.cpu.len() != 4 || a.cpu.iter().any(|x| !x.is_finite()) {
        return Err(anyhow!("--cpu: expected 4 comma-separated numbers"));
    }
    if a.gpu.len() != 3 {
        return Err(anyhow!("--gpu: expected 3 comma-separated GPU counts"));
    }
    Ok(GenerateOptions {
        jitter: a.jitter,
        cpu: [a.cpu[0], a.cpu[1], a.cpu[2], a.cpu[3]],
        gpu: [a.gpu[0], a.gpu[1], a.gpu[2]],
        antenna_gpu_share: a.antenna_gpu_share,
        seed: a.seed,
        max_reach_ms: a.max_reach_ms,
        bare_edge: a.bare_edge,
        ..Default::default()
    })
}

fn options(a: &GenerateArgs) -> Result<GenerateOptions> {
    if a.link_ms.len() != 3 || a.link_ms.iter().any(|x| !x.is_finite()) {
        return Err(anyhow!("--link-ms: expected 3 comma-separated numbers"));
    }
    let o = GenerateOptions {
        name: a
            .sites
            .name
            .clone()
            .unwrap_or_else(|| format!("isp-{}", a.antennas)),
        antennas: a.antennas,
        antennas_per_co: a.antennas_per_co,
        cos_per_rdc: a.cos_per_rdc,
        link_ms: [a.link_ms[0], a.link_ms[1], a.link_ms[2]],
        link_spread: a.link_spread,
        ..site_options(&a.sites)?
    };
    o.validate().map_err(anyhow::Error::msg)?;
    Ok(o)
}

/// Validates `text` as a topology and writes it (or prints it); `what` goes to standard error.
fn emit(sites: &SiteArgs, text: &str, what: impl FnOnce(&Topology) -> String) -> Result<()> {
    let profiles = Profiles::load(&sites.profiles)?;
    let out = match &sites.out {
        Some(o) => {
            let (file, warning) =
                continuum_core::config::prepare_out(o, "topology.yaml", &["yaml", "yml"])
                    .map_err(anyhow::Error::msg)?;
            if let Some(w) = warning {
                eprintln!("{w}");
            }
            Some(file)
        }
        None => None,
    };
    let name = out
        .as_ref()
        .map_or("generated topology".into(), |p| p.display().to_string());
    let t = Topology::from_source(&Source::inline(&name, text), &profiles)
        .context("the topology does not validate (check --cpu and --gpu: each GPU replica also needs 2 cores)")?;
    match &out {
        Some(p) => {
            std::fs::write(p, text).with_context(|| format!("cannot write {}", p.display()))?;
            eprintln!("wrote {}: {}", p.display(), what(&t));
        }
        None => print!("{text}"),
    }
    Ok(())
}

/// Runs `continuum topology …`.
pub(super) fn execute(cmd: &TopologyCommand) -> Result<()> {
    match cmd {
        TopologyCommand::Generate(a) => {
            let o = options(a)?;
            let text = generate(&o);
            let (cos, rdcs) = o.counts();
            emit(&a.sites, &text, |t| {
                format!(
                    "{} antennas, {cos} central offices, {rdcs} regional DCs, 1 cloud; {} workers",
                    o.antennas,
                    t.workers.len()
                )
            })
        }
        TopologyCommand::Import(a) => {
            let o = ImportOptions {
                name: a.sites.name.clone(),
                antennas_per_co: a.antennas_per_co,
                regional_dcs: a.regional_dcs,
                route_factor: a.route_factor,
                access_ms: a.access_ms,
                cloud_extra_ms: a.cloud_extra_ms,
                min_link_ms: a.min_link_ms,
                override_threshold_ms: (!a.no_overrides).then_some(a.override_threshold_ms),
                sites: site_options(&a.sites)?,
                attribution: a.attribution.clone(),
            };
            o.validate().map_err(anyhow::Error::msg)?;
            let net = network::read(&Source::read(&a.file)?)?;
            if !net.dropped.is_empty() {
                eprintln!(
                    "left out {} node(s) of {}: {}",
                    net.dropped.len(),
                    a.file.display(),
                    net.dropped.join("; ")
                );
            }
            let (text, s) = import(&net, &o);
            emit(&a.sites, &text, |t| {
                format!(
                    "{} PoPs ({} links, mesh diameter {:.2} ms) as central offices, {} regional DCs, 1 cloud, {} antennas; {} overrides; {} workers",
                    s.pops,
                    s.links,
                    s.diameter_ms,
                    s.regional_dcs,
                    s.antennas,
                    s.overrides,
                    t.workers.len()
                )
            })
        }
    }
}
