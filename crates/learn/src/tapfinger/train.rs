//! Training TapFinger's agents (`continuum train --config config/tapfinger.yaml`): each episode
//! is a pulled simulation with a λ drawn as the meta-policy's trainer draws it; the agents
//! sample their claims, every decision is recorded, rewards are credited when the episode
//! ends (the bound streams' outcomes are known then), and one MAPPO update follows.

use super::checkpoint::save;
use super::net::build;
use super::ppo::{PpoSettings, PpoStats, update};
use super::recorder::{Decision, Recorder};
use crate::episode::EpisodeSpec;
use anyhow::{Context, Result};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};
use continuum_core::rng::{Purpose, stream_rng};
use continuum_infer::tapfinger::{Pick, TapCheckpoint, TapConfig, TapNetShape, TapReward};
use continuum_sim::{PullConfig, PullStepOutcome, Scenario, SimConfig, Simulation};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// One training episode's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct TapEpisodeLog {
    /// Episode number, from 0.
    pub episode: usize,
    /// Mean λ of the episode.
    pub lambda: f64,
    /// Its seed.
    pub seed: u64,
    /// Decisions recorded (every agent in every round).
    pub decisions: usize,
    /// Success ratio of the episode.
    pub success_ratio: f64,
    /// Share of the streams refused.
    pub refused: f64,
    /// Mean reward per decision.
    pub mean_reward: f64,
    /// The update's losses.
    pub losses: PpoStats,
    /// Wall time since training started, s.
    pub wall_s: f64,
}

/// What training reports as it goes.
pub enum TapEvent<'a> {
    /// An episode ended (its log, and the total number of episodes).
    Episode(&'a TapEpisodeLog, usize),
}

/// The agents' network shape of `cfg`.
pub fn shape_of(cfg: &TapConfig) -> TapNetShape {
    TapNetShape {
        hidden: cfg.hidden,
        han: cfg.han,
        features: cfg.features,
    }
}

/// Runs one pulled episode of `sc` with `agents`, recording each step's outcome.
pub fn run_episode(
    sc: Arc<Scenario>,
    sim_cfg: SimConfig,
    pull: PullConfig,
    agents: &mut Recorder,
) -> Result<(Simulation, Vec<PullStepOutcome>)> {
    let mut sim = Simulation::new(sc, sim_cfg, continuum_core::policy::REGISTRY[0]);
    sim.enable_pull(pull).map_err(anyhow::Error::msg)?;
    let mut steps = Vec::new();
    // Only steps in which agents acted are kept: the agents number their steps the same way.
    let mut keep = |_: &Simulation, o: &PullStepOutcome| {
        if o.stats.rounds > 0 {
            steps.push(o.clone());
        }
    };
    sim.finish_pulled(agents, &mut keep);
    Ok((sim, steps))
}

/// Credits every decision with its reward under `reward` (see [`TapReward`]).
pub fn credit(
    decisions: &mut [Decision],
    steps: &[PullStepOutcome],
    sim: &Simulation,
    reward: TapReward,
) {
    // The last decision of each (step, cluster): where step-level terms go.
    let mut last: std::collections::HashMap<(u64, u32), usize> = Default::default();
    for (i, d) in decisions.iter().enumerate() {
        last.insert((d.step, d.cluster), i);
    }
    match reward {
        TapReward::Waiting => {
            for (&(_, _), &i) in &last {
                let d = &mut decisions[i];
                // Its last round: what it left waiting (it was void, or it claimed one of them).
                let left = d.offers - u32::from(d.won);
                d.reward -= left as f32 / 4.0;
            }
        }
        TapReward::Success => {
            for d in decisions.iter_mut().filter(|d| d.won) {
                let Some(o) = steps.get(d.step as usize - 1) else {
                    continue;
                };
                let serial = d
                    .pending
                    .and_then(|j| o.bound.iter().find(|(p, _)| *p == j).and_then(|(_, s)| *s));
                if let Some(serial) = serial {
                    let (settled, success) = sim.stream_outcome(serial);
                    if settled > 0 {
                        d.reward +=
                            (2.0 * f64::from(success) - f64::from(settled)) as f32 / settled as f32;
                    }
                }
            }
        }
    }
    // A refused stream is −1, shared by the agents it was eligible at (both rewards).
    for (k, o) in steps.iter().enumerate() {
        for at in &o.refused_at {
            let share = 1.0 / at.len().max(1) as f32;
            for n in at {
                if let Some(&i) = last.get(&(k as u64 + 1, *n)) {
                    decisions[i].reward -= share;
                }
            }
        }
    }
}

/// Trains agents on `sc` under `cfg` from `seed` (or from `init`'s weights, which must have
/// this training's network shape), writes the checkpoint to `out` and returns the episode logs.
pub fn train(
    sc: &Scenario,
    cfg: &TapConfig,
    seed: u64,
    init: Option<&TapCheckpoint>,
    out: &Path,
    progress: &dyn Fn(TapEvent),
) -> Result<Vec<TapEpisodeLog>> {
    let shape = shape_of(cfg);
    let (vars, net) = build(shape, seed).context("building the network")?;
    if let Some(ck) = init {
        if ck.meta.shape != shape {
            anyhow::bail!(
                "--init: incompatible TapFinger checkpoint: its network is {:?}, this training's \
                 {:?} (set the same `hidden`, `han` and `pointer`)",
                ck.meta.shape,
                shape
            );
        }
        crate::agent::fill_vars(&vars, &ck.weights)
            .map_err(|m| anyhow::anyhow!("--init: incompatible TapFinger checkpoint: {m}"))?;
    }
    let mut opt = AdamW::new(
        vars.all_vars(),
        ParamsAdamW {
            lr: cfg.learning_rate,
            weight_decay: 0.0,
            ..ParamsAdamW::default()
        },
    )
    .context("the optimiser")?;
    let settings = PpoSettings {
        gamma: cfg.gamma,
        gae_lambda: cfg.gae_lambda,
        clip: cfg.clip,
        epochs: cfg.epochs,
        minibatch: cfg.minibatch,
        entropy: cfg.entropy,
        value_coef: cfg.value_coef,
        max_grad_norm: cfg.max_grad_norm,
    };
    let pull = PullConfig {
        step_ms: cfg.step_ms,
        patience: cfg.patience,
    };
    let mut rng = stream_rng(seed, Purpose::Other, 0x7461_7066, 0);
    let started = Instant::now();
    let mut logs = Vec::new();
    let clusters = sc.topology.clusters.len();
    for e in 0..cfg.episodes {
        let spec = EpisodeSpec::draw_in(
            cfg.lambda_range,
            cfg.lambda_profile,
            cfg.episode_s,
            &mut rng,
        );
        let esc = Arc::new(sc.clone().with_lambda_profile(spec.lambda.clone()));
        let sim_cfg = SimConfig {
            duration_s: cfg.episode_s,
            seed: spec.seed,
            staleness_ms: cfg.step_ms,
            ..SimConfig::default()
        };
        let mut agents = Recorder::new(
            net.clone(),
            Pick::Sample,
            cfg.pointer,
            cfg.resolution.resolution(),
            clusters,
        );
        let (sim, steps) = run_episode(esc, sim_cfg, pull, &mut agents)?;
        let mut decisions = std::mem::take(&mut agents.record);
        credit(&mut decisions, &steps, &sim, cfg.reward);
        let losses = update(&net, &vars, &mut opt, &decisions, &settings, &mut rng)
            .context("the PPO update")?;
        let totals = sim.metrics().sum(|_, _, _| true);
        let stats = sim.stats();
        let log = TapEpisodeLog {
            episode: e,
            lambda: spec.mean_lambda(cfg.episode_s),
            seed: spec.seed,
            decisions: decisions.len(),
            success_ratio: totals.success_ratio(),
            refused: stats.streams_rejected as f64 / stats.streams.max(1) as f64,
            mean_reward: decisions.iter().map(|d| f64::from(d.reward)).sum::<f64>()
                / decisions.len().max(1) as f64,
            losses,
            wall_s: started.elapsed().as_secs_f64(),
        };
        progress(TapEvent::Episode(&log, cfg.episodes));
        logs.push(log);
    }
    save(out, &vars, shape, &sc.topology.name, cfg)?;
    Ok(logs)
}

/// The episode log as CSV.
pub fn tap_training_csv(logs: &[TapEpisodeLog]) -> String {
    use std::fmt::Write;
    let mut s = String::from(
        "episode,lambda,seed,decisions,success_ratio,refused,mean_reward,policy_loss,value_loss,entropy,wall_s\n",
    );
    for l in logs {
        let _ = writeln!(
            s,
            "{},{:.3},{},{},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.2}",
            l.episode,
            l.lambda,
            l.seed,
            l.decisions,
            l.success_ratio,
            l.refused,
            l.mean_reward,
            l.losses.policy,
            l.losses.value,
            l.losses.entropy,
            l.wall_s
        );
    }
    s
}
