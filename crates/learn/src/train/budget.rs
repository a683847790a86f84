//! How many episodes training can afford: the cost of an episode (its own windows plus the
//! counterfactual forks) and of the validation, in simulated queries, estimated from the
//! workload's expected load at the middle of the λ range. The estimate is deterministic, so a
//! budget gives the same episode count on every machine (wall time then scales with the
//! machine's speed; docs/performance.md figures are for a 2-core x86-64 VM).

use continuum_infer::agent::{Credit, DqnConfig};
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
        let level_margin_queries = if cfg.margin_per_level
            != continuum_infer::agent::MarginPerLevel::Off
            && !levels.is_empty()
        {
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

/// Shrinks `cfg` for a training whose episodes get `budget` simulated queries, so that its
/// validation (fallback-table search and margin choice) keeps the share of the run the config
/// gives it: at most `budget` × validation / episodes of the config's own plan. A budget at
/// least the config's own episode share changes nothing, so full trainings and their figures
/// stay as configured; where the config's validation leaves its episodes nothing (a large
/// topology), a budget of one full episode keeps it and a smaller one bounds it by `budget`. Otherwise, in order and only as far as needed: a horizon short enough for one
/// episode to fit (never below `warmup_windows + cf_horizon_windows + 3` windows), one
/// table-search seed, one validation episode, the margins reduced to their least and largest
/// and then to the least, half the load levels down to one, and last no tables at all.
/// Returns one line per change, for the user.
pub fn fit(scenario: &Scenario, cfg: &mut DqnConfig, classes: usize, budget: f64) -> Vec<String> {
    let mut changes = Vec::new();
    let plan = Budget::plan(scenario, cfg, classes);
    let share = if cfg.budget_queries > 0.0 {
        cfg.budget_queries - plan.validation_queries
    } else {
        cfg.episodes as f64 * plan.episode_queries
    };
    // Where the config's own validation leaves its episodes nothing (a large topology), it
    // keeps that validation for any budget that buys one full episode.
    let enough = if share > 0.0 {
        share
    } else {
        plan.episode_queries
    };
    if budget >= enough {
        return changes;
    }
    let limit = if share > 0.0 {
        plan.validation_queries * budget / share
    } else {
        budget
    };
    changes.extend(fit_horizon(scenario, cfg, classes, budget));
    let over = |cfg: &DqnConfig| Budget::plan(scenario, cfg, classes).validation_queries > limit;
    let steps: [&Shrink; 5] = [
        &|c| {
            (c.fallback_seeds > 1).then(|| {
                let s = format!("table-search seeds {} → 1", c.fallback_seeds);
                c.fallback_seeds = 1;
                s
            })
        },
        &|c| {
            (c.validation_episodes > 1).then(|| {
                let s = format!("validation episodes {} → 1", c.validation_episodes);
                c.validation_episodes = 1;
                s
            })
        },
        &|c| {
            (c.margins.len() > 2).then(|| {
                let (lo, hi) = least_and_largest(&c.margins);
                let s = format!("margins {:?} → [{lo}, {hi}]", c.margins);
                c.margins = vec![lo, hi];
                s
            })
        },
        &|c| {
            (c.margins.len() > 1).then(|| {
                let (lo, _) = least_and_largest(&c.margins);
                let s = format!("margins {:?} → [{lo}]", c.margins);
                c.margins = vec![lo];
                s
            })
        },
        &|c| {
            (c.fallback_levels > 1).then(|| {
                let n = c.fallback_levels / 2;
                let s = format!("load levels {} → {n}", c.fallback_levels);
                c.fallback_levels = n;
                s
            })
        },
    ];
    for step in steps {
        while over(cfg) {
            match step(cfg) {
                Some(s) => changes.push(s),
                None => break,
            }
        }
    }
    if over(cfg) && cfg.fallback_levels > 0 {
        changes.push(format!(
            "load levels {} → 0 (no fallback tables)",
            cfg.fallback_levels
        ));
        cfg.fallback_levels = 0;
    }
    changes
}

/// One way of shrinking the validation: the change it made, or `None` when it cannot shrink.
type Shrink = dyn Fn(&mut DqnConfig) -> Option<String>;

fn least_and_largest(v: &[f64]) -> (f64, f64) {
    v.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        })
}

/// Shortens `cfg`'s horizon so that one episode fits `budget` simulated queries, never below
/// `warmup_windows + cf_horizon_windows + 3` windows; the change, if any, as a line.
pub fn fit_horizon(
    scenario: &Scenario,
    cfg: &mut DqnConfig,
    classes: usize,
    budget: f64,
) -> Option<String> {
    let plan = Budget::plan(scenario, cfg, classes);
    if plan.episode_queries <= budget {
        return None;
    }
    let floor =
        cfg.window_s * (cfg.warmup_windows + cfg.cf_horizon_windows) as f64 + 3.0 * cfg.window_s;
    let h = (cfg.horizon_s * budget / plan.episode_queries)
        .max(floor)
        .min(cfg.horizon_s);
    let h = (h / cfg.window_s).floor().max(1.0) * cfg.window_s;
    (h < cfg.horizon_s).then(|| {
        let line = format!("horizon {} → {h} s", cfg.horizon_s);
        cfg.horizon_s = h;
        line
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use continuum_core::fixtures;

    fn tiny() -> Scenario {
        fixtures::scenario(
            fixtures::TOPOLOGY,
            &fixtures::workload(60.0, "periodic", 1000.0, 0.0),
        )
    }

    /// A config with something to shrink at every step: three table-search seeds, four
    /// validation episodes, four margins, four load levels, 120 s episodes (floor 35 s).
    fn roomy() -> DqnConfig {
        DqnConfig {
            fallback_seeds: 3,
            validation_episodes: 4,
            margins: vec![0.1, 0.0, 0.2, 0.05],
            fallback_levels: 4,
            horizon_s: 120.0,
            warmup_windows: 2,
            cf_horizon_windows: 2,
            episodes: 50,
            budget_queries: 0.0,
            ..DqnConfig::default()
        }
    }

    /// The step a change line reports.
    fn step(line: &str) -> &'static str {
        let steps = [
            ("horizon", "horizon"),
            ("table-search seeds", "seeds"),
            ("validation episodes", "validation"),
            ("load levels", "levels"),
        ];
        if line.starts_with("margins") {
            return if line.ends_with(", 0.2]") {
                "margins to two"
            } else {
                "margins to one"
            };
        }
        if line.contains("→ 0 (no fallback tables)") {
            return "no tables";
        }
        steps
            .iter()
            .find(|(p, _)| line.starts_with(p))
            .map_or("?", |s| s.1)
    }

    #[test]
    fn a_budget_at_least_the_configs_own_share_changes_nothing() {
        let sc = tiny();
        let plan = Budget::plan(&sc, &roomy(), 1);
        let share = roomy().episodes as f64 * plan.episode_queries;
        for budget in [share, 3.0 * share] {
            let mut cfg = roomy();
            assert!(fit(&sc, &mut cfg, 1, budget).is_empty());
            assert_eq!(cfg, roomy());
        }
        // Just below it, the validation shrinks to its share of the budget.
        let mut cfg = roomy();
        let lines = fit(&sc, &mut cfg, 1, 0.7 * share);
        assert!(!lines.is_empty());
        assert!(
            Budget::plan(&sc, &cfg, 1).validation_queries <= 0.7 * plan.validation_queries,
            "{lines:?}"
        );
    }

    #[test]
    fn a_validation_larger_than_the_budget_is_kept_for_one_full_episode() {
        // budget_queries below the config's own validation: its episodes get nothing, and
        // any budget that buys one full episode keeps the validation as it is.
        let sc = tiny();
        let base = DqnConfig {
            budget_queries: 1.0,
            ..roomy()
        };
        let plan = Budget::plan(&sc, &base, 1);
        assert!(plan.validation_queries > 1.0);
        let mut cfg = base.clone();
        assert!(fit(&sc, &mut cfg, 1, plan.episode_queries).is_empty());
        assert_eq!(cfg, base);
        // Below one episode the budget itself bounds the validation.
        let mut cfg = base.clone();
        let budget = 0.5 * plan.episode_queries;
        let lines = fit(&sc, &mut cfg, 1, budget);
        assert!(!lines.is_empty());
        let after = Budget::plan(&sc, &cfg, 1);
        assert!(
            after.validation_queries <= budget || cfg.fallback_levels == 0,
            "{lines:?}: {after:?}"
        );
    }

    #[test]
    fn every_shrink_step_is_taken_in_order_and_only_as_far_as_needed() {
        let sc = tiny();
        let plan = Budget::plan(&sc, &roomy(), 1);
        let share = roomy().episodes as f64 * plan.episode_queries;
        let order = [
            "horizon",
            "seeds",
            "validation",
            "margins to two",
            "margins to one",
            "levels",
            "no tables",
        ];
        let mut seen = Vec::new();
        let mut budget = share;
        while budget > 1.0 {
            budget *= 0.8;
            let mut cfg = roomy();
            let lines = fit(&sc, &mut cfg, 1, budget);
            let steps: Vec<&str> = lines.iter().map(|l| step(l)).collect();
            // In the documented order (a step may repeat: levels halve).
            let rank: Vec<usize> = steps
                .iter()
                .map(|s| order.iter().position(|o| o == s).expect("a known step"))
                .collect();
            assert!(rank.windows(2).all(|w| w[0] <= w[1]), "{lines:?}");
            // As far as needed: the validation fits its share, or nothing is left to shrink.
            let after = Budget::plan(&sc, &cfg, 1);
            let limit = plan.validation_queries * budget / share;
            assert!(
                after.validation_queries <= limit || cfg.fallback_levels == 0,
                "{budget}: {lines:?}"
            );
            seen.extend(steps.iter().map(|s| s.to_string()));
        }
        for s in order {
            assert!(
                seen.iter().any(|x| x == s),
                "step `{s}` never taken: {seen:?}"
            );
        }
    }

    #[test]
    fn the_horizon_shrinks_to_fit_one_episode_but_not_below_its_floor() {
        let sc = tiny();
        let cfg = roomy();
        let plan = Budget::plan(&sc, &cfg, 1);
        let mut c = cfg.clone();
        assert_eq!(fit_horizon(&sc, &mut c, 1, plan.episode_queries), None);
        let mut c = cfg.clone();
        let line = fit_horizon(&sc, &mut c, 1, plan.episode_queries / 2.0).expect("a change");
        // Scaled with the budget, in whole windows: 120 s × 1/2.
        assert_eq!(line, "horizon 120 → 60 s");
        assert_eq!(c.horizon_s, 60.0);
        let floor = c.window_s * (c.warmup_windows + c.cf_horizon_windows + 3) as f64;
        let mut c = cfg.clone();
        fit_horizon(&sc, &mut c, 1, 1.0);
        assert_eq!(c.horizon_s, floor);
    }
}
