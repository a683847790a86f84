//! Training TapFinger's agents in its own problem (TapFinger §IV-C "Loss Function and Training
//! Method", §V-A): MAPPO with parameters shared by the agents, each update on the decisions of
//! several environments run in parallel (threads; the paper runs 32), reward −(tasks associated
//! with the agent's cluster) at every timestep and discount γ = 1, so that an agent's return is
//! its share of the total completion time still to come. The settings drawn per environment
//! (cluster count, arrival rate) come from the training seed.

use super::agents::{JobAgents, Variant};
use crate::agent::weights_of;
use crate::tapfinger::batch::ObsBatch;
use crate::tapfinger::net::{TapNet, build};
use crate::tapfinger::ppo::{PpoSettings, PpoStats, update};
use crate::tapfinger::recorder::Decision;
use anyhow::{Context, Result};
use candle_nn::{AdamW, Optimizer, ParamsAdamW};
use continuum_core::rng::{Purpose, stream_rng};
use continuum_infer::tapfinger::features::{AgentObs, TapFeatures};
use continuum_infer::tapfinger::{FastTapNet, Pick, TapNetShape};
use continuum_jobs::ml::{MlReport, MlRun, MlScheduler, MlSetting};
use rand::Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Training settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct JobTapSettings {
    /// PPO updates.
    pub updates: usize,
    /// Environments per update, run in parallel.
    pub envs: usize,
    /// Cluster counts an environment is drawn from (TapFinger trains 3 and 6).
    pub clusters: Vec<usize>,
    /// Range of arrivals per timestep per cluster an environment's rate is drawn from
    /// (TapFinger: λ = 2 at 3 clusters and 4 at 6, 0.67 per cluster; 2–4 at 6 in Fig. 6).
    pub rate_per_cluster: [f64; 2],
    /// Tasks per cluster in an environment (TapFinger: 64).
    pub tasks_per_cluster: usize,
    /// Hidden width (TapFinger: 256).
    pub hidden: usize,
    /// Reward per task and timestep (TapFinger: −1; scaled so that returns stay near 1).
    pub reward_scale: f64,
    /// Discount per decision (TapFinger: 1).
    pub gamma: f64,
    /// GAE λ.
    pub gae_lambda: f64,
    /// PPO clip ε.
    pub clip: f64,
    /// PPO epochs per update.
    pub epochs: usize,
    /// Decisions per minibatch.
    pub minibatch: usize,
    /// Adam learning rate.
    pub learning_rate: f64,
    /// Entropy bonus weight.
    pub entropy: f64,
    /// Value-loss weight.
    pub value_coef: f64,
    /// Gradient-norm clip.
    pub max_grad_norm: f64,
    /// Validation runs after each update (greedy agents on 3 clusters at λ 2 and 6 at λ 4, on
    /// seeds drawn from the training seed): the checkpoint keeps the weights with the lowest
    /// mean JCT there, as TapFinger keeps "the models that achieve the best evaluation
    /// results" (§V-B). 0: no validation, the last weights.
    pub validation_seeds: usize,
}

impl Default for JobTapSettings {
    fn default() -> Self {
        Self {
            // assumption: sized to train in minutes on two cores (docs/tapfinger.md states the
            // size against the paper's 8 million steps).
            updates: 120,
            envs: 4,
            clusters: vec![3, 6],
            rate_per_cluster: [1.0 / 3.0, 1.0],
            tasks_per_cluster: continuum_jobs::ml::workload::TASKS_PER_CLUSTER,
            // assumption: 32 as the streams agents (docs/tapfinger.md), against the paper's 256.
            hidden: 32,
            reward_scale: 0.001,
            gamma: 1.0,
            gae_lambda: 0.95,
            clip: 0.2,
            epochs: 4,
            minibatch: 256,
            learning_rate: 1e-3,
            entropy: 0.01,
            value_coef: 0.5,
            max_grad_norm: 1.0,
            validation_seeds: 1,
        }
    }
}

impl JobTapSettings {
    /// Checks ranges; the error names the field.
    pub fn check(&self) -> Result<(), String> {
        let pos = |x: f64| x > 0.0 && x.is_finite();
        if self.updates == 0 || self.envs == 0 || self.tasks_per_cluster == 0 {
            return Err("updates, envs, tasks_per_cluster: expected at least 1".into());
        }
        if self.clusters.is_empty() || self.clusters.contains(&0) {
            return Err("clusters: expected cluster counts of at least 1".into());
        }
        let [lo, hi] = self.rate_per_cluster;
        if !(pos(lo) && hi >= lo && hi.is_finite()) {
            return Err("rate_per_cluster: expected [low, high] with 0 < low <= high".into());
        }
        if self.hidden == 0 || self.hidden > 1024 {
            return Err("hidden: expected 1 ..= 1024".into());
        }
        if !pos(self.reward_scale) {
            return Err("reward_scale: expected a number > 0".into());
        }
        if !(0.0..=1.0).contains(&self.gamma) || !(0.0..=1.0).contains(&self.gae_lambda) {
            return Err("gamma, gae_lambda: expected numbers in [0, 1]".into());
        }
        if !(self.clip > 0.0 && self.clip < 1.0) {
            return Err("clip: expected 0 < clip < 1".into());
        }
        if self.epochs == 0 || self.minibatch == 0 {
            return Err("epochs, minibatch: expected at least 1".into());
        }
        if !pos(self.learning_rate) || !pos(self.max_grad_norm) {
            return Err("learning_rate, max_grad_norm: expected numbers > 0".into());
        }
        if !(self.entropy >= 0.0 && self.value_coef >= 0.0) {
            return Err("entropy, value_coef: expected numbers >= 0".into());
        }
        Ok(())
    }
}

/// One update's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobTapLog {
    /// Update number, from 0.
    pub update: usize,
    /// Mean total completion time per task over the update's environments (its mean JCT).
    pub mean_jct: f64,
    /// Decisions recorded.
    pub decisions: usize,
    /// The update's losses.
    pub policy_loss: f64,
    /// Value loss.
    pub value_loss: f64,
    /// Pointer entropy.
    pub entropy: f64,
    /// Mean JCT of the greedy agents on the validation runs after the update (NaN: none).
    pub validation_jct: f64,
}

/// The network shape of a variant trained with `s`.
pub fn shape_of(v: Variant, s: &JobTapSettings) -> TapNetShape {
    TapNetShape {
        hidden: s.hidden,
        han: v.han,
        features: TapFeatures::Jobs,
    }
}

/// One environment's draw: its setting and seed.
fn draw_env(s: &JobTapSettings, seed: u64, update: usize, env: usize) -> (MlSetting, u64) {
    let mut rng = stream_rng(
        seed,
        Purpose::Other,
        0x6a74_6170,
        (update * 4096 + env) as u64,
    );
    let n = s.clusters[rng.random_range(0..s.clusters.len())];
    let [lo, hi] = s.rate_per_cluster;
    let rate = n as f64 * (lo + (hi - lo) * rng.random::<f64>());
    let mut setting = MlSetting::synthetic(n, rate);
    setting.tasks = s.tasks_per_cluster * n;
    (setting, rng.random())
}

/// Runs one environment with `agents` drawing their choices; its decisions, credited.
fn rollout(
    setting: MlSetting,
    seed: u64,
    net: FastTapNet,
    v: Variant,
    s: &JobTapSettings,
) -> (Vec<Decision>, f64) {
    let mut agents = JobAgents::new(net, v, Pick::Sample, true);
    let mut run = MlRun::new(setting, seed);
    let mut rng = stream_rng(seed, Purpose::Policy, 0x6a74, 0);
    let mut tally: Vec<Vec<usize>> = Vec::new();
    while !run.finished() {
        run.admit();
        agents.schedule(&mut run.interval(), &mut rng);
        tally.push(
            (0..run.clusters() as u32)
                .map(|c| run.associated(c))
                .collect(),
        );
        run.advance();
    }
    let mut d = agents.record.take().unwrap_or_default();
    credit(&mut d, &tally, s.reward_scale);
    (d, MlReport::of(&run).mean_jct)
}

/// Credits each timestep's −(tasks associated with cluster n) · scale to n's last decision at
/// or before it (`tally[t][n]`); with γ = 1 a decision's return is then the agent's share of the
/// completion time from its timestep on. Timesteps before an agent's first decision are the
/// paper's skipped ones.
pub fn credit(decisions: &mut [Decision], tally: &[Vec<usize>], scale: f64) {
    let n = tally.first().map_or(0, Vec::len);
    let mut last: Vec<Option<usize>> = vec![None; n];
    let mut i = 0;
    for (t, counts) in tally.iter().enumerate() {
        while i < decisions.len() && decisions[i].step <= t as u64 {
            last[decisions[i].cluster as usize] = Some(i);
            i += 1;
        }
        for (c, &k) in counts.iter().enumerate() {
            if let Some(d) = last[c] {
                decisions[d].reward -= (k as f64 * scale) as f32;
            }
        }
    }
}

/// The validation settings and seeds of a training from `seed`.
fn validation(s: &JobTapSettings, seed: u64) -> Vec<(MlSetting, u64)> {
    let mut rng = stream_rng(seed, Purpose::Other, 0x7661_6c69, 0);
    let mut out = Vec::new();
    for _ in 0..s.validation_seeds {
        for (n, rate) in [(3, 2.0), (6, 4.0)] {
            let mut setting = MlSetting::synthetic(n, rate);
            setting.tasks = s.tasks_per_cluster * n;
            out.push((setting, rng.random()));
        }
    }
    out
}

/// Mean JCT of greedy agents of `v` on `net` over the validation runs (in parallel).
fn validate(runs: &[(MlSetting, u64)], net: &FastTapNet, v: Variant) -> f64 {
    let jct: Vec<f64> = runs
        .par_iter()
        .map(|(setting, seed)| {
            let mut agents = JobAgents::new(net.clone(), v, Pick::Greedy, false);
            continuum_jobs::ml::run_with(setting, *seed, &mut agents).mean_jct
        })
        .collect();
    jct.iter().sum::<f64>() / jct.len().max(1) as f64
}

/// Fills each decision's critic value with `net`'s.
fn values(net: &TapNet, decisions: &mut [Decision]) -> Result<()> {
    for chunk in decisions.chunks_mut(512) {
        let refs: Vec<&AgentObs> = chunk.iter().map(|d| &d.obs).collect();
        let b = ObsBatch::new(&refs, TapFeatures::Jobs)?;
        let v = net.forward(&b)?.value.to_vec1::<f32>()?;
        for (d, x) in chunk.iter_mut().zip(v) {
            d.value = x;
        }
    }
    Ok(())
}

/// A trained network: its shape and weights.
pub struct JobTapTrained {
    /// Variables of the network.
    pub vars: candle_nn::VarMap,
    /// Its shape.
    pub shape: TapNetShape,
    /// One line per update.
    pub logs: Vec<JobTapLog>,
}

/// Trains `v` from `seed` under `s`; `progress` hears each update.
pub fn train(
    v: Variant,
    s: &JobTapSettings,
    seed: u64,
    progress: &dyn Fn(&JobTapLog),
) -> Result<JobTapTrained> {
    let shape = shape_of(v, s);
    let (vars, net) = build(shape, seed).context("building the network")?;
    let params = ParamsAdamW {
        lr: s.learning_rate,
        weight_decay: 0.0,
        ..ParamsAdamW::default()
    };
    let mut opt = AdamW::new(vars.all_vars(), params).context("the optimiser")?;
    let ppo = PpoSettings {
        gamma: s.gamma,
        gae_lambda: s.gae_lambda,
        clip: s.clip,
        epochs: s.epochs,
        minibatch: s.minibatch,
        entropy: s.entropy,
        value_coef: s.value_coef,
        max_grad_norm: s.max_grad_norm,
    };
    let mut rng = stream_rng(seed, Purpose::Other, 0x6a74_7570, 0);
    let mut logs = Vec::with_capacity(s.updates);
    let checks = validation(s, seed);
    let mut best: Option<(f64, continuum_infer::weights::Weights)> = None;
    for u in 0..s.updates {
        let fast = FastTapNet::read(shape, &weights_of(&vars)?).map_err(anyhow::Error::msg)?;
        let runs: Vec<(Vec<Decision>, f64)> = (0..s.envs)
            .into_par_iter()
            .map(|e| {
                let (setting, env_seed) = draw_env(s, seed, u, e);
                rollout(setting, env_seed, fast.clone(), v, s)
            })
            .collect();
        let mean_jct = runs.iter().map(|r| r.1).sum::<f64>() / runs.len().max(1) as f64;
        let mut decisions = Vec::new();
        for (e, (mut d, _)) in runs.into_iter().enumerate() {
            // Each environment's agents are sequences of their own.
            for x in &mut d {
                x.cluster += (e as u32) << 8;
            }
            decisions.append(&mut d);
        }
        values(&net, &mut decisions)?;
        let st: PpoStats =
            update(&net, &vars, &mut opt, &decisions, &ppo, &mut rng).context("the PPO update")?;
        let mut validation_jct = f64::NAN;
        if !checks.is_empty() {
            let w = weights_of(&vars)?;
            let after = FastTapNet::read(shape, &w).map_err(anyhow::Error::msg)?;
            validation_jct = validate(&checks, &after, v);
            if best.as_ref().is_none_or(|b| validation_jct < b.0) {
                best = Some((validation_jct, w));
            }
        }
        let log = JobTapLog {
            update: u,
            mean_jct,
            decisions: decisions.len(),
            policy_loss: st.policy,
            value_loss: st.value,
            entropy: st.entropy,
            validation_jct,
        };
        progress(&log);
        logs.push(log);
    }
    if let Some((_, w)) = best {
        crate::agent::fill_vars(&vars, &w).map_err(anyhow::Error::msg)?;
    }
    Ok(JobTapTrained { vars, shape, logs })
}

#[cfg(test)]
#[path = "train_tests.rs"]
mod tests;
