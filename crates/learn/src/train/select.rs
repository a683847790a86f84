//! Choosing, after training, what the checkpoint does when the network is not confident, on
//! episodes never used in training and never an evaluation seed:
//!
//! 1. **Fallback tables by load level.** The λ range is cut into `fallback_levels` equal parts;
//!    at the middle λ of each, the best static per-class table is searched on
//!    `fallback_seeds` episodes ([`TableSearch`]: never below the best single policy there).
//!    A scheduler uses the table of the level its observed incoming rate falls in; the level
//!    edges are the expected per-scheduler rates halfway between two middles.
//!    With `fallback_levels: 0` there is neither table nor margin: the network decides alone.
//! 2. **Margin.** Each candidate margin runs the agent on `validation_episodes` dynamic
//!    episodes (λ moving as in training), and so does the fallback alone; the best is kept,
//!    the fallback alone on ties — the network must earn its deviations.
//! 3. **Margins per level** (`margin_per_level`). Each level also chooses among the same
//!    candidates on the episodes that chose its table (a margin that helps at high load may
//!    cost at low load); with `validated` the set is kept only if it beats step 2's margin on
//!    the dynamic validation episodes, with `always` it is kept.

use super::EpisodeSpec;
use crate::meta::run_agent;
use crate::meta::table_search::TableSearch;
use anyhow::{Context, Result};
use candle_nn::VarMap;
use continuum_core::metrics::{Counts, LogHistogram};
use continuum_core::rng::{Purpose, SimRng, stream_rng};
use continuum_core::workload::Lambda;
use continuum_infer::agent::{
    Agent, Checkpoint, CheckpointMeta, DqnConfig, Fallback, MarginPerLevel,
};
use continuum_sim::Scenario;
use rand::Rng;
use rayon::prelude::*;
use std::path::Path;
use std::sync::Arc;

/// One load level's search.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelChoice {
    /// The level's λ, clients/min/antenna.
    pub lambda: f64,
    /// The best single policy (action index) there and its success ratio.
    pub best_single: (usize, f64),
    /// The table kept and its success ratio.
    pub table: (Vec<usize>, f64),
    /// With `margin_per_level`, the level's margin and the agent's score with it on the
    /// level's episodes (infinite: the table alone).
    pub margin: (f64, f64),
}

/// What validation found.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    /// The fallback tables.
    pub fallback: Fallback,
    /// Each level's search.
    pub levels: Vec<LevelChoice>,
    /// Score (the objective's; the success ratio by default) of the fallback alone on the
    /// dynamic validation episodes.
    pub fallback_ratio: f64,
    /// Each candidate margin and the agent's score with it.
    pub margins: Vec<(f64, f64)>,
    /// The margin kept (infinite: the agent is its fallback).
    pub margin: f64,
    /// With `margin_per_level`, the margins per level (`None`: infinite) and the agent's score
    /// with them on the dynamic validation episodes; the fallback carries them only if that
    /// beat the one margin's.
    pub level_margins: Option<(Vec<Option<f64>>, f64)>,
    /// Simulation runs spent.
    pub runs: usize,
}

/// The λ at the middle of each of `levels` equal parts of `[lo, hi]`.
pub fn level_lambdas(lo: f64, hi: f64, levels: usize) -> Vec<f64> {
    if hi <= lo {
        return vec![lo];
    }
    (0..levels)
        .map(|i| lo + (i as f64 + 0.5) * (hi - lo) / levels as f64)
        .collect()
}

/// Runs the selection for a network (`vars`) described by `meta` (its fallback and margin are
/// ignored); `seed` draws the held-out episodes.
pub fn select(
    scenario: &Scenario,
    meta: &CheckpointMeta,
    vars: &VarMap,
    seed: u64,
    progress: super::Progress,
) -> Result<Selection> {
    let cfg = &meta.config;
    if cfg.fallback_levels == 0 {
        return Ok(Selection::network_alone(meta.classes.len()));
    }
    let mut rng = stream_rng(seed, Purpose::Other, 0x7661_6c69, 0);
    // 1. A table per load level.
    let [lo, hi] = cfg.lambda_range;
    let lambdas = level_lambdas(lo, hi, cfg.fallback_levels);
    let tables = LevelTables::search(scenario, meta, &lambdas, &mut rng, progress);
    // 2. The margin, on dynamic episodes.
    let validation: Vec<EpisodeSpec> = (0..cfg.validation_episodes)
        .map(|_| EpisodeSpec::draw(cfg, cfg.horizon_s, &mut rng))
        .collect();
    let ck = Checkpoint {
        meta: CheckpointMeta {
            fallback: tables.fallback(scenario, &lambdas),
            ..meta.clone()
        },
        weights: crate::agent::weights_of(vars)?,
    };
    let LevelTables {
        levels,
        episodes: level_episodes,
        runs,
    } = tables;
    let (mut selection, kept) = choose_margin(scenario, &ck, levels, runs, &validation, progress)?;
    // 3. Optionally a margin per level, on the episodes that chose the level's table; kept only
    //    if it also beats the one margin on the dynamic episodes.
    if cfg.margin_per_level != MarginPerLevel::Off && selection.levels.len() > 1 {
        choose_level_margins(
            scenario,
            &ck,
            &level_episodes,
            &validation,
            kept,
            &mut selection,
        )?;
    }
    Ok(selection)
}

impl Selection {
    /// No fallback: the network alone decides (margin 0 against any table is its argmax), for
    /// `classes` classes.
    fn network_alone(classes: usize) -> Self {
        Selection {
            fallback: Fallback::single(vec![0; classes]),
            levels: Vec::new(),
            fallback_ratio: f64::NAN,
            margins: Vec::new(),
            margin: 0.0,
            level_margins: None,
            runs: 0,
        }
    }
}

/// Step 1's result: each load level's search and the episodes it searched on.
struct LevelTables {
    /// Each level's search (its margin not chosen yet).
    levels: Vec<LevelChoice>,
    /// Each level's episodes.
    episodes: Vec<Vec<EpisodeSpec>>,
    /// Simulation runs spent.
    runs: usize,
}

impl LevelTables {
    /// The best static table at each of `lambdas`, on `fallback_seeds` episodes each drawn from
    /// `rng`; a progress step per level (of the levels and the margins after them).
    fn search(
        scenario: &Scenario,
        meta: &CheckpointMeta,
        lambdas: &[f64],
        rng: &mut SimRng,
        progress: super::Progress,
    ) -> Self {
        let cfg = &meta.config;
        let actions = cfg.configurations();
        let mut tables = LevelTables {
            levels: Vec::new(),
            episodes: Vec::new(),
            runs: 0,
        };
        for (k, &lambda) in lambdas.iter().enumerate() {
            progress(super::TrainEvent::Step {
                phase: "fallback tables",
                what: format!("λ {lambda:.0}"),
                done: k,
                total: lambdas.len() + 1,
            });
            let episodes = level_episodes(cfg, lambda, rng);
            let search = TableSearch {
                scenario,
                episodes: &episodes,
                duration_s: cfg.horizon_s,
                queue_bound: cfg.queue_bound,
                load_view: cfg.load_view,
                actions: &actions,
                classes: &meta.classes,
                objective: cfg.objective,
                every_episode: cfg.fallback_every_episode,
            };
            let found = search.search();
            tables.runs += found.runs;
            tables.levels.push(LevelChoice {
                lambda,
                best_single: found.best_single,
                table: found.table,
                margin: (f64::INFINITY, f64::NAN),
            });
            tables.episodes.push(episodes);
        }
        tables
    }

    /// The fallback of these tables at `lambdas`: a level's edges are the expected rates
    /// halfway between two middles; no margins per level yet.
    fn fallback(&self, scenario: &Scenario, lambdas: &[f64]) -> Fallback {
        Fallback {
            edges_qps: lambdas
                .windows(2)
                .map(|w| scenario.workload.expected_qps((w[0] + w[1]) / 2.0))
                .collect(),
            tables: self.levels.iter().map(|l| l.table.0.clone()).collect(),
            margins: Vec::new(),
        }
    }
}

/// `fallback_seeds` episodes at constant `lambda`, each with its seed and capacity from `rng`.
fn level_episodes(cfg: &DqnConfig, lambda: f64, rng: &mut SimRng) -> Vec<EpisodeSpec> {
    (0..cfg.fallback_seeds)
        .map(|_| {
            let seed = rng.random();
            EpisodeSpec {
                capacity: crate::episode::draw_capacity(cfg, rng),
                ..EpisodeSpec::new(Lambda::Constant(lambda), seed)
            }
        })
        .collect()
}

/// The candidate margins: the fallback alone (infinite margin) first, then `cfg`'s.
fn candidates(cfg: &DqnConfig) -> Vec<f64> {
    std::iter::once(f64::INFINITY)
        .chain(cfg.margins.iter().copied())
        .collect()
}

/// Step 2: each candidate margin's score with `ck` (the network over step 1's fallback) on the
/// dynamic `validation` episodes, the best kept (the fallback alone on ties). Returns the
/// selection so far (with step 1's `levels` and `runs`) and the kept margin's score.
fn choose_margin(
    scenario: &Scenario,
    ck: &Checkpoint,
    levels: Vec<LevelChoice>,
    runs: usize,
    validation: &[EpisodeSpec],
    progress: super::Progress,
) -> Result<(Selection, f64)> {
    let cfg = &ck.meta.config;
    let candidates = candidates(cfg);
    let settings: Vec<Margins> = candidates.iter().map(|m| Margins::One(*m)).collect();
    progress(super::TrainEvent::Step {
        phase: "fallback tables",
        what: format!(
            "margin: {} settings × {} episodes",
            settings.len(),
            validation.len()
        ),
        done: levels.len(),
        total: levels.len() + 1,
    });
    let scores = score(scenario, ck, &settings, validation)?;
    let best = first_best(&scores);
    let selection = Selection {
        fallback: ck.meta.fallback.clone(),
        levels,
        fallback_ratio: scores[0],
        margins: cfg
            .margins
            .iter()
            .copied()
            .zip(scores[1..].iter().copied())
            .collect(),
        margin: candidates[best],
        level_margins: None,
        runs: runs + settings.len() * validation.len(),
    };
    Ok((selection, scores[best]))
}

/// Step 3: each level's best candidate margin on `level_episodes`, the episodes that chose its
/// table (recorded in `selection.levels`); the set is scored with `ck` on the `validation`
/// episodes and carried by the fallback with `always`, or when it beats `kept`, the one
/// margin's score.
fn choose_level_margins(
    scenario: &Scenario,
    ck: &Checkpoint,
    level_episodes: &[Vec<EpisodeSpec>],
    validation: &[EpisodeSpec],
    kept: f64,
    selection: &mut Selection,
) -> Result<()> {
    let cfg = &ck.meta.config;
    let candidates = candidates(cfg);
    let settings: Vec<Margins> = candidates.iter().map(|m| Margins::One(*m)).collect();
    let mut per_level = Vec::new();
    for (level, episodes) in level_episodes.iter().enumerate() {
        let at_level = score(scenario, ck, &settings, episodes)?;
        selection.runs += settings.len() * episodes.len();
        let b = first_best(&at_level);
        selection.levels[level].margin = (candidates[b], at_level[b]);
        per_level.push(candidates[b].is_finite().then_some(candidates[b]));
    }
    let s = score(
        scenario,
        ck,
        &[Margins::PerLevel(per_level.clone())],
        validation,
    )?[0];
    selection.runs += validation.len();
    selection.level_margins = Some((per_level.clone(), s));
    if cfg.margin_per_level == MarginPerLevel::Always || s > kept {
        selection.fallback.margins = per_level;
    }
    Ok(())
}

/// The index of the highest score, the earliest on ties (index 0, the fallback alone, keeps
/// its place unless a margin beats it strictly: the network must earn its deviations); a NaN
/// never wins.
fn first_best(scores: &[f64]) -> usize {
    (1..scores.len()).fold(0, |b, i| if scores[i] > scores[b] { i } else { b })
}

/// How a run sets the agent's margins.
#[derive(Debug, Clone)]
enum Margins {
    /// One margin at every level.
    One(f64),
    /// A margin per level (`None`: infinite).
    PerLevel(Vec<Option<f64>>),
}

/// The objective's score of the agent of `ck` under each setting, over `episodes` (counts and
/// latencies pooled over the episodes).
fn score(
    scenario: &Scenario,
    ck: &Checkpoint,
    settings: &[Margins],
    episodes: &[EpisodeSpec],
) -> Result<Vec<f64>> {
    let cfg = &ck.meta.config;
    let names = scenario.profiles.variant_names();
    let jobs: Vec<(usize, usize)> = (0..settings.len())
        .flat_map(|m| (0..episodes.len()).map(move |e| (m, e)))
        .collect();
    let counts: Vec<(Counts, LogHistogram)> = jobs
        .par_iter()
        .map(|&(m, e)| {
            let mut agent = Agent::new(
                ck,
                Path::new("<training>"),
                &scenario.topology,
                &scenario.fleet,
                &names,
            )?;
            match &settings[m] {
                Margins::One(x) => agent.set_margin(*x),
                Margins::PerLevel(v) => agent.set_level_margins(v.clone()),
            }
            let sc = Arc::new(episodes[e].scenario(scenario));
            let sim_cfg = episodes[e].sim_config(cfg);
            let (sim, _) = run_agent(sc, sim_cfg, &mut agent, cfg.window_s, cfg.buckets.clone())
                .context("running the agent on a validation episode")?;
            let m = sim.metrics();
            let mut latency = LogHistogram::default();
            (0..m.windows()).for_each(|w| latency.add(m.window_latency(w)));
            Ok((m.sum(|_, _, _| true), latency))
        })
        .collect::<Result<_>>()?;
    Ok(counts
        .chunks(episodes.len().max(1))
        .map(|per_episode| {
            let mut t = Counts::default();
            let mut latency = LogHistogram::default();
            for (c, l) in per_episode {
                t.add(c);
                latency.add(l);
            }
            cfg.objective.score(&t, &latency)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use continuum_core::fixtures;
    use continuum_infer::agent::DqnConfig;

    #[test]
    fn the_best_score_wins_and_ties_keep_the_earliest() {
        assert_eq!(first_best(&[0.5, 0.7, 0.6]), 1);
        assert_eq!(first_best(&[0.5, 0.6, 0.7]), 2);
        assert_eq!(first_best(&[0.7, 0.7, 0.6]), 0, "a tie keeps the fallback");
        assert_eq!(
            first_best(&[0.5, 0.7, 0.7]),
            1,
            "the earliest of tied margins"
        );
        assert_eq!(first_best(&[0.5, f64::NAN, 0.6]), 2);
        assert_eq!(first_best(&[0.9]), 0);
    }

    /// A network whose Q-values are its output biases whatever the state: every weight 0, the
    /// bias of action `a` of every class `q[a]`.
    fn constant_network(meta: &CheckpointMeta, q: &[f32]) -> VarMap {
        let (vars, _) = crate::agent::build(meta.shape, 0).unwrap();
        let data = vars.data().lock().unwrap();
        for (name, var) in data.iter() {
            let t = if name == "out.bias" {
                let per_class: Vec<f32> =
                    (0..meta.shape.classes).flat_map(|_| q.to_vec()).collect();
                candle_core::Tensor::from_slice(&per_class, per_class.len(), var.device()).unwrap()
            } else {
                var.zeros_like().unwrap()
            };
            var.set(&t).unwrap();
        }
        drop(data);
        vars
    }

    /// The tiny topology where action 0 (`closest+discard@0.01`: every query dropped on
    /// arrival, its admission limit 1 % of a 1 s deadline) serves nothing and action 1
    /// (`closest`) serves almost everything, with margins 0.5 and 2: the right table is action 1
    /// for every class at every level, by construction.
    fn setting() -> (Scenario, CheckpointMeta) {
        let sc = fixtures::scenario(
            fixtures::TOPOLOGY,
            &fixtures::workload(20.0, "periodic", 1000.0, 0.0),
        );
        let cfg = DqnConfig {
            actions: vec!["closest+discard@0.01".into(), "closest".into()],
            history: 2,
            conv_kernel: 2,
            conv_channels: 2,
            hidden: 4,
            horizon_s: 40.0,
            window_s: 5.0,
            lambda_range: [10.0, 30.0],
            fallback_levels: 2,
            fallback_seeds: 1,
            validation_episodes: 1,
            margins: vec![0.5, 2.0],
            ..DqnConfig::default()
        };
        let classes = super::super::classes_for(&sc, &cfg);
        let enc = continuum_infer::agent::StateEncoder::new(&sc.topology, &sc.fleet, &cfg);
        let shape = continuum_infer::agent::NetShape {
            features: enc.features(),
            history: 2,
            conv_channels: 2,
            conv_kernel: 2,
            hidden: 4,
            actions: 2,
            classes: classes.len(),
        };
        let meta = super::super::network_meta(&sc, &cfg, shape, &classes);
        (sc, meta)
    }

    #[test]
    fn select_keeps_the_table_that_serves_and_a_margin_only_when_it_earns_it() {
        let (sc, meta) = setting();
        let quiet = |_: super::super::TrainEvent| {};
        // The network prefers the dropping action by 1: margin 0.5 follows it and loses
        // everything the table serves, margin 2 never deviates (a tie with the table alone),
        // so the table alone is kept.
        let wrong = constant_network(&meta, &[1.0, 0.0]);
        let sel = select(&sc, &meta, &wrong, 5, &quiet).unwrap();
        assert_eq!(sel.levels.len(), 2);
        for l in &sel.levels {
            assert_eq!(l.best_single.0, 1, "{l:?}");
            assert!(l.table.0.iter().all(|&a| a == 1), "{l:?}");
            assert!(l.table.1 > 0.9, "{l:?}");
        }
        assert_eq!(sel.fallback.tables, vec![vec![1; meta.classes.len()]; 2]);
        assert!(sel.fallback_ratio > 0.9, "{sel:?}");
        assert_eq!(sel.margins.len(), 2);
        assert!(
            sel.margins[0].1 < sel.fallback_ratio - 0.5,
            "margin 0.5 follows the network: {sel:?}"
        );
        assert_eq!(
            sel.margins[1].1, sel.fallback_ratio,
            "margin 2 never deviates"
        );
        assert_eq!(sel.margin, f64::INFINITY, "{sel:?}");
        // A network that agrees with the table changes nothing: every setting ties, and the
        // table alone is still kept.
        let right = constant_network(&meta, &[0.0, 1.0]);
        let sel = select(&sc, &meta, &right, 5, &quiet).unwrap();
        assert!(
            sel.margins.iter().all(|m| m.1 == sel.fallback_ratio),
            "{sel:?}"
        );
        assert_eq!(sel.margin, f64::INFINITY);
    }

    #[test]
    fn levels_split_the_range_evenly() {
        assert_eq!(level_lambdas(20.0, 100.0, 4), vec![30.0, 50.0, 70.0, 90.0]);
        assert_eq!(level_lambdas(60.0, 60.0, 4), vec![60.0]);
        assert_eq!(level_lambdas(0.0, 10.0, 1), vec![5.0]);
    }
}
