//! How many episodes training can afford: the cost of an episode (its own windows plus the
//! counterfactual forks) and of the validation, in simulated queries, estimated from the
//! workload's expected load at the middle of the λ range. The estimate is deterministic, so a
//! budget gives the same episode count on every machine (wall time then scales with the
//! machine's speed; docs/performance.md figures are for a 2-core x86-64 VM).

use crate::agent::{Credit, DqnConfig};
use continuum_sim::Scenario;

/// What a training run will simulate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// Episodes to train.
    pub episodes: usize,
    /// Simulated queries of one window of the whole topology (at the middle of the λ range).
    pub window_queries: f64,
    /// Estimated simulated queries of one training episode, forks included.
    pub episode_queries: f64,
    /// Estimated simulated queries of the validation.
    pub validation_queries: f64,
}

impl Budget {
    /// The plan for `cfg` on `scenario` with `classes` stream classes.
    pub fn plan(scenario: &Scenario, cfg: &DqnConfig, classes: usize) -> Self {
        let [lo, hi] = cfg.lambda_range;
        let schedulers = scenario.topology.schedulers.len() as f64;
        let window_queries =
            scenario.workload.expected_qps((lo + hi) / 2.0) * schedulers * cfg.window_s;
        let windows = (cfg.horizon_s / cfg.window_s).floor();
        let actions = cfg.actions.len() as f64;
        let forks = match cfg.credit {
            Credit::Counterfactual => {
                let labelled =
                    (windows - cfg.warmup_windows as f64 - cfg.cf_horizon_windows as f64 + 1.0)
                        .max(0.0);
                let fork_windows =
                    cfg.cf_horizon_windows as f64 + super::CF_SETTLE_MS / (cfg.window_s * 1000.0);
                labelled * actions * fork_windows
            }
            Credit::Td => 0.0,
        };
        let episode_queries = window_queries * (windows + forks);
        // Selection: at each load level, every single policy, the per-class best and about two
        // sweeps of coordinate ascent on each of its episodes; then the fallback and each margin
        // on each dynamic validation episode.
        let c = classes as f64;
        let search_runs = actions + 1.0 + 2.0 * c * (actions - 1.0);
        let levels = match cfg.fallback_levels {
            0 => Vec::new(),
            n => super::level_lambdas(lo, hi, n),
        };
        let level_queries: f64 = levels
            .iter()
            .map(|l| scenario.workload.expected_qps(*l) * schedulers * cfg.horizon_s)
            .sum::<f64>()
            * search_runs
            * cfg.fallback_seeds as f64;
        let margin_runs = if cfg.fallback_levels == 0 {
            0.0
        } else {
            (cfg.margins.len() + 1) as f64 * cfg.validation_episodes as f64
        };
        // Per-level margins: the table alone and each margin on each level's episodes, then the
        // margins found on the dynamic validation episodes.
        let level_margin_queries =
            if cfg.margin_per_level != crate::agent::MarginPerLevel::Off && !levels.is_empty() {
                level_queries / search_runs * (cfg.margins.len() + 1) as f64
                    + window_queries * windows * cfg.validation_episodes as f64
            } else {
                0.0
            };
        let validation_queries =
            level_queries + window_queries * windows * margin_runs + level_margin_queries;
        let episodes = if cfg.budget_queries > 0.0 {
            let left = (cfg.budget_queries - validation_queries).max(0.0);
            ((left / episode_queries.max(1.0)).floor() as usize).clamp(1, cfg.episodes.max(1))
        } else {
            cfg.episodes.max(1)
        };
        Self {
            episodes,
            window_queries,
            episode_queries,
            validation_queries,
        }
    }
}
