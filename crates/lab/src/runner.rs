//! What one row of a report runs: a static configuration (a policy and a mitigation), a
//! static per-class table, a trained DQN agent, or the per-window oracle.

use crate::report::{ActionShareReport, PolicyResult};
use anyhow::{Context, Result};
use continuum_core::mitigation::Configuration;
use continuum_core::policy::{PolicyTable, StreamClasses};
use continuum_core::pull::Puller;
use continuum_infer::agent::{Agent, Checkpoint};
use continuum_infer::tapfinger::ResolutionName;
use continuum_infer::tapfinger::{Pick, TapCheckpoint, TapFinger};
use continuum_learn::meta;
use continuum_sim::{PullConfig, Scenario, SimConfig, SimStats, Simulation};
use indicatif::ProgressBar;
use std::path::PathBuf;
use std::sync::Arc;

/// The ways a TapFinger row can settle conflicting claims (`tapfinger[<resolution>]:<ckpt>`).
pub const RESOLUTIONS: [&str; 3] = ["bayes", "uniform-prior", "first-claim"];

/// Extra simulated time an oracle fork runs past its window so the window's queries are
/// answered before it is scored, ms (the longest deadline of the default workload is 1 s).
const ORACLE_SETTLE_MS: f64 = 2000.0;

/// What the oracle row chooses among, and by what.
pub struct OracleChoices {
    /// Candidate configurations.
    pub candidates: Vec<Configuration>,
    /// How streams are classed.
    pub classes: StreamClasses,
    /// What a window is scored by.
    pub objective: continuum_core::metrics::Objective,
}

/// One row of a report.
pub enum Runner {
    /// Every scheduler uses this configuration throughout.
    Static(Configuration),
    /// Every scheduler uses this per-class table throughout (row name, table).
    Table(String, Box<PolicyTable>),
    /// The meta-policy of a checkpoint picks each scheduler's policy per class every window
    /// (row name, checkpoint, its path).
    Dqn(String, Box<Checkpoint>, PathBuf),
    /// At every window, the best of these configurations per class in hindsight, by the
    /// objective.
    Oracle(OracleChoices),
    /// Pull dispatch (docs/model.md §15): every cluster's agent claims pending streams at each
    /// decision step.
    Pull(PullRow),
    /// A configuration under an allocator that redeploys the candidate workers every slot
    /// (`static`: the topology file's deployment throughout).
    Allocated {
        /// The dispatch configuration every scheduler uses.
        config: Configuration,
        /// Allocator name (`static` or one of [`continuum_alloc::alloc::NAMES`]).
        allocator: String,
        /// Slot length, s.
        slot_s: f64,
        /// Settings of the allocation model.
        model: continuum_alloc::placement::ModelOptions,
    },
}

/// What claims streams in a pull row.
pub enum PullRow {
    /// A hand-written baseline (one of `continuum_core::pull::BASELINES`).
    Baseline(&'static str),
    /// TapFinger's agents from a checkpoint (row name, checkpoint, its path).
    TapFinger(String, Box<TapCheckpoint>, PathBuf),
}

impl PullRow {
    /// The row's name.
    pub fn name(&self) -> String {
        match self {
            PullRow::Baseline(n) => (*n).to_string(),
            PullRow::TapFinger(n, ..) => n.clone(),
        }
    }

    /// A fresh puller for one run on `sc`.
    pub fn puller(&self, sc: &Scenario) -> Result<Box<dyn Puller>> {
        match self {
            PullRow::Baseline(n) => continuum_core::pull::baseline(n)
                .map(|p| p as Box<dyn Puller>)
                .context("a registered pull baseline"),
            PullRow::TapFinger(name, ck, path) => {
                let net = ck.network(path)?;
                let c = &ck.meta.config;
                Ok(Box::new(
                    TapFinger::new(
                        net,
                        if c.sample { Pick::Sample } else { Pick::Greedy },
                        c.pointer,
                        c.resolution.resolution(),
                        sc.topology.clusters.len(),
                    )
                    .with_fallback(c.fallback)
                    .named(name.clone()),
                ))
            }
        }
    }
}

impl Runner {
    /// A `dqn` row named `name` from a checkpoint file.
    pub fn dqn(name: String, path: &std::path::Path) -> Result<Self> {
        let ck = Checkpoint::load(path)?;
        Ok(Runner::Dqn(name, Box::new(ck), path.to_path_buf()))
    }

    /// A `dqn` row whose checkpoint runs with `margin` instead of its own (infinite: its
    /// fallback tables alone; 0: its network alone).
    pub fn dqn_with_margin(name: String, path: &std::path::Path, margin: f64) -> Result<Self> {
        let mut ck = Checkpoint::load(path)?;
        ck.meta.margin = margin;
        // The margin holds at every level: per-level margins would override it.
        ck.meta.fallback.margins.clear();
        Ok(Runner::Dqn(name, Box::new(ck), path.to_path_buf()))
    }

    /// A TapFinger row from a `tapfinger:<checkpoint>` entry, run as the checkpoint's config
    /// says or with `settings`, comma-separated: a resolution (`bayes`, `uniform-prior`,
    /// `first-claim`), `fallback=<c>` (claim as `prior-pull` where the pointer's most
    /// probable choice is below probability c) and/or `sample` (each agent draws from its
    /// policy, as in training, instead of taking the most probable choice).
    pub fn tapfinger(file: &str, settings: Option<&str>) -> Result<Self> {
        let path = std::path::Path::new(file);
        let mut ck = TapCheckpoint::load(path)?;
        let name = match settings {
            None => format!("tapfinger:{file}"),
            Some(how) => {
                for item in how.split(',').map(str::trim) {
                    if let Some(c) = item.strip_prefix("fallback=") {
                        let c: f64 = c.parse().ok().filter(|c| *c > 0.0 && *c <= 1.0).with_context(
                            || format!("`tapfinger[{how}]`: fallback: expected a probability in (0, 1], got `{c}`"),
                        )?;
                        ck.meta.config.fallback = Some(c);
                        continue;
                    }
                    if item == "sample" {
                        ck.meta.config.sample = true;
                        continue;
                    }
                    ck.meta.config.resolution = match item {
                        "bayes" => ResolutionName::Bayes,
                        "uniform-prior" => ResolutionName::UniformPrior,
                        "first-claim" => ResolutionName::FirstClaim,
                        _ => anyhow::bail!(
                            "`tapfinger[{how}]`: unknown setting `{item}`; expected a resolution (one of {:?}), `fallback=<c>` or `sample`",
                            RESOLUTIONS
                        ),
                    };
                }
                format!("tapfinger[{how}]:{file}")
            }
        };
        Ok(Runner::Pull(PullRow::TapFinger(
            name,
            Box::new(ck),
            path.to_path_buf(),
        )))
    }

    /// A table row from a `per-class:<file>` entry.
    pub fn table(file: &str) -> Result<Self> {
        let t = PolicyTable::load(std::path::Path::new(file))?;
        Ok(Runner::Table(format!("per-class:{file}"), Box::new(t)))
    }

    /// The row's name in reports.
    pub fn name(&self) -> String {
        match self {
            Runner::Static(c) => c.name(),
            Runner::Table(n, _) | Runner::Dqn(n, ..) => n.clone(),
            Runner::Pull(p) => p.name(),
            Runner::Oracle(..) => "oracle".into(),
            Runner::Allocated {
                config, allocator, ..
            } => format!("{}@{allocator}", config.name()),
        }
    }

    /// The configurations and classes a `dqn` row chooses among, and its objective.
    pub fn agent_choices(&self) -> Option<OracleChoices> {
        match self {
            Runner::Dqn(_, ck, _) => Some(OracleChoices {
                candidates: continuum_infer::agent::parse_actions(&ck.meta.actions).ok()?,
                classes: ck.meta.classes.clone(),
                objective: ck.meta.config.objective,
            }),
            _ => None,
        }
    }

    /// Runs the row on `sc` (allocated rows: on `candidates`, the same scenario with candidate
    /// workers) under `cfg`, advancing `bar` by one step per reporting window.
    pub fn run(
        &self,
        sc: &Arc<Scenario>,
        candidates: Option<&Arc<Scenario>>,
        cfg: SimConfig,
        pull: PullConfig,
        window_s: f64,
        bar: &ProgressBar,
    ) -> Result<(PolicyResult, SimStats)> {
        let steps = (cfg.duration_s / window_s).ceil() as u64;
        let step_through = |mut sim: Simulation| {
            for k in 1..=steps {
                sim.run_until(k as f64 * window_s * 1000.0);
                bar.inc(1);
            }
            sim.finish();
            sim
        };
        let mut shares = None;
        let mut allocation = None;
        let sim = match self {
            Runner::Allocated {
                config,
                allocator,
                slot_s,
                model,
            } => {
                let sc = candidates.context("an allocated row needs the candidate scenario")?;
                let cfg = SimConfig {
                    mitigation: config.mitigation,
                    ..cfg
                };
                let sim = Simulation::new(sc.clone(), cfg, config.policy);
                let (sim, report) =
                    crate::allocated::run(sim, allocator, *slot_s, *model, window_s, steps, bar)?;
                allocation = Some(report);
                sim
            }
            Runner::Static(c) => {
                let cfg = SimConfig {
                    mitigation: c.mitigation,
                    ..cfg
                };
                step_through(Simulation::new(sc.clone(), cfg, c.policy))
            }
            Runner::Table(_, t) => step_through(Simulation::with_table(sc.clone(), cfg, t)),
            Runner::Pull(row) => {
                let mut puller = row.puller(sc)?;
                let mut sim = Simulation::new(sc.clone(), cfg, continuum_core::policy::REGISTRY[0]);
                sim.enable_pull(pull)
                    .map_err(|m| anyhow::anyhow!("--pull-step-ms/--patience: {m}"))?;
                let mut none = |_: &Simulation, _: &continuum_sim::PullStepOutcome| {};
                for k in 1..=steps {
                    sim.run_pulled_until(k as f64 * window_s * 1000.0, puller.as_mut(), &mut none);
                    bar.inc(1);
                }
                sim.finish_pulled(puller.as_mut(), &mut none);
                sim
            }
            Runner::Dqn(_, ck, path) => {
                let names = sc.profiles.variant_names();
                let mut agent = Agent::new(ck, path, &sc.topology, &sc.fleet, &names)?;
                let (sim, s) = meta::run_agent(
                    sc.clone(),
                    cfg,
                    &mut agent,
                    ck.meta.config.window_s,
                    ck.meta.config.buckets.clone(),
                )
                .context("running the agent")?;
                shares = Some(ActionShareReport::from(&s));
                bar.inc(steps);
                sim
            }
            Runner::Oracle(o) => {
                let oracle_cfg = SimConfig { window_s, ..cfg };
                let sim = meta::run_oracle(
                    sc.clone(),
                    oracle_cfg,
                    &o.candidates,
                    &o.classes,
                    ORACLE_SETTLE_MS,
                    o.objective,
                )
                .0;
                bar.inc(steps);
                sim
            }
        };
        let mut result = PolicyResult::from_sim(&self.name(), &sim);
        result.actions = shares;
        result.allocation = allocation;
        Ok((result, sim.stats()))
    }
}
