//! Running a meta-policy over the simulator: the trained DQN agent, which picks a
//! configuration (dispatch policy and mitigation) per scheduler and stream class at every
//! window boundary; the per-window oracle
//! (docs/model.md §10), which forks the run at every boundary and keeps the best choice in hindsight;
//! and the search for the best static per-class table ([`table_search`]).

mod oracle;
pub mod table_search;

pub use oracle::{OracleWindow, run_oracle};

use continuum_core::mitigation::Configuration;
use continuum_infer::agent::{Agent, DqnConfig};
use continuum_sim::{Scenario, SimConfig, Simulation};
use serde::Serialize;
use std::sync::Arc;

/// How often each action was chosen for each class, over every scheduler and window.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ActionShares {
    /// Class names.
    pub classes: Vec<String>,
    /// Action (configuration) names.
    pub actions: Vec<String>,
    /// `counts[c][a]`: decisions of class `c` that chose action `a`.
    pub counts: Vec<Vec<u64>>,
}

impl ActionShares {
    /// Empty counts for these classes and actions.
    pub fn new(classes: &[String], actions: &[Configuration]) -> Self {
        Self {
            classes: classes.to_vec(),
            actions: actions.iter().map(Configuration::name).collect(),
            counts: vec![vec![0; actions.len()]; classes.len()],
        }
    }

    /// Share of class `c`'s decisions that chose action `a` (0 with no decision).
    pub fn share(&self, c: usize, a: usize) -> f64 {
        let total: u64 = self.counts[c].iter().sum();
        if total == 0 {
            0.0
        } else {
            self.counts[c][a] as f64 / total as f64
        }
    }
}

/// Runs `scenario` under `cfg` with `agent` choosing every scheduler's policy per class at
/// every window boundary (window length: `window_s` of the agent's training). Returns the
/// finished run and the shares of the actions taken.
pub fn run_agent(
    sc: Arc<Scenario>,
    cfg: SimConfig,
    agent: &mut Agent,
    window_s: f64,
    buckets: continuum_core::observe::DemandBuckets,
) -> candle_core::Result<(Simulation, ActionShares)> {
    let actions = agent.actions().to_vec();
    let mut shares = ActionShares::new(agent.classes().names(), &actions);
    let mut sim = Simulation::new(sc, cfg, actions[0].policy);
    sim.set_classes(Arc::new(agent.classes().clone()));
    sim.observe(buckets);
    let window_ms = window_s * 1000.0;
    let mut k = 0usize;
    while (k as f64) * window_ms < sim.horizon_ms() {
        for (s, per_class) in agent.decide().into_iter().enumerate() {
            for (c, a) in per_class.into_iter().enumerate() {
                sim.set_class_configuration(s, c, &actions[a]);
                shares.counts[c][a] += 1;
            }
        }
        k += 1;
        sim.run_until(k as f64 * window_ms);
        if let Some(obs) = sim.close_window() {
            agent.observe(&obs);
        }
    }
    sim.finish();
    Ok((sim, shares))
}

/// The default candidates of the oracle: the meta-policy's default action set.
pub fn default_oracle_policies() -> Vec<Configuration> {
    DqnConfig::default().configurations()
}
