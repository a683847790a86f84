//! Command-line arguments (clap derive).

use clap::{Parser, Subcommand};
use continuum_lab::run::RunArgs;
use std::path::PathBuf;

/// continuum: edge-cloud inference request dispatcher.
#[derive(Debug, Parser)]
#[command(name = "continuum", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
// One value per process, parsed once: the size of its largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Simulate one dispatch policy on a topology and print its success ratio over time.
    #[command(after_help = super::names::simulate_catalogue())]
    Simulate {
        /// The policy every scheduler uses, optionally with a tail-latency mitigation:
        /// `least-impedance+reissue@0.8`, `closest+discard@0.9`.
        #[arg(long, default_value = "least-impedance")]
        policy: String,
        /// Options shared with `compare`.
        #[command(flatten)]
        run: RunArgs,
    },
    /// Simulate every policy on the same workload and seed and compare their success ratios.
    #[command(after_help = super::names::catalogue())]
    Compare {
        /// Comma-separated policies to compare (default: all); `per-class:<file>` is a static
        /// per-class table (as written by `continuum table`). With `--grid`, the policies of
        /// the grid.
        #[arg(long)]
        policies: Option<String>,
        /// Comma-separated configurations: a policy and a tail-latency mitigation, `none`,
        /// `reissue@<r>` or `discard@<r>` (r a share of the deadline), or `restart@<r>` or
        /// `tdp@<r>` (r a share of a job's tasks), r in (0, 1] (e.g.
        /// `least-impedance+reissue@0.8,closest+restart@0.8`); added after `--policies`.
        #[arg(long)]
        configs: Option<String>,
        /// Compare every policy (or those of `--policies`) under every mitigation: none, and
        /// each kind of `--kinds` at each ratio of `--ratios`.
        #[arg(long, conflicts_with = "configs")]
        grid: bool,
        /// Comma-separated ratios r of the grid (default: 0.70, 0.72, …, 0.90).
        #[arg(long, requires = "grid")]
        ratios: Option<String>,
        /// Comma-separated mitigation kinds of the grid, in order: `reissue`, `discard`,
        /// `restart`, `tdp` (default: `reissue,discard`).
        #[arg(long, requires = "grid")]
        kinds: Option<String>,
        /// Add a `dqn` row: a meta-policy checkpoint written by `continuum train`. Repeat it to
        /// compare several; their rows are then named `dqn:<file stem>`.
        #[arg(long)]
        agent: Vec<PathBuf>,
        /// Add a `tables:<file stem>` row: the checkpoint's fallback tables alone (its network
        /// never consulted), to measure what the network adds over them. Repeatable.
        #[arg(long)]
        agent_tables: Vec<PathBuf>,
        /// Add a `network:<file stem>` row: the checkpoint's network alone (margin 0, its
        /// tables never kept against it). Repeatable.
        #[arg(long)]
        agent_network: Vec<PathBuf>,
        /// Add an `oracle` row: at every window, the best choice in hindsight (docs/model.md §10), over
        /// the first agent's actions and classes (per-class: coordinate ascent), or the default
        /// actions and one class per application without an agent.
        #[arg(long)]
        oracle: bool,
        /// Comma-separated allocators above dispatch (every name is listed after the options):
        /// every configuration row runs under each, named `<configuration>@<allocator>`. The topology's workers become every variant
        /// that fits each cluster; every slot the allocator turns the demand of the slot just
        /// ended into replicas per variant per cluster (`static`: the file's deployment).
        #[arg(long)]
        allocators: Option<String>,
        /// Allocation slot, s.
        #[arg(long, default_value_t = continuum_alloc::placement::DEFAULT_SLOT_S, requires = "allocators")]
        alloc_slot_s: f64,
        /// Units of the allocation model's resources: `natural` (cores, GPUs, GB, as OGASched
        /// counts them), `replica` (one unit = the smallest need of one replica), `instance`
        /// (the largest cluster holds α/β − 1 units).
        #[arg(long, default_value = "natural", requires = "allocators")]
        alloc_units: String,
        /// OGA's initial learning rate η0 (decay 0.9999 per slot). Default: from the regret
        /// bound on the model, D / (G √T); OGASched's Table 2 uses 25 at its own scale.
        #[arg(long, requires = "allocators")]
        alloc_eta0: Option<f64>,
        /// Options shared with `simulate`.
        #[command(flatten)]
        run: RunArgs,
    },
    /// Train the DQN meta-policy on a topology and write its checkpoint.
    Train(continuum_lab::train::TrainArgs),
    /// Meta-train an initialisation of the meta-policy network over generated topologies
    /// (Reptile), to adapt from with `train --init <it> --budget <queries>`.
    MetaTrain(continuum_lab::train::MetaTrainArgs),
    /// Train the topology-free meta-policy across generated networks: one checkpoint for any
    /// topology (docs/model.md §9.9); adapt it to one with `train <topology> --init`.
    TrainUniversal(continuum_lab::train::TrainUniversalArgs),
    /// The DeepRM reproduction (docs/deeprm.md): train, meta-train and evaluate job-scheduling
    /// policies against Tetris, SJF and random.
    Deeprm {
        /// What to do.
        #[command(subcommand)]
        cmd: continuum_deeprm::cli::DeepRmCommand,
    },
    /// Find the best static per-class policy table on some seeds and write it (a baseline for
    /// `compare --policies per-class:<file>`; choose it on seeds other than the evaluation's).
    Table(continuum_lab::table::TableArgs),
    /// Sweeps: a grid of compare runs split into cells, run here or on a Ray cluster and
    /// merged into the reports `compare` writes (docs/scale-out.md).
    Sweep {
        /// What to do.
        #[command(subcommand)]
        cmd: continuum_lab::sweep::SweepCommand,
    },
    /// Topology files: `generate` writes an ISP-shaped topology of any size, `import` turns a
    /// real network (Topology Zoo GML, node-link JSON) into one.
    Topology {
        /// What to do.
        #[command(subcommand)]
        cmd: super::topology::TopologyCommand,
    },
    /// Serve ONNX model variants over HTTP (Open Inference Protocol v2) and QUIC.
    #[command(after_help = super::names::server_settings(
        continuum_worker::config::ENV_KEYS,
        "config/worker.yaml",
        "CONTINUUM_HTTP__LISTEN=127.0.0.1:9000",
    ))]
    Worker {
        /// Worker settings (YAML; `CONTINUUM_*` variables override them).
        #[arg(long)]
        config: PathBuf,
    },
    /// Bind client streams to workers and forward their queries (one process per antenna or
    /// central office).
    #[command(after_help = super::names::server_settings(
        continuum_gateway::config::ENV_KEYS,
        "config/gateway.yaml",
        "CONTINUUM_ADMIN_TOKEN=s3cret",
    ))]
    Gateway {
        /// Gateway settings (YAML; `CONTINUUM_*` variables override them).
        #[arg(long)]
        config: PathBuf,
    },
    /// Allocate live: every slot, read the gateways' demand and load or unload variants on
    /// the workers (the allocator above dispatch, on a running slice).
    Allocator {
        /// Allocator settings (YAML): topology, profiles, workload, allocator, slot_s,
        /// gateways (scheduler, metrics URL), workers (cluster, URL).
        #[arg(long)]
        config: PathBuf,
        /// Stop after this many slots (default: run until interrupted).
        #[arg(long)]
        slots: Option<u64>,
    },
    /// Open streams against a gateway with a workload's app classes and λ and report outcomes.
    Loadgen(continuum_loadgen::LoadgenArgs),
    /// Batch jobs on the nodes of a topology (docs/jobs.md): tasks queued for CPU, GPU and
    /// memory, placed per task as kube-scheduler and Volcano do, stragglers restarted or
    /// discarded.
    Jobs {
        /// compare, simulate, load, train, evaluate or ml.
        #[command(subcommand)]
        cmd: JobsCmd,
    },
    /// The loopback system as background processes: `live up` starts the workers and the
    /// gateway (and `--allocator`) and returns once all answer; `live down` stops them.
    Live {
        /// up, down or status.
        #[command(subcommand)]
        cmd: super::live::LiveCmd,
    },
    /// Print a shell's completion script for every subcommand and option, e.g.
    /// `continuum completions bash > ~/.local/share/bash-completion/completions/continuum`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Reproduce OGASched's comparison (online allocation vs DRF, fairness, bin packing,
    /// spreading) on a synthetic trace: average reward over time, gains and regret.
    OgaBench(continuum_lab::oga_bench::OgaBenchArgs),
    /// Measure the ONNX models of a directory and write a profile the simulator accepts.
    Profile {
        /// Directory with `models.yaml` and the ONNX files.
        #[arg(long, default_value = "models")]
        models: PathBuf,
        /// Folder to write the profile into, as `local.yaml` (the default is outside the
        /// tracked files; `profiles/local.yaml` is the shipped one the live tour reads). A file
        /// name ending in `.yaml` is the former form: accepted, with a warning.
        #[arg(long, default_value = "out/profiles")]
        out: PathBuf,
        /// Least timed runs per variant.
        #[arg(long, default_value_t = 30)]
        reps: usize,
        /// Least timed duration per variant, ms.
        #[arg(long, default_value_t = 1000)]
        min_time_ms: u64,
    },
}

/// `continuum jobs …`: the jobs simulator's commands and EdgeTuner's on it.
#[derive(Debug, Subcommand)]
pub enum JobsCmd {
    /// The simulator's commands.
    #[command(flatten)]
    Sim(continuum_jobs::cli::JobsCommand),
    /// Train EdgeTuner on batch jobs (IQN + Ape-X, the paper's state and reward): the
    /// configuration, one algorithm and one mitigation, chosen every 10 s.
    Train(continuum_lab::jobs_tune::TrainArgs),
    /// A trained EdgeTuner against every fixed configuration of the paper's comparison set on
    /// held-out seeds: the paper's form (mean change against each) and the stricter ones.
    Evaluate(continuum_lab::jobs_tune::EvaluateArgs),
    /// TapFinger in its own problem: ML tasks that edge clusters pull and give CPU and GPU
    /// (`ml compare`: the rules Optimus, Tiresias, Random, Min, prior-pull and trained agents on
    /// the same tasks; `ml train`: MAPPO).
    Ml {
        /// compare or train.
        #[command(subcommand)]
        cmd: continuum_lab::jobs_tap::MlCmd,
    },
}
