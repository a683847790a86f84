//! Training a DeepRM policy: iterations of rollouts on the training jobsets (in parallel; the
//! result does not depend on the thread count) and one policy-gradient step each, with a
//! validation measurement every few iterations for the learning curve.

use super::env::{End, EnvParams, JobSet};
use super::eval::{EvalFigures, Scheduler, evaluate};
use super::net::{PgNet, PgShape, build};
use super::objective::Objective;
use super::reinforce::{PgVariant, Trajectory, optimiser, rollout, update};
use anyhow::{Context, Result, bail};
use candle_nn::VarMap;
use continuum_core::rng::{Purpose, stream_rng};
use continuum_learn::agent::{flat, set_flat};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Everything a training run is set by (defaults: the public code's, and the budget).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PgConfig {
    /// The environment and its job distribution.
    pub env: EnvParams,
    /// What the reward pays for.
    pub objective: Objective,
    /// Which policy-gradient variant.
    pub variant: PgVariant,
    /// Policy-gradient steps.
    pub iterations: usize,
    /// Training jobsets (one gradient term each).
    pub jobsets: usize,
    /// Rollouts per jobset (the baseline's N).
    pub rollouts: usize,
    /// Hidden units.
    pub hidden: usize,
    /// RMSProp learning rate.
    pub learning_rate: f64,
    /// Discount γ (1: the return is the objective).
    pub gamma: f64,
    /// Draw fresh training jobsets every iteration (the public code keeps the same ones).
    pub resample: bool,
    /// When a training episode ends: `no-new-job` (the jobset's last step, the public code's
    /// default) or `all-done` (every job finished, or `episode_max_length`): only the latter
    /// charges the jobs a policy leaves waiting after the jobset.
    pub end: End,
    /// Validate every this many iterations (0: never).
    pub eval_every: usize,
    /// Validation jobsets.
    pub eval_jobsets: usize,
    /// Epochs of pre-training by imitating SJF on the first iteration's training jobsets
    /// before REINFORCE (the public code's supervised step; 0: none).
    pub imitate_sjf: usize,
    /// Keep the weights of the validated iteration with the best validation score for the
    /// objective (the lowest mean slowdown for `slowdown`; [`EvalFigures::score`]), not the
    /// last iteration's (early stopping; needs `eval_every` > 0).
    pub keep_best: bool,
}

impl Default for PgConfig {
    fn default() -> Self {
        Self {
            env: EnvParams::default(),
            objective: Objective::Slowdown,
            variant: PgVariant::PLAIN,
            iterations: 1000,
            jobsets: 50,
            rollouts: 20,
            hidden: 20,
            learning_rate: 1e-3,
            gamma: 1.0,
            resample: false,
            end: End::NoNewJob,
            eval_every: 10,
            eval_jobsets: 20,
            imitate_sjf: 0,
            keep_best: false,
        }
    }
}

impl PgConfig {
    /// Checks every field, naming the first bad one.
    pub fn validate(&self) -> Result<()> {
        self.env.validate().map_err(anyhow::Error::msg)?;
        for (name, v) in [
            ("iterations", self.iterations),
            ("jobsets", self.jobsets),
            ("rollouts", self.rollouts),
            ("hidden", self.hidden),
        ] {
            if v == 0 {
                bail!("deeprm config: `{name}`: expected at least 1");
            }
        }
        if !(self.learning_rate > 0.0 && self.learning_rate.is_finite()) {
            bail!("deeprm config: `learning_rate`: expected a positive number");
        }
        if !(0.0..=1.0).contains(&self.gamma) {
            bail!("deeprm config: `gamma`: expected a number in [0, 1]");
        }
        if self.keep_best && self.eval_every == 0 {
            bail!("deeprm config: `keep_best` needs validation: `eval_every` must be at least 1");
        }
        if !(self.variant.entropy >= 0.0 && self.variant.entropy.is_finite()) {
            bail!("deeprm config: `variant.entropy`: expected a non-negative number");
        }
        Ok(())
    }

    /// The network shape this config trains.
    pub fn shape(&self) -> PgShape {
        PgShape {
            input: self.env.input_len(),
            hidden: self.hidden,
            actions: self.env.actions(),
            critic: self.variant.critic,
        }
    }
}

/// One iteration's log line.
#[derive(Debug, Clone, Serialize)]
pub struct PgIterLog {
    /// Iteration (0-based).
    pub iteration: usize,
    /// Mean return of its rollouts.
    pub mean_return: f64,
    /// Mean slowdown of its rollouts' finished jobs.
    pub train_slowdown: f64,
    /// Mean policy entropy.
    pub entropy: f64,
    /// Seconds since training began.
    pub wall_s: f64,
    /// Validation figures, when measured.
    pub eval: Option<EvalFigures>,
}

/// A trained (or adapted) network.
pub struct Trained {
    /// Its variables.
    pub vars: VarMap,
    /// The network.
    pub net: PgNet,
    /// One line per iteration.
    pub log: Vec<PgIterLog>,
    /// With `keep_best`: the iteration whose weights were kept.
    pub kept: Option<usize>,
}

/// The training jobsets of `seed` for iteration `it` (the same for every iteration unless
/// `resample`).
pub fn train_jobsets(cfg: &PgConfig, seed: u64, it: usize) -> Vec<JobSet> {
    let round = if cfg.resample { it as u64 + 1 } else { 0 };
    (0..cfg.jobsets)
        .map(|j| {
            cfg.env
                .jobset(&mut stream_rng(seed, Purpose::Arrivals, round, j as u64))
        })
        .collect()
}

/// Trains from `init` (flat weights of a network of the same shape) or from weights drawn
/// from `seed`; `progress` sees every iteration's line.
pub fn train(
    cfg: &PgConfig,
    seed: u64,
    init: Option<&[f32]>,
    progress: &(dyn Fn(&PgIterLog) + Sync),
) -> Result<Trained> {
    cfg.validate()?;
    let (vars, net) = build(cfg.shape(), seed).context("building the network")?;
    if let Some(w) = init {
        let n = flat(&vars)?.len();
        if w.len() != n {
            bail!(
                "--init: the checkpoint's network has {} weights, this config's has {n}",
                w.len()
            );
        }
        set_flat(&vars, w)?;
    }
    let mut opt = optimiser(&vars, cfg.learning_rate)?;
    let val = super::eval::eval_jobsets(&cfg.env, seed ^ 0x7661_6c69, cfg.eval_jobsets);
    let start = Instant::now();
    let mut scale = None;
    let mut log = Vec::with_capacity(cfg.iterations);
    let mut best: Option<(f64, usize, Vec<f32>)> = None;
    for it in 0..cfg.iterations {
        let jobsets = train_jobsets(cfg, seed, it);
        let batches = rollouts(cfg, &net, &jobsets, seed, it)?;
        let s = *scale.get_or_insert_with(|| return_scale(&batches));
        let stats = update(&net, &mut opt, &batches, &cfg.variant, cfg.gamma, s)?;
        let eval = if cfg.eval_every > 0 && (it % cfg.eval_every == 0 || it + 1 == cfg.iterations) {
            let snap = net.snapshot()?;
            let who = Scheduler::Agent(&snap, cfg.variant.mask, false);
            Some(evaluate(cfg.env, &val, who, seed).0)
        } else {
            None
        };
        let all: Vec<_> = batches
            .iter()
            .flatten()
            .map(|t| t.summary.clone())
            .collect();
        let line = PgIterLog {
            iteration: it,
            mean_return: stats.mean_return,
            train_slowdown: super::eval::figures(&all).0.mean_slowdown,
            entropy: stats.entropy,
            wall_s: start.elapsed().as_secs_f64(),
            eval,
        };
        if cfg.keep_best
            && let Some(e) = &line.eval
            && best
                .as_ref()
                .is_none_or(|(v, _, _)| e.score(cfg.objective) > *v)
        {
            best = Some((e.score(cfg.objective), it, flat(&vars)?));
        }
        progress(&line);
        log.push(line);
    }
    let kept = match best {
        Some((_, it, w)) => {
            set_flat(&vars, &w)?;
            Some(it)
        }
        None => None,
    };
    Ok(Trained {
        vars,
        net,
        log,
        kept,
    })
}

/// The rollouts of iteration `it`: `rollouts` per jobset, each with its own random stream.
pub fn rollouts(
    cfg: &PgConfig,
    net: &PgNet,
    jobsets: &[JobSet],
    seed: u64,
    it: usize,
) -> Result<Vec<Vec<Trajectory>>> {
    let snap = net.snapshot()?;
    let n = cfg.rollouts;
    let flat: Vec<Trajectory> = (0..jobsets.len() * n)
        .into_par_iter()
        .map(|k| {
            let mut rng = stream_rng(seed, Purpose::Policy, it as u64, k as u64);
            rollout(
                cfg.env,
                &jobsets[k / n],
                cfg.objective,
                cfg.end,
                &snap,
                cfg.variant.mask,
                false,
                &mut rng,
            )
        })
        .collect();
    let mut it = flat.into_iter();
    Ok((0..jobsets.len())
        .map(|_| it.by_ref().take(n).collect())
        .collect())
}

/// The scale returns are divided by: their mean magnitude at the first step (at least 1).
pub fn return_scale(batches: &[Vec<Trajectory>]) -> f32 {
    let firsts: Vec<f32> = batches
        .iter()
        .flatten()
        .map(|t| {
            super::reinforce::returns(&t.rewards, 1.0)
                .first()
                .copied()
                .unwrap_or(0.0)
                .abs()
        })
        .collect();
    let m = firsts.iter().sum::<f32>() / firsts.len().max(1) as f32;
    m.max(1.0)
}

impl PgConfig {
    /// Reads a YAML config (every field optional; unknown fields refused with file:line:col).
    pub fn load(path: &std::path::Path) -> Result<Self> {
        load_yaml(path, Self::validate)
    }
}

/// Reads a YAML file into `T` (unknown fields refused with file:line:col), then checks it with
/// `validate`, whose message gets the file's name.
pub fn load_yaml<T: serde::de::DeserializeOwned>(
    path: &std::path::Path,
    validate: impl Fn(&T) -> Result<()>,
) -> Result<T> {
    let c: T = continuum_core::config::Source::read(path)?.parse()?;
    validate(&c).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok(c)
}
