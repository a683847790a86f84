//! First-order meta-training over a distribution of DeepRM tasks (job arrival rates and job
//! mixes): an initialisation from which a few policy-gradient steps adapt to a task never seen.
//! - `reptile` (Nichol et al. 2018): per meta-iteration, B tasks each adapted by k inner steps
//!   from θ to θ'_b; then θ ← θ + ε (mean_b θ'_b − θ).
//! - `fomaml` (first-order MAML): the same inner loops; θ moves along the last inner step
//!   only, θ ← θ + ε·k·mean_b (θ'_b − θ^{k−1}_b) (the gradient at the adapted weights, taken
//!   on that step's fresh jobsets, with the inner optimiser's scaling).
//!
//! ε falls linearly to 0 over the meta-iterations (as Reptile's paper does). Inner loops run in
//! parallel and draw only from their own seeded streams: the result does not depend on the
//! thread count.

use super::env::EnvParams;
use super::net::build;
use super::reinforce::{optimiser, update};
use super::train::{PgConfig, return_scale, rollouts, train_jobsets};
use anyhow::{Context, Result, bail};
use continuum_core::rng::{Purpose, SimRng, mix64, stream_rng};
use continuum_learn::agent::{flat, set_flat};
use continuum_learn::reptile::{meta_train_step, step_size};
use rand::Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// The first-order meta-learning method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MetaTrainMethod {
    /// Reptile: move towards the adapted weights.
    Reptile,
    /// First-order MAML: move along the last inner step.
    Fomaml,
}

/// The task distribution and the meta-learning schedule.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MetaTrainConfig {
    /// The inner learner (its `iterations` unused; `jobsets` per inner step, fresh every step).
    pub base: PgConfig,
    /// Method.
    pub method: MetaTrainMethod,
    /// Meta-iterations.
    pub meta_iterations: usize,
    /// Tasks per meta-iteration (B).
    pub tasks: usize,
    /// Inner policy-gradient steps per task (k).
    pub inner_steps: usize,
    /// Initial meta step size ε0.
    pub meta_step: f64,
    /// Offered load of a task, drawn uniformly from this range.
    pub load: [f64; 2],
    /// Share of short jobs of a task, drawn uniformly from this range.
    pub small_job_chance: [f64; 2],
}

impl Default for MetaTrainConfig {
    fn default() -> Self {
        Self {
            base: PgConfig {
                jobsets: 4,
                rollouts: 20,
                resample: true,
                eval_every: 0,
                ..PgConfig::default()
            },
            method: MetaTrainMethod::Reptile,
            meta_iterations: 100,
            tasks: 4,
            inner_steps: 5,
            meta_step: 1.0,
            load: [0.3, 1.8],
            small_job_chance: [0.5, 0.95],
        }
    }
}

impl MetaTrainConfig {
    /// Checks every field, naming the first bad one.
    pub fn validate(&self) -> Result<()> {
        self.base.validate()?;
        for (name, v) in [
            ("meta_iterations", self.meta_iterations),
            ("tasks", self.tasks),
            ("inner_steps", self.inner_steps),
        ] {
            if v == 0 {
                bail!("meta config: `{name}`: expected at least 1");
            }
        }
        if !(self.meta_step > 0.0 && self.meta_step <= 1.0) {
            bail!("meta config: `meta_step`: expected a number in (0, 1]");
        }
        let range = |name: &str, r: [f64; 2], lo: f64, hi: f64| {
            if !(lo <= r[0] && r[0] <= r[1] && r[1] <= hi) {
                bail!("meta config: `{name}`: expected [low, high] within [{lo}, {hi}]");
            }
            Ok(())
        };
        range(
            "load",
            self.load,
            0.0,
            1.0 / self.base.env.rate_for_load(1.0),
        )?;
        range("small_job_chance", self.small_job_chance, 0.0, 1.0)
    }

    /// A task drawn from the distribution.
    pub fn task(&self, rng: &mut SimRng) -> EnvParams {
        let u = |r: [f64; 2], rng: &mut SimRng| r[0] + (r[1] - r[0]) * rng.random::<f64>();
        let small = u(self.small_job_chance, rng);
        let load = u(self.load, rng);
        let p = EnvParams {
            small_job_chance: small,
            ..self.base.env
        };
        EnvParams {
            new_job_rate: p.rate_for_load(load).min(1.0),
            ..p
        }
    }
}

/// One meta-iteration's log line.
#[derive(Debug, Clone, Serialize)]
pub struct MetaTrainLog {
    /// Meta-iteration (0-based).
    pub iteration: usize,
    /// Mean return of the inner loops' last rollouts.
    pub mean_return: f64,
    /// Mean load of its tasks.
    pub mean_load: f64,
    /// Seconds since meta-training began.
    pub wall_s: f64,
}

/// Meta-trains; returns the initialisation (flat weights) and the log.
pub fn meta_train(
    cfg: &MetaTrainConfig,
    seed: u64,
    progress: &(dyn Fn(&MetaTrainLog) + Sync),
) -> Result<(Vec<f32>, Vec<MetaTrainLog>)> {
    cfg.validate()?;
    let (vars, _) = build(cfg.base.shape(), seed).context("building the network")?;
    let mut theta = flat(&vars)?;
    let start = Instant::now();
    let mut log = Vec::with_capacity(cfg.meta_iterations);
    for it in 0..cfg.meta_iterations {
        let eps = step_size(cfg.meta_step, it, cfg.meta_iterations);
        let inner: Vec<Result<(Vec<f32>, f64, f64)>> = (0..cfg.tasks)
            .into_par_iter()
            .map(|b| {
                let task_seed =
                    mix64(seed ^ mix64(it as u64 + 1) ^ (b as u64).wrapping_mul(0x9E37));
                let mut rng = stream_rng(task_seed, Purpose::Other, 0x7461_736b, 0);
                let env = cfg.task(&mut rng);
                let pc = PgConfig { env, ..cfg.base };
                let (dir, ret) = inner_loop(&pc, &theta, cfg.inner_steps, cfg.method, task_seed)?;
                Ok((dir, ret, env.load()))
            })
            .collect();
        let mut dirs = Vec::with_capacity(cfg.tasks);
        let (mut ret, mut load) = (0.0, 0.0);
        for r in inner {
            let (dir, rt, ld) = r?;
            dirs.push(dir);
            ret += rt / cfg.tasks as f64;
            load += ld / cfg.tasks as f64;
        }
        meta_train_step(&mut theta, &dirs, eps);
        let line = MetaTrainLog {
            iteration: it,
            mean_return: ret,
            mean_load: load,
            wall_s: start.elapsed().as_secs_f64(),
        };
        progress(&line);
        log.push(line);
    }
    Ok((theta, log))
}

/// k inner steps on one task from `theta`: the direction the meta-update follows and the mean
/// return of the last step's rollouts.
fn inner_loop(
    cfg: &PgConfig,
    theta: &[f32],
    steps: usize,
    method: MetaTrainMethod,
    seed: u64,
) -> Result<(Vec<f32>, f64)> {
    let (vars, net) = build(cfg.shape(), seed)?;
    set_flat(&vars, theta)?;
    let mut opt = optimiser(&vars, cfg.learning_rate)?;
    let mut before_last = theta.to_vec();
    let mut ret = 0.0;
    let mut scale = None;
    for k in 0..steps {
        if k + 1 == steps {
            before_last = flat(&vars)?;
        }
        let jobsets = train_jobsets(cfg, seed, k);
        let batches = rollouts(cfg, &net, &jobsets, seed, k)?;
        let s = *scale.get_or_insert_with(|| return_scale(&batches));
        ret = update(&net, &mut opt, &batches, &cfg.variant, cfg.gamma, s)?.mean_return;
    }
    let after = flat(&vars)?;
    let dir = match method {
        MetaTrainMethod::Reptile => after.iter().zip(theta).map(|(a, t)| a - t).collect(),
        MetaTrainMethod::Fomaml => after
            .iter()
            .zip(&before_last)
            .map(|(a, b)| (a - b) * steps as f32)
            .collect(),
    };
    Ok((dir, ret))
}

impl MetaTrainConfig {
    /// Reads a YAML config (every field optional; unknown fields refused with file:line:col).
    pub fn load(path: &std::path::Path) -> Result<Self> {
        super::train::load_yaml(path, Self::validate)
    }
}
