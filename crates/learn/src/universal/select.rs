//! Choosing what the topology-free network falls back to, and how sure it must be to leave it:
//! every action alone (infinite margin) on the validation episodes, the best one becoming the
//! default of every bucket; then the network over that default at each candidate margin. The
//! scores pool every validation episode's queries, so a large network weighs by its traffic.

use crate::episode::EpisodeSpec;
use crate::meta::run_agent;
use anyhow::{Context, Result};
use continuum_core::metrics::Counts;
use continuum_infer::agent::{Agent, Checkpoint, CheckpointMeta, Fallback};
use continuum_sim::Scenario;
use rayon::prelude::*;
use std::path::Path;
use std::sync::Arc;

/// One validation episode: its network and its workload draw.
pub struct Episode<'a> {
    /// The network and workload.
    pub scenario: &'a Scenario,
    /// λ and seed.
    pub spec: EpisodeSpec,
}

/// A candidate: the default action of every bucket and the margin (infinite: the rule alone).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    /// Index of the default action.
    pub default: usize,
    /// Margin, pp.
    pub margin: f64,
}

/// What the selection found.
#[derive(Debug, Clone)]
pub struct Selected {
    /// The chosen candidate.
    pub chosen: Candidate,
    /// Every candidate tried with its pooled success ratio, in order.
    pub scores: Vec<(Candidate, f64)>,
    /// Queries simulated.
    pub queries: f64,
}

/// Scores every action alone, then the network over the best at each of `margins`.
pub fn select(
    meta: &CheckpointMeta,
    weights: &continuum_infer::weights::Weights,
    episodes: &[Episode],
    margins: &[f64],
) -> Result<Selected> {
    let rules: Vec<Candidate> = (0..meta.actions.len())
        .map(|a| Candidate {
            default: a,
            margin: f64::INFINITY,
        })
        .collect();
    let (mut scores, mut queries) = score(meta, weights, episodes, &rules)?;
    let best = first_best(&scores);
    let default = rules[best].default;
    let nets: Vec<Candidate> = margins
        .iter()
        .map(|&margin| Candidate { default, margin })
        .collect();
    let (net_scores, q) = score(meta, weights, episodes, &nets)?;
    queries += q;
    let mut all: Vec<Candidate> = rules;
    all.extend(nets);
    scores.extend(net_scores);
    let chosen = all[first_best(&scores)];
    Ok(Selected {
        chosen,
        scores: all.into_iter().zip(scores).collect(),
        queries,
    })
}

/// Index of the highest score (the first on ties: the rules come before the network).
fn first_best(scores: &[f64]) -> usize {
    (1..scores.len()).fold(0, |b, i| if scores[i] > scores[b] { i } else { b })
}

/// The checkpoint of `meta` and `weights` with `c`'s default and margin.
pub fn checkpoint_with(
    meta: &CheckpointMeta,
    weights: &continuum_infer::weights::Weights,
    c: Candidate,
) -> Checkpoint {
    Checkpoint {
        meta: CheckpointMeta {
            fallback: Fallback::single(vec![c.default; meta.classes.len()]),
            margin: c.margin,
            ..meta.clone()
        },
        weights: weights.clone(),
    }
}

/// The pooled success ratio of each candidate over `episodes`, and the queries simulated.
fn score(
    meta: &CheckpointMeta,
    weights: &continuum_infer::weights::Weights,
    episodes: &[Episode],
    candidates: &[Candidate],
) -> Result<(Vec<f64>, f64)> {
    let cfg = &meta.config;
    let jobs: Vec<(usize, usize)> = (0..candidates.len())
        .flat_map(|c| (0..episodes.len()).map(move |e| (c, e)))
        .collect();
    let runs: Vec<(Counts, f64)> = jobs
        .par_iter()
        .map(|&(c, e)| {
            let ck = checkpoint_with(meta, weights, candidates[c]);
            let ep = &episodes[e];
            let sc = ep.scenario;
            let names = sc.profiles.variant_names();
            let mut agent = Agent::new(
                &ck,
                Path::new("<validation>"),
                &sc.topology,
                &sc.fleet,
                &names,
            )?;
            let sim_cfg = ep.spec.sim_config(cfg);
            let run = Arc::new(ep.spec.scenario(sc));
            let (sim, _) = run_agent(run, sim_cfg, &mut agent, cfg.window_s, cfg.buckets.clone())
                .context("running a validation episode")?;
            Ok((
                sim.metrics().sum(|_, _, _| true),
                sim.stats().queries as f64,
            ))
        })
        .collect::<Result<_>>()?;
    let queries = runs.iter().map(|r| r.1).sum();
    let scores = runs
        .chunks(episodes.len().max(1))
        .map(|per| {
            let mut t = Counts::default();
            per.iter().for_each(|(c, _)| t.add(c));
            t.success_ratio()
        })
        .collect();
    Ok((scores, queries))
}
