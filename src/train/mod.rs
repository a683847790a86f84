//! Training the DQN meta-policy (SPEC §9): episodes of the simulation, collected in parallel,
//! teach one network shared by every scheduler. Reproducible for a given seed and thread count:
//! environments step in parallel but their transitions are merged in a fixed order, and every
//! random draw comes from a seeded stream.

mod curve;
mod env;

pub use curve::{plot_training_curve, training_csv};
pub use env::{EpisodeEnd, MetaEnv, Transition};

use crate::agent::{
    Batch, Checkpoint, DqnConfig, EpsilonSchedule, LearnSettings, Learner, NetShape, ReplayBuffer,
    StateEncoder, argmax, topology_fingerprint,
};
use crate::rng::{Purpose, SimRng, stream_rng};
use crate::sim::Scenario;
use anyhow::{Context, Result};
use candle_core::{Device, Tensor};
use rand::Rng;
use rayon::prelude::*;
use serde::Serialize;
use std::path::Path;
use std::time::Instant;

/// What one finished episode did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EpisodeLog {
    /// Episode number, from 0, in order of completion.
    pub episode: usize,
    /// Client rate, clients/min/antenna.
    pub lambda: f64,
    /// Seed.
    pub seed: u64,
    /// Windows run.
    pub windows: usize,
    /// Why it ended.
    pub end: String,
    /// Mean reward of its transitions.
    pub mean_reward: f64,
    /// Success ratio of all its queries.
    pub success_ratio: f64,
    /// ε when it ended.
    pub epsilon: f64,
    /// Mean loss of the gradient steps taken while it ran (0 before learning starts).
    pub mean_loss: f64,
    /// Wall-clock seconds since training started.
    pub wall_s: f64,
}

/// Progress reported after each episode.
pub type Progress<'a> = &'a (dyn Fn(&EpisodeLog, usize) + Sync);

struct Slot {
    env: MetaEnv,
    rewards: f64,
    transitions: usize,
    losses: f64,
    loss_steps: usize,
}

/// Trains on `scenario` with `cfg` from `seed`, writes the checkpoint to `out`, and returns the
/// episode log.
pub fn train(
    scenario: &Scenario,
    cfg: &DqnConfig,
    seed: u64,
    out: &Path,
    progress: Progress,
) -> Result<Vec<EpisodeLog>> {
    cfg.validate()
        .map_err(|(f, m)| anyhow::anyhow!("{f}: {m}"))?;
    let start = Instant::now();
    let encoder = StateEncoder::new(&scenario.topology, &scenario.fleet, cfg);
    let shape = NetShape {
        features: encoder.features(),
        history: encoder.history(),
        conv_channels: cfg.conv_channels,
        conv_kernel: cfg.conv_kernel,
        hidden: cfg.hidden,
        actions: cfg.actions.len(),
    };
    let settings = LearnSettings {
        gamma: cfg.gamma,
        learning_rate: cfg.learning_rate,
        max_grad_norm: cfg.max_grad_norm,
        target_update_interval: cfg.target_update_interval,
    };
    let mut learner = Learner::new(shape, settings, seed).context("cannot build the network")?;
    let mut replay = ReplayBuffer::new(cfg.buffer_size, encoder.state_len());
    let mut rng = stream_rng(seed, Purpose::Other, 0x7472_6169, 0);
    let schedulers = encoder.schedulers();
    let windows = (cfg.horizon_s / cfg.window_s).floor() as usize;
    let total_transitions =
        (cfg.episodes * windows.saturating_sub(cfg.warmup_windows) * schedulers) as u64;
    let eps = EpsilonSchedule {
        start: cfg.eps_start,
        end: cfg.eps_end,
        decay_steps: (total_transitions as f64 * cfg.eps_fraction) as u64,
    };
    let new_env = |rng: &mut SimRng| {
        let [lo, hi] = cfg.lambda_range;
        let lambda = if hi > lo {
            rng.random_range(lo..=hi)
        } else {
            lo
        };
        let ep_seed: u64 = rng.random();
        Slot {
            env: MetaEnv::new(scenario, cfg, lambda, ep_seed),
            rewards: 0.0,
            transitions: 0,
            losses: 0.0,
            loss_steps: 0,
        }
    };
    let mut started = 0;
    let mut slots: Vec<Option<Slot>> = Vec::new();
    while started < cfg.episodes && slots.len() < cfg.parallel_envs {
        slots.push(Some(new_env(&mut rng)));
        started += 1;
    }
    let mut logs = Vec::new();
    let mut env_steps: u64 = 0;
    let mut batch = Batch::default();
    let mut states = Vec::new();
    while slots.iter().any(Option::is_some) {
        // Actions for every scheduler of every running environment, from one forward pass.
        states.clear();
        for slot in slots.iter().flatten() {
            for s in slot.env.states() {
                states.extend_from_slice(s);
            }
        }
        let rows = states.len() / encoder.state_len();
        let q = Tensor::from_slice(&states, (rows, shape.features, shape.history), &Device::Cpu)
            .and_then(|x| learner.online().forward(&x))
            .and_then(|q| q.to_vec2::<f32>())
            .context("forward pass")?;
        let epsilon = eps.at(env_steps);
        let mut row = 0;
        let mut actions: Vec<Vec<u32>> = Vec::with_capacity(slots.len());
        for slot in slots.iter_mut().flatten() {
            let n = slot.env.schedulers();
            let env_rng = slot.env.rng();
            actions.push(
                (0..n)
                    .map(|i| {
                        let greedy = argmax(&q[row + i]) as u32;
                        if env_rng.random::<f64>() < epsilon {
                            env_rng.random_range(0..shape.actions) as u32
                        } else {
                            greedy
                        }
                    })
                    .collect(),
            );
            row += n;
        }
        // Step every environment one window, in parallel; merge in slot order.
        let mut running: Vec<&mut Slot> = slots.iter_mut().flatten().collect();
        let produced: Vec<Vec<Transition>> = running
            .par_iter_mut()
            .zip(actions.par_iter())
            .map(|(slot, a)| slot.env.step(a))
            .collect();
        for (slot, ts) in running.iter_mut().zip(&produced) {
            for t in ts {
                replay.push(&t.state, t.action, t.reward, &t.next_state, t.done);
                slot.rewards += f64::from(t.reward);
            }
            slot.transitions += ts.len();
            env_steps += ts.len() as u64;
        }
        if replay.len() >= cfg.learning_starts.max(cfg.batch_size) {
            for _ in 0..cfg.gradient_steps {
                replay.sample(cfg.batch_size, &mut rng, &mut batch);
                let loss = f64::from(learner.train_step(&batch).context("gradient step")?);
                for slot in running.iter_mut() {
                    slot.losses += loss;
                    slot.loss_steps += 1;
                }
            }
        }
        // Log finished episodes and start new ones in their slots.
        for slot in slots.iter_mut() {
            let finished = slot
                .as_ref()
                .is_some_and(|s| s.env.end() != EpisodeEnd::Running);
            if !finished {
                continue;
            }
            let s = slot.take().expect("checked");
            let log = EpisodeLog {
                episode: logs.len(),
                lambda: s.env.lambda,
                seed: s.env.seed,
                windows: s.env.sim().now_ms().div_euclid(cfg.window_s * 1000.0) as usize,
                end: format!("{:?}", s.env.end()).to_lowercase(),
                mean_reward: if s.transitions == 0 {
                    0.0
                } else {
                    s.rewards / s.transitions as f64
                },
                success_ratio: s.env.sim().metrics().sum(|_, _, _| true).success_ratio(),
                epsilon,
                mean_loss: if s.loss_steps == 0 {
                    0.0
                } else {
                    s.losses / s.loss_steps as f64
                },
                wall_s: start.elapsed().as_secs_f64(),
            };
            progress(&log, cfg.episodes);
            logs.push(log);
            if started < cfg.episodes {
                *slot = Some(new_env(&mut rng));
                started += 1;
            }
        }
    }
    let fp = topology_fingerprint(&scenario.topology, &scenario.profiles.variant_names());
    Checkpoint::save(
        out,
        learner.online_vars(),
        shape,
        cfg,
        &scenario.topology.name,
        &fp,
    )?;
    Ok(logs)
}
