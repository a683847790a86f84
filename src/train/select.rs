//! Choosing, after training, what the checkpoint does when the network is not confident: the
//! fallback table (the best static per-class table on validation episodes, never below the best
//! single policy there) and the margin by which a class's greedy action must beat its fallback
//! action to be taken. Each candidate margin runs the agent on the same validation episodes;
//! the best one is kept only if it scores above the fallback table alone, otherwise the margin
//! is infinite and the agent is its fallback. Validation episodes come from the training
//! distribution with their own seeds, never an evaluation seed.

use super::EpisodeSpec;
use crate::agent::{Agent, Checkpoint, CheckpointMeta};
use crate::meta::run_agent;
use crate::meta::table_search::TableSearch;
use crate::policy::{self, Policy};
use crate::sim::{Scenario, SimConfig};
use anyhow::{Context, Result};
use candle_nn::VarMap;
use rayon::prelude::*;
use std::path::Path;
use std::sync::Arc;

/// What validation found.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    /// The fallback action of each class.
    pub fallback: Vec<usize>,
    /// Success ratio of the fallback table on the validation episodes.
    pub fallback_ratio: f64,
    /// The best single policy (action index) and its success ratio.
    pub best_single: (usize, f64),
    /// Each candidate margin and the agent's success ratio with it.
    pub margins: Vec<(f64, f64)>,
    /// The margin kept (infinite: the agent is its fallback).
    pub margin: f64,
    /// Simulation runs spent.
    pub runs: usize,
}

/// Runs the validation for a network (`vars`) described by `meta` (its fallback and margin
/// are ignored) on `episodes`.
pub fn select(
    scenario: &Scenario,
    meta: &CheckpointMeta,
    vars: &VarMap,
    episodes: &[EpisodeSpec],
) -> Result<Selection> {
    let cfg = &meta.config;
    let actions: Vec<&'static dyn Policy> = meta
        .actions
        .iter()
        .map(|a| policy::by_name(a).expect("validated action"))
        .collect();
    let search = TableSearch {
        scenario,
        episodes,
        duration_s: cfg.horizon_s,
        actions: &actions,
        classes: &meta.classes,
    };
    let found = search.search();
    let (fallback, fallback_ratio) = found.table.clone();
    let tensors = vars
        .data()
        .lock()
        .expect("var map lock")
        .iter()
        .map(|(k, v)| (k.clone(), v.as_tensor().clone()))
        .collect();
    let ck = Checkpoint {
        meta: CheckpointMeta {
            fallback: fallback.clone(),
            ..meta.clone()
        },
        tensors,
    };
    let jobs: Vec<(usize, usize)> = (0..cfg.margins.len())
        .flat_map(|m| (0..episodes.len()).map(move |e| (m, e)))
        .collect();
    let names = scenario.profiles.variant_names();
    let runs: Vec<crate::metrics::Counts> = jobs
        .par_iter()
        .map(|&(m, e)| {
            let mut agent = Agent::new(
                &ck,
                Path::new("<training>"),
                &scenario.topology,
                &scenario.fleet,
                &names,
            )?;
            agent.set_margin(cfg.margins[m]);
            let sc = Arc::new(
                scenario
                    .clone()
                    .with_lambda_profile(episodes[e].lambda.clone()),
            );
            let sim_cfg = SimConfig {
                duration_s: cfg.horizon_s,
                window_s: cfg.window_s,
                seed: episodes[e].seed,
                ..SimConfig::default()
            };
            let (sim, _) = run_agent(sc, sim_cfg, &mut agent, cfg.window_s, cfg.buckets.clone())
                .context("running the agent on a validation episode")?;
            Ok(sim.metrics().sum(|_, _, _| true))
        })
        .collect::<Result<_>>()?;
    let margins: Vec<(f64, f64)> = runs
        .chunks(episodes.len().max(1))
        .zip(&cfg.margins)
        .map(|(per_episode, &m)| {
            let mut t = crate::metrics::Counts::default();
            per_episode.iter().for_each(|c| t.add(c));
            (m, t.success_ratio())
        })
        .collect();
    let best = margins
        .iter()
        .copied()
        .fold(None, |b: Option<(f64, f64)>, x| match b {
            Some(b) if b.1 >= x.1 => Some(b),
            _ => Some(x),
        });
    let margin = match best {
        Some((m, r)) if r > fallback_ratio => m,
        _ => f64::INFINITY,
    };
    Ok(Selection {
        fallback,
        fallback_ratio,
        best_single: found.best_single,
        margins,
        margin,
        runs: found.runs + jobs.len(),
    })
}
