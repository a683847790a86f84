//! An Ape-X actor: one whole episode with a fixed ε and a copy of the learner's weights, its
//! transitions and their initial priorities (the actor's own |TD error|, as Ape-X's actors
//! compute them). The same function runs on a thread of the training process and in a separate
//! `continuum train --apex-actor` process (a Ray task).

use super::super::env::{EpisodeEnd, MetaEnv};
use crate::agent::{QNet, Transition, fill_vars};
use crate::episode::EpisodeSpec;
use anyhow::{Context, Result};
use candle_core::{Device, Tensor};
use continuum_core::policy::StreamClasses;
use continuum_core::rng::{Purpose, stream_rng};
use continuum_infer::agent::{DqnConfig, NetShape, argmax};
use continuum_infer::weights::Weights;
use continuum_sim::Scenario;
use rand::Rng;
use std::sync::Arc;
use std::time::Instant;

/// Stream tag of the actors' episode draws (`apex`).
const APEX_TAG: u64 = 0x6170_6578;

/// One episode for one actor: its number in the run and the actor (of the round) that runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActorJob {
    /// Episode number, from 0: which workload it draws.
    pub episode: usize,
    /// Actor index within the round: which ε it explores with.
    pub actor: usize,
}

/// What an actor sends the learner.
#[derive(Debug, Clone, PartialEq)]
pub struct ActorOutput {
    /// The job it ran.
    pub job: ActorJob,
    /// Its transitions, in the order the episode made them.
    pub transitions: Vec<Transition>,
    /// Initial priority of each transition.
    pub priorities: Vec<f32>,
    /// Time-average λ of the episode.
    pub lambda: f64,
    /// The episode's seed.
    pub seed: u64,
    /// Windows run.
    pub windows: usize,
    /// How it ended (`horizon` or `theta`).
    pub end: String,
    /// Success ratio of all its queries.
    pub success_ratio: f64,
    /// Mean value of the actions taken.
    pub mean_reward: f64,
    /// The actor's ε.
    pub epsilon: f64,
    /// Wall-clock seconds the episode took (a measurement, not part of the result).
    pub sample_s: f64,
}

/// The network an actor acts with.
pub(crate) struct ActorNet {
    net: QNet,
    _vars: candle_nn::VarMap,
}

impl ActorNet {
    /// A network of `shape` (with `quantiles` cosines if an implicit quantile network) holding
    /// `weights`.
    pub(crate) fn new(shape: NetShape, quantiles: usize, weights: &Weights) -> Result<Self> {
        let (vars, net) = crate::agent::build_with(shape, quantiles, 0)?;
        fill_vars(&vars, weights).map_err(|m| anyhow::anyhow!("actor weights: {m}"))?;
        Ok(Self { net, _vars: vars })
    }

    /// Q-values of `states` (rows of the network's state length): per row, per class, per
    /// action.
    pub(crate) fn values(&self, states: &[f32]) -> Result<Vec<Vec<Vec<f32>>>> {
        let s = self.net.shape();
        let rows = states.len() / (s.features * s.history);
        Tensor::from_slice(states, (rows, s.features, s.history), &Device::Cpu)
            .and_then(|x| self.net.forward(&x))
            .and_then(|q| q.to_vec3::<f32>())
            .context("actor forward pass")
    }
}

/// Runs `job` on `scenario` with `net`, exploring with `epsilon`, from the run's `seed`; `gamma`
/// is the learner's discount (for the initial priorities).
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_actor(
    scenario: &Scenario,
    cfg: &Arc<DqnConfig>,
    classes: &StreamClasses,
    net: &ActorNet,
    seed: u64,
    job: ActorJob,
    epsilon: f64,
    gamma: f64,
) -> Result<ActorOutput> {
    let start = Instant::now();
    let mut draw = stream_rng(seed, Purpose::Other, APEX_TAG, job.episode as u64);
    let spec = EpisodeSpec::draw(cfg, cfg.horizon_s, &mut draw);
    let mut env = MetaEnv::new(scenario, cfg.clone(), classes, spec);
    let actions = net.net.shape().actions;
    let mut transitions = Vec::new();
    let mut states = Vec::new();
    while env.end() == EpisodeEnd::Running {
        states.clear();
        for s in env.states() {
            states.extend_from_slice(s);
        }
        let q = net.values(&states)?;
        let rng = env.rng();
        let chosen: Vec<Vec<u32>> = q
            .iter()
            .map(|per_class| {
                per_class
                    .iter()
                    .map(|qc| {
                        if rng.random::<f64>() < epsilon {
                            rng.random_range(0..actions) as u32
                        } else {
                            argmax(qc) as u32
                        }
                    })
                    .collect()
            })
            .collect();
        transitions.extend(env.step(&chosen));
    }
    let priorities = initial_priorities(net, &transitions, gamma)?;
    let (sum, k) = transitions
        .iter()
        .filter_map(Transition::taken_value)
        .fold((0.0, 0usize), |(s, k), v| (s + f64::from(v), k + 1));
    Ok(ActorOutput {
        job,
        lambda: env.spec.mean_lambda(cfg.horizon_s),
        seed: env.spec.seed,
        windows: env.sim().now_ms().div_euclid(cfg.window_s * 1000.0) as usize,
        end: format!("{:?}", env.end()).to_lowercase(),
        success_ratio: env.sim().metrics().sum(|_, _, _| true).success_ratio(),
        mean_reward: if k == 0 { 0.0 } else { sum / k as f64 },
        epsilon,
        transitions,
        priorities,
        sample_s: start.elapsed().as_secs_f64(),
    })
}

/// Each transition's |TD error| under `net` alone (Ape-X's actors hold no target network): per
/// weighted (class, action) cell |v + γ(1 − done)·Q(s′, argmax Q(s′)) − Q(s, a)|, averaged
/// with the cells' weights.
pub(crate) fn initial_priorities(
    net: &ActorNet,
    ts: &[Transition],
    gamma: f64,
) -> Result<Vec<f32>> {
    if ts.is_empty() {
        return Ok(Vec::new());
    }
    let flat = |f: fn(&Transition) -> &Vec<f32>| -> Vec<f32> {
        ts.iter().flat_map(|t| f(t).iter().copied()).collect()
    };
    let q = net.values(&flat(|t| &t.state))?;
    let q2 = if gamma > 0.0 {
        Some(net.values(&flat(|t| &t.next_state))?)
    } else {
        None
    };
    Ok(ts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let a = q[i][0].len();
            let (mut err, mut mass) = (0.0f64, 0.0f64);
            for (c, qc) in q[i].iter().enumerate() {
                let boot = match &q2 {
                    Some(q2) if !t.done => gamma * f64::from(q2[i][c][argmax(&q2[i][c])]),
                    _ => 0.0,
                };
                for (k, &qa) in qc.iter().enumerate() {
                    let w = f64::from(t.weights[c * a + k]);
                    if w > 0.0 {
                        let target = f64::from(t.values[c * a + k]) + boot;
                        err += w * (target - f64::from(qa)).abs();
                        mass += w;
                    }
                }
            }
            (err / mass.max(1e-6)) as f32
        })
        .collect())
}
