//! Training the tuner: IQN learnt by Ape-X (the paper's "IQN+Ape-X", "DRL Training Setting"),
//! the actors running whole episodes of the jobs simulator on this process's threads, the
//! learner one round behind (the rounds of [`crate::train::apex`], shared with the streams
//! tuner). A seed gives one checkpoint whatever the thread count.

use super::episode::{self, Problem};
use crate::agent::{LearnSettings, Learner, Transition};
use crate::train::apex::{
    ActorJob, ActorNet, ActorOutput, ActorPool, ApexRound, RoundPlan, initial_priorities,
    parallel_round, run_rounds,
};
use anyhow::{Context, Result};
use candle_nn::VarMap;
use continuum_core::rng::{Purpose, stream_rng};
use continuum_infer::agent::{NetShape, argmax};
use continuum_infer::weights::Weights;
use continuum_jobs::SimSettings;
use rand::Rng;
use serde::Serialize;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Stream tag of the training episodes' seeds and exploration (`jobt`).
const TAG: u64 = 0x6a6f_6274;

/// One training episode, for the learning curve.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CurvePoint {
    /// Episode, from 0.
    pub episode: usize,
    /// The actor's ε.
    pub epsilon: f64,
    /// Mean reward per time-step (scaled as learnt).
    pub mean_reward: f64,
    /// Mean JTL of the jobs it completed, s.
    pub mean_jtl_s: f64,
    /// Jobs completed over jobs arrived.
    pub completed: f64,
    /// Mean loss of the learner's steps meanwhile.
    pub mean_loss: f64,
    /// Wall-clock seconds since training began.
    pub wall_s: f64,
}

/// What training gives.
pub struct Trained {
    /// The online network's variables.
    pub vars: VarMap,
    /// Its shape.
    pub shape: NetShape,
    /// Per episode.
    pub curve: Vec<CurvePoint>,
    /// Ape-X's rounds.
    pub rounds: Vec<ApexRound>,
}

/// The network shape of `p`'s tuner.
pub(crate) fn shape_of(p: &Problem) -> NetShape {
    let s = p.settings;
    NetShape {
        features: super::state::features(p.nodes.len(), s.waiting, s.running),
        history: s.history,
        conv_channels: s.conv_channels,
        conv_kernel: s.conv_kernel,
        hidden: s.hidden,
        actions: p.actions.len(),
        classes: 1,
    }
}

/// The seed of training episode `e` of a run from `seed` (a 64-bit draw: not one of the small
/// held-out seeds evaluation uses).
fn episode_seed(seed: u64, e: usize) -> u64 {
    stream_rng(seed, Purpose::Other, TAG, e as u64).random::<u64>()
}

/// The actors: rayon threads, each running one episode per job.
struct Actors<'a, 'b> {
    p: &'a Problem<'b>,
    shape: NetShape,
    seed: u64,
    /// Per episode, its mean JTL and completed share (what [`ActorOutput`] does not carry).
    extra: Arc<Mutex<Vec<(usize, f64, f64)>>>,
}

impl Actors<'_, '_> {
    fn epsilon(&self, actor: usize) -> f64 {
        let s = self.p.settings;
        if s.actors <= 1 {
            return s.epsilon;
        }
        let x = actor as f64 / (s.actors - 1) as f64;
        s.epsilon.powf(1.0 + x * s.epsilon_exponent)
    }

    fn run(&self, job: ActorJob, weights: &Weights) -> Result<ActorOutput> {
        let start = Instant::now();
        let s = self.p.settings;
        let net = ActorNet::new(self.shape, s.quantiles, weights)?;
        let seed = episode_seed(self.seed, job.episode);
        let sim = SimSettings {
            seed,
            duration_s: s.episode_s,
            drain_s: s.drain_s,
            window_s: s.interval_s,
            ..SimSettings::default()
        };
        let jobs = self.p.workload.sample_jobs(seed, s.episode_s);
        let epsilon = self.epsilon(job.actor);
        let mut rng = stream_rng(self.seed, Purpose::Other, TAG ^ 1, job.episode as u64);
        let n = self.p.actions.len();
        let ep = episode::run(self.p, &jobs, &sim, true, &mut |state| {
            Ok(if rng.random::<f64>() < epsilon {
                rng.random_range(0..n)
            } else {
                argmax(&net.values(state)?[0][0])
            })
        })?;
        let k = ep.steps.len();
        let transitions: Vec<Transition> = (0..k)
            .map(|i| {
                let st = &ep.steps[i];
                let next = ep.steps.get(i + 1).map_or(&ep.last_state, |x| &x.state);
                Transition::taken(
                    st.state.clone(),
                    vec![st.action as u32],
                    &[st.reward],
                    &[1.0],
                    n,
                    next.clone(),
                    i + 1 == k,
                )
            })
            .collect();
        let priorities = initial_priorities(&net, &transitions, s.gamma)?;
        let r = &ep.report;
        let completed = if r.jobs_arrived > 0 {
            r.jobs_completed as f64 / r.jobs_arrived as f64
        } else {
            1.0
        };
        self.extra
            .lock()
            .expect("extra lock")
            .push((job.episode, r.jtl.mean_s, completed));
        let mean_reward =
            ep.steps.iter().map(|x| f64::from(x.reward)).sum::<f64>() / k.max(1) as f64;
        Ok(ActorOutput {
            job,
            transitions,
            priorities,
            lambda: self.p.workload.mean_per_min(),
            seed,
            windows: k,
            end: "over".into(),
            success_ratio: completed,
            mean_reward,
            epsilon,
            sample_s: start.elapsed().as_secs_f64(),
        })
    }
}

impl ActorPool for Actors<'_, '_> {
    fn round(
        &mut self,
        jobs: &[ActorJob],
        weights: &Weights,
        learn: &mut (dyn FnMut() -> Result<()> + Send),
    ) -> Result<(Vec<ActorOutput>, f64)> {
        let this = &*self;
        parallel_round(jobs, &|j| this.run(j, weights), learn)
    }
}

/// Trains the tuner of `p` from `seed`; `progress` sees each episode as its round is learnt.
pub(crate) fn train(
    p: &Problem,
    seed: u64,
    progress: &mut dyn FnMut(&CurvePoint),
) -> Result<Trained> {
    let s = p.settings;
    s.check().map_err(anyhow::Error::msg)?;
    let shape = shape_of(p);
    let settings = LearnSettings {
        gamma: s.gamma,
        learning_rate: s.learning_rate,
        max_grad_norm: 10.0,
        target_update_interval: s.target_update,
        quantiles: s.quantiles,
    };
    let mut learner = Learner::new(shape, settings, seed).context("cannot build the network")?;
    let plan = RoundPlan {
        episodes: s.episodes,
        actors: s.actors,
        buffer_size: s.buffer_size,
        state_len: shape.features * shape.history,
        learning_starts: s.learning_starts,
        batch_size: s.batch_size,
        gradient_steps: (s.gradient_steps_per_window * 100.0).round() as usize,
        parallel_envs: 100,
        priority_exponent: s.priority_exponent,
        importance_exponent: s.importance_exponent,
    };
    let extra = Arc::new(Mutex::new(Vec::new()));
    let mut actors = Actors {
        p,
        shape,
        seed,
        extra: extra.clone(),
    };
    let start = Instant::now();
    let mut curve = Vec::new();
    let rounds = run_rounds(
        &mut actors,
        &plan,
        &mut learner,
        seed,
        &mut |outputs, loss, _| {
            let v = extra.lock().expect("extra lock");
            for o in outputs {
                let (jtl, completed) = v
                    .iter()
                    .find(|x| x.0 == o.job.episode)
                    .map_or((0.0, 0.0), |x| (x.1, x.2));
                let point = CurvePoint {
                    episode: o.job.episode,
                    epsilon: o.epsilon,
                    mean_reward: o.mean_reward,
                    mean_jtl_s: jtl,
                    completed,
                    mean_loss: loss,
                    wall_s: start.elapsed().as_secs_f64(),
                };
                progress(&point);
                curve.push(point);
            }
        },
    )?;
    Ok(Trained {
        vars: learner.online_vars().clone(),
        shape,
        curve,
        rounds,
    })
}
