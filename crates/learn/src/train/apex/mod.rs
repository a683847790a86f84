//! Ape-X (Horgan et al., ICLR 2018; EdgeTuner's training, docs/model.md §9.5): several actors,
//! each with its own fixed ε, run whole episodes with a copy of the learner's weights and send
//! their transitions with initial priorities; one learner keeps them in a prioritised replay and
//! takes gradient steps on prioritised draws, weighted by importance.
//!
//! Rounds make it reproducible: round r's actors act with the weights the learner had before it
//! learnt from round r − 1's episodes (one round stale, as Ape-X's actors are behind the
//! learner), and they run while the learner learns from round r − 1; the learner takes round r's
//! outputs in actor order. So a seed gives one checkpoint wherever the actors run (threads of
//! this process or Ray tasks, [`ActorPool`]) and whatever their timing.

mod actor;
mod codec;

pub use actor::{ActorJob, ActorOutput};
pub(crate) use actor::{ActorNet, initial_priorities};
pub use codec::{decode, encode};

use super::{EpisodeLog, Learnt, Progress, Setup, TrainEvent};
use crate::agent::{Batch, Learner, PrioritisedReplay, weights_of};
use actor::run_actor;
use anyhow::{Context, Result};
use candle_nn::VarMap;
use continuum_core::policy::StreamClasses;
use continuum_core::rng::{Purpose, SimRng, stream_rng};
use continuum_infer::agent::{ApexConfig, DqnConfig, NetShape};
use continuum_infer::weights::Weights;
use continuum_sim::Scenario;
use rayon::prelude::*;
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// Where a round's actors run.
pub trait ActorPool {
    /// Runs `jobs` with `weights` while `learn` runs on this thread; returns the actors'
    /// outputs in the order of `jobs`, and the wall-clock seconds until the last of them was in
    /// hand (the round's sampling time).
    fn round(
        &mut self,
        jobs: &[ActorJob],
        weights: &Weights,
        learn: &mut (dyn FnMut() -> Result<()> + Send),
    ) -> Result<(Vec<ActorOutput>, f64)>;
}

/// What every actor of a run shares.
pub struct ActorContext<'a> {
    scenario: &'a Scenario,
    cfg: Arc<DqnConfig>,
    apex: ApexConfig,
    classes: StreamClasses,
    shape: NetShape,
    quantiles: usize,
    gamma: f64,
    seed: u64,
}

impl<'a> ActorContext<'a> {
    /// The actors of training `cfg` (with an `apex` block) on `scenario` from `seed`.
    pub fn new(scenario: &'a Scenario, cfg: &DqnConfig, seed: u64) -> Result<Self> {
        Self::of(scenario, cfg, &Setup::new(scenario, cfg)?, seed)
    }

    /// [`Self::new`] from a training's `setup` already made.
    fn of(scenario: &'a Scenario, cfg: &DqnConfig, setup: &Setup, seed: u64) -> Result<Self> {
        let apex = cfg.apex.context("the config has no `apex:` block")?;
        Ok(Self {
            scenario,
            cfg: Arc::new(cfg.clone()),
            apex,
            classes: setup.classes.clone(),
            shape: setup.shape,
            quantiles: setup.settings.quantiles,
            gamma: setup.settings.gamma,
            seed,
        })
    }

    /// Runs `job` with `weights` (the learner's, as [`weights_of`] gives them).
    pub fn run(&self, job: ActorJob, weights: &Weights) -> Result<ActorOutput> {
        let net = ActorNet::new(self.shape, self.quantiles, weights)?;
        run_actor(
            self.scenario,
            &self.cfg,
            &self.classes,
            &net,
            self.seed,
            job,
            self.apex.actor_epsilon(job.actor),
            self.gamma,
        )
    }
}

/// Actors on the threads of this process (rayon), beside the learner.
pub struct ThreadActors<'a, 'b>(pub &'b ActorContext<'a>);

impl ActorPool for ThreadActors<'_, '_> {
    fn round(
        &mut self,
        jobs: &[ActorJob],
        weights: &Weights,
        learn: &mut (dyn FnMut() -> Result<()> + Send),
    ) -> Result<(Vec<ActorOutput>, f64)> {
        let ctx = self.0;
        parallel_round(jobs, &|j| ctx.run(j, weights), learn)
    }
}

/// A round on this process's threads: `run` on every job (rayon) beside `learn`; the outputs in
/// job order and the wall-clock seconds until the last was in hand.
pub(crate) fn parallel_round(
    jobs: &[ActorJob],
    run: &(dyn Fn(ActorJob) -> Result<ActorOutput> + Sync),
    learn: &mut (dyn FnMut() -> Result<()> + Send),
) -> Result<(Vec<ActorOutput>, f64)> {
    let t = Instant::now();
    let (outputs, learnt) = rayon::join(
        || {
            let o: Result<Vec<_>> = jobs.par_iter().map(|&j| run(j)).collect();
            (o, t.elapsed().as_secs_f64())
        },
        learn,
    );
    learnt?;
    Ok((outputs.0?, outputs.1))
}

/// One round of an Ape-X run, for the scaling figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ApexRound {
    /// Round, from 0.
    pub round: usize,
    /// Episodes its actors ran.
    pub episodes: usize,
    /// Transitions they sent.
    pub transitions: usize,
    /// Gradient steps the learner took meanwhile (on the rounds before).
    pub gradient_steps: usize,
    /// Seconds the actors spent, summed over them.
    pub actor_s: f64,
    /// Seconds the slowest actor spent.
    pub slowest_actor_s: f64,
    /// Wall-clock seconds until the round's last actor output was in hand (its sampling time;
    /// through `--apex-learner`, until the driver's answer, which the learner reads once its own
    /// steps are done).
    pub sampling_s: f64,
    /// Seconds the learner spent on its gradient steps.
    pub learn_s: f64,
    /// Wall-clock seconds of the round (actors and learner side by side).
    pub round_s: f64,
    /// Wall-clock seconds since training started, at its end.
    pub wall_s: f64,
}

/// The episodes of round `r` of `n` actors, within `episodes` in all.
fn jobs(r: usize, n: usize, episodes: usize) -> Vec<ActorJob> {
    (r * n..((r + 1) * n).min(episodes))
        .map(|episode| ActorJob {
            episode,
            actor: episode - r * n,
        })
        .collect()
}

/// Ape-X training: the episodes of `setup`'s budget, `apex.actors` per round on `pool` (this
/// process's threads when `None`), learnt from by one learner.
pub(super) fn learn(
    scenario: &Scenario,
    cfg: &DqnConfig,
    setup: Setup,
    seed: u64,
    init: Option<&VarMap>,
    progress: Progress,
    pool: Option<&mut dyn ActorPool>,
) -> Result<Learnt> {
    let apex = cfg.apex.context("the config has no `apex:` block")?;
    let start = Instant::now();
    let ctx = ActorContext::of(scenario, cfg, &setup, seed)?;
    let Setup {
        classes,
        encoder,
        shape,
        settings,
        budget,
    } = setup;
    let mut threads = ThreadActors(&ctx);
    let pool: &mut dyn ActorPool = match pool {
        Some(p) => p,
        None => &mut threads,
    };
    let mut learner = Learner::new(shape, settings, seed).context("cannot build the network")?;
    if let Some(w) = init {
        crate::agent::copy_weights(w, learner.online_vars()).context("--init weights")?;
        learner.sync_target().context("--init weights")?;
    }
    let plan = RoundPlan {
        episodes: budget.episodes,
        actors: apex.actors,
        buffer_size: cfg.buffer_size,
        state_len: encoder.state_len(),
        learning_starts: cfg.learning_starts,
        batch_size: cfg.batch_size,
        gradient_steps: cfg.gradient_steps,
        parallel_envs: cfg.parallel_envs,
        priority_exponent: apex.priority_exponent,
        importance_exponent: apex.importance_exponent,
    };
    let mut logs = Vec::new();
    let episodes = budget.episodes;
    let apex_rounds = run_rounds(
        pool,
        &plan,
        &mut learner,
        seed,
        &mut |outputs, mean_loss, l| {
            for o in outputs {
                let log = EpisodeLog {
                    episode: logs.len(),
                    lambda: o.lambda,
                    seed: o.seed,
                    windows: o.windows,
                    end: o.end.clone(),
                    mean_reward: o.mean_reward,
                    success_ratio: o.success_ratio,
                    epsilon: o.epsilon,
                    mean_loss,
                    wall_s: start.elapsed().as_secs_f64(),
                };
                progress(TrainEvent::Episode(&log, episodes));
                logs.push(log);
            }
            progress(TrainEvent::Learnt {
                episodes: logs.len(),
                vars: l.online_vars(),
            });
        },
    )?;
    Ok(Learnt {
        vars: learner.online_vars().clone(),
        shape,
        classes,
        logs,
        budget,
        apex_rounds,
    })
}

/// The sizes of an Ape-X run, whatever its environment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RoundPlan {
    /// Episodes in all.
    pub(crate) episodes: usize,
    /// Actors per round.
    pub(crate) actors: usize,
    /// Replay capacity, transitions.
    pub(crate) buffer_size: usize,
    /// Floats per state.
    pub(crate) state_len: usize,
    /// Transitions in the replay before the first gradient step.
    pub(crate) learning_starts: usize,
    /// Transitions per gradient step.
    pub(crate) batch_size: usize,
    /// Gradient steps per `parallel_envs` actor windows (the replay ratio).
    pub(crate) gradient_steps: usize,
    /// See `gradient_steps`.
    pub(crate) parallel_envs: usize,
    /// Prioritised replay's α.
    pub(crate) priority_exponent: f64,
    /// Prioritised replay's β.
    pub(crate) importance_exponent: f64,
}

/// The rounds of an Ape-X run: `plan.actors` episodes per round on `pool`, learnt from by
/// `learner` one round behind; `on_round` sees each round's actor outputs (in actor order),
/// the mean loss of the gradient steps taken meanwhile and the learner after them.
pub(crate) fn run_rounds(
    pool: &mut dyn ActorPool,
    plan: &RoundPlan,
    learner: &mut Learner,
    seed: u64,
    on_round: &mut dyn FnMut(&[ActorOutput], f64, &Learner),
) -> Result<Vec<ApexRound>> {
    let start = Instant::now();
    let shape = learner.online().shape();
    let mut replay = PrioritisedReplay::new(
        plan.buffer_size,
        plan.state_len,
        shape.classes,
        shape.actions,
        plan.priority_exponent,
        plan.importance_exponent,
    );
    let mut rng = stream_rng(seed, Purpose::Other, 0x7472_6169, 0);
    let mut batch = Batch::default();
    let (episodes, n) = (plan.episodes, plan.actors);
    let rounds = episodes.div_ceil(n);
    let mut log_rounds = Vec::new();
    let snapshot = |l: &Learner| weights_of(l.online_vars()).context("the learner's weights");
    let t0 = Instant::now();
    let (mut outputs, sampling_s) =
        pool.round(&jobs(0, n, episodes), &snapshot(learner)?, &mut || Ok(()))?;
    log_rounds.push(record(0, &outputs, 0, 0.0, sampling_s, t0, start));
    // Gradient steps owed, in units of 1 / parallel_envs: `gradient_steps` per `parallel_envs`
    // actor windows, the one-process loop's replay ratio.
    let mut owed = 0usize;
    for r in 0..rounds {
        for o in &outputs {
            for (t, &p) in o.transitions.iter().zip(&o.priorities) {
                replay.push(t, p);
            }
            owed += plan.gradient_steps * o.windows;
        }
        let steps = owed / plan.parallel_envs;
        owed %= plan.parallel_envs;
        let weights = snapshot(learner)?;
        let ready = replay.len() >= plan.learning_starts.max(plan.batch_size);
        let mut losses = Vec::new();
        let mut learn_s = 0.0;
        let mut learn = || -> Result<()> {
            let t = Instant::now();
            if ready {
                losses = learn_steps(
                    learner,
                    &mut replay,
                    plan.batch_size,
                    steps,
                    &mut rng,
                    &mut batch,
                )?;
            }
            learn_s = t.elapsed().as_secs_f64();
            Ok(())
        };
        let t0 = Instant::now();
        let (next, sampling_s) = if r + 1 < rounds {
            pool.round(&jobs(r + 1, n, episodes), &weights, &mut learn)?
        } else {
            learn()?;
            (Vec::new(), 0.0)
        };
        let mean_loss = if losses.is_empty() {
            0.0
        } else {
            losses.iter().sum::<f64>() / losses.len() as f64
        };
        on_round(&outputs, mean_loss, learner);
        let mut rec = record(r + 1, &next, losses.len(), learn_s, sampling_s, t0, start);
        rec.episodes = next.len();
        log_rounds.push(rec);
        outputs = next;
    }
    Ok(log_rounds)
}

/// The learner's part of a round: `steps` gradient steps on prioritised draws of
/// `batch_size` from `replay`, each drawn batch's priorities then set to the learner's new
/// errors on it; the losses, in order.
fn learn_steps(
    learner: &mut Learner,
    replay: &mut PrioritisedReplay,
    batch_size: usize,
    steps: usize,
    rng: &mut SimRng,
    batch: &mut Batch,
) -> Result<Vec<f64>> {
    let mut losses = Vec::with_capacity(steps);
    for _ in 0..steps {
        replay.sample(batch_size, rng, batch);
        let (loss, p) = learner
            .train_step_prioritised(batch)
            .context("gradient step")?;
        replay.update(&p);
        losses.push(f64::from(loss));
    }
    Ok(losses)
}

fn record(
    round: usize,
    outputs: &[ActorOutput],
    gradient_steps: usize,
    learn_s: f64,
    sampling_s: f64,
    t0: Instant,
    start: Instant,
) -> ApexRound {
    ApexRound {
        round,
        episodes: outputs.len(),
        transitions: outputs.iter().map(|o| o.transitions.len()).sum(),
        gradient_steps,
        actor_s: outputs.iter().map(|o| o.sample_s).fold(0.0, |a, b| a + b),
        slowest_actor_s: outputs.iter().map(|o| o.sample_s).fold(0.0, f64::max),
        sampling_s,
        learn_s,
        round_s: t0.elapsed().as_secs_f64(),
        wall_s: start.elapsed().as_secs_f64(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{LearnSettings, Transition};
    use rand::Rng;

    /// A contextual bandit: two contexts, three actions, reward 1 for action `x` in context
    /// `x`, else 0; one class, γ = 0.
    fn bandit() -> (Learner, PrioritisedReplay, SimRng) {
        let shape = NetShape {
            features: 2,
            history: 1,
            conv_channels: 8,
            conv_kernel: 1,
            hidden: 16,
            actions: 3,
            classes: 1,
        };
        let settings = LearnSettings {
            gamma: 0.0,
            learning_rate: 1e-2,
            max_grad_norm: 10.0,
            target_update_interval: 1_000_000,
            quantiles: 0,
        };
        let learner = Learner::new(shape, settings, 21).unwrap();
        let mut replay = PrioritisedReplay::new(600, 2, 1, 3, 0.6, 0.4);
        let mut rng = stream_rng(21, Purpose::Other, 1, 0);
        for _ in 0..600 {
            let x = rng.random_range(0..2usize);
            let a = rng.random_range(0..3u32);
            let r = if a as usize == x { 1.0 } else { 0.0 };
            let mut s = vec![0.0f32; 2];
            s[x] = 1.0;
            // Every transition enters with the same priority: the draws start uniform.
            replay.push(
                &Transition::taken(s.clone(), vec![a], &[r], &[1.0], 3, s, true),
                1.0,
            );
        }
        (learner, replay, rng)
    }

    /// Greedy action per context.
    fn greedy(l: &Learner) -> Vec<usize> {
        let x = candle_core::Tensor::from_slice(
            &[1.0f32, 0.0, 0.0, 1.0],
            (2, 2, 1),
            &candle_core::Device::Cpu,
        )
        .unwrap();
        let q = l.online().forward(&x).unwrap().to_vec3::<f32>().unwrap();
        q.iter()
            .map(|per_class| continuum_infer::agent::argmax(&per_class[0]))
            .collect()
    }

    #[test]
    fn the_learner_steps_toward_the_best_action_and_reprioritises_what_it_drew() {
        let (mut learner, mut replay, mut rng) = bandit();
        let mut batch = Batch::default();
        // Before: uniform priorities give every draw the same importance weight.
        replay.sample(32, &mut rng, &mut batch);
        assert!(batch.importance.iter().all(|&w| w == 1.0));
        let losses = learn_steps(&mut learner, &mut replay, 32, 300, &mut rng, &mut batch).unwrap();
        assert_eq!(losses.len(), 300);
        // The loss falls and the greedy action is each context's best.
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        assert!(
            mean(&losses[270..]) < 0.5 * mean(&losses[..30]),
            "{} → {}",
            mean(&losses[..30]),
            mean(&losses[270..])
        );
        assert_eq!(greedy(&learner), vec![0, 1]);
        // After: the drawn transitions carry their new errors, so the draws' weights differ.
        replay.sample(32, &mut rng, &mut batch);
        let (lo, hi) = batch
            .importance
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(lo, hi), &w| {
                (lo.min(w), hi.max(w))
            });
        assert!(
            hi / lo > 1.5,
            "importance weights {lo}…{hi}: priorities never updated"
        );
    }

    #[test]
    fn no_steps_leave_the_network_and_the_priorities_as_they_were() {
        let (mut learner, mut replay, mut rng) = bandit();
        let before = weights_of(learner.online_vars()).unwrap();
        let mut batch = Batch::default();
        assert!(
            learn_steps(&mut learner, &mut replay, 32, 0, &mut rng, &mut batch)
                .unwrap()
                .is_empty()
        );
        assert_eq!(weights_of(learner.online_vars()).unwrap(), before);
        replay.sample(32, &mut rng, &mut batch);
        assert!(batch.importance.iter().all(|&w| w == 1.0));
    }
}
