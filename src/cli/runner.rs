//! What one row of a report runs: a static policy, the trained DQN agent, or the per-window
//! oracle.

use crate::agent::{Agent, Checkpoint};
use crate::meta;
use crate::policy::Policy;
use crate::report::PolicyResult;
use crate::sim::{Scenario, SimConfig, SimStats, Simulation};
use anyhow::{Context, Result};
use indicatif::ProgressBar;
use std::path::PathBuf;
use std::sync::Arc;

/// Extra simulated time an oracle fork runs past its window so the window's queries are
/// answered before it is scored, ms (the longest deadline of the default workload is 1 s).
const ORACLE_SETTLE_MS: f64 = 2000.0;

/// One row of a report.
pub enum Runner {
    /// Every scheduler uses this policy throughout.
    Static(&'static dyn Policy),
    /// The meta-policy of a checkpoint picks each scheduler's policy every window.
    Dqn(Box<Checkpoint>, PathBuf),
    /// At every window, the best of these policies in hindsight.
    Oracle(Vec<&'static dyn Policy>),
}

impl Runner {
    /// A `dqn` row from a checkpoint file.
    pub fn dqn(path: &std::path::Path) -> Result<Self> {
        let ck = Checkpoint::load(path)?;
        Ok(Runner::Dqn(Box::new(ck), path.to_path_buf()))
    }

    /// The row's name in reports.
    pub fn name(&self) -> String {
        match self {
            Runner::Static(p) => p.name().to_string(),
            Runner::Dqn(..) => "dqn".into(),
            Runner::Oracle(_) => "oracle".into(),
        }
    }

    /// The policies a `dqn` row chooses among.
    pub fn agent_actions(&self) -> Option<Vec<&'static dyn Policy>> {
        match self {
            Runner::Dqn(ck, _) => ck
                .actions
                .iter()
                .map(|a| crate::policy::by_name(a))
                .collect(),
            _ => None,
        }
    }

    /// Runs the row on `sc` under `cfg`, advancing `bar` by one step per reporting window.
    pub fn run(
        &self,
        sc: &Arc<Scenario>,
        cfg: SimConfig,
        window_s: f64,
        bar: &ProgressBar,
    ) -> Result<(PolicyResult, SimStats)> {
        let steps = (cfg.duration_s / window_s).ceil() as u64;
        let sim = match self {
            Runner::Static(p) => {
                let mut sim = Simulation::new(sc.clone(), cfg, *p);
                for k in 1..=steps {
                    sim.run_until(k as f64 * window_s * 1000.0);
                    bar.inc(1);
                }
                sim.finish();
                return Ok((PolicyResult::from_sim(p.name(), &sim), sim.stats()));
            }
            Runner::Dqn(ck, path) => {
                let names = sc.profiles.variant_names();
                let mut agent = Agent::new(ck, path, &sc.topology, &sc.fleet, &names)?;
                meta::run_agent(
                    sc.clone(),
                    cfg,
                    &mut agent,
                    ck.config.window_s,
                    ck.config.buckets.clone(),
                )
                .context("running the agent")?
            }
            Runner::Oracle(candidates) => {
                let oracle_cfg = SimConfig { window_s, ..cfg };
                meta::run_oracle(sc.clone(), oracle_cfg, candidates, ORACLE_SETTLE_MS).0
            }
        };
        bar.inc(steps);
        Ok((PolicyResult::from_sim(&self.name(), &sim), sim.stats()))
    }
}
