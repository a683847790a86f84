//! The training episodes run in this process (no Ape-X): `parallel_envs` environments step one
//! window at a time in parallel, the actions of all of them from one forward pass; their
//! transitions feed the network (a replay buffer and gradient steps for Double DQN, the
//! policy-gradient learner's own batches otherwise), and a finished episode is logged and its
//! slot given a new one until the budget is spent. Merged in slot order, every draw from a
//! seeded stream: the same seed and thread count learn the same weights.

use super::{
    Budget, EpisodeEnd, EpisodeLog, EpisodeSpec, Learnt, MetaEnv, Progress, Setup, TrainEvent,
};
use crate::agent::{
    Batch, EpsilonSchedule, LearnSettings, Learner, PgLearner, QNet, ReplayBuffer, Transition,
};
use anyhow::{Context, Result};
use candle_core::{Device, Tensor};
use candle_nn::VarMap;
use continuum_core::policy::StreamClasses;
use continuum_core::rng::{Purpose, SimRng, stream_rng};
use continuum_infer::agent::{Algorithm, DqnConfig, Granularity, NetShape, StateEncoder, argmax};
use continuum_sim::Scenario;
use rand::Rng;
use rayon::prelude::*;
use std::sync::Arc;
use std::time::Instant;

/// One running environment and what its episode has earned so far.
struct Slot {
    env: MetaEnv,
    /// Sum of the values of the actions taken.
    rewards: f64,
    /// Transitions that carried a value.
    transitions: usize,
    /// Sum of the losses of the gradient steps taken while it ran.
    losses: f64,
    loss_steps: usize,
}

impl Slot {
    /// The log line of this finished episode, the `episode`-th, under `epsilon`.
    fn log(&self, cfg: &DqnConfig, episode: usize, epsilon: f64, start: Instant) -> EpisodeLog {
        EpisodeLog {
            episode,
            lambda: self.env.spec.mean_lambda(cfg.horizon_s),
            seed: self.env.spec.seed,
            windows: self.env.sim().now_ms().div_euclid(cfg.window_s * 1000.0) as usize,
            end: format!("{:?}", self.env.end()).to_lowercase(),
            mean_reward: if self.transitions == 0 {
                0.0
            } else {
                self.rewards / self.transitions as f64
            },
            success_ratio: self.env.sim().metrics().sum(|_, _, _| true).success_ratio(),
            epsilon,
            mean_loss: if self.loss_steps == 0 {
                0.0
            } else {
                self.losses / self.loss_steps as f64
            },
            wall_s: start.elapsed().as_secs_f64(),
        }
    }
}

/// The network being learnt and how: Double DQN with its replay buffer, or a policy gradient.
enum Learning {
    Dqn(Box<Learner>, ReplayBuffer),
    Pg(PgLearner),
}

impl Learning {
    /// The learner `cfg`'s algorithm asks for, a network of `shape` drawn from `seed`.
    fn new(
        cfg: &DqnConfig,
        shape: NetShape,
        settings: LearnSettings,
        state_len: usize,
        seed: u64,
    ) -> Result<Self> {
        Ok(match cfg.algorithm {
            Algorithm::Dqn | Algorithm::Iqn => Learning::Dqn(
                Box::new(Learner::new(shape, settings, seed).context("cannot build the network")?),
                ReplayBuffer::new(cfg.buffer_size, state_len, shape.classes, shape.actions),
            ),
            algorithm => Learning::Pg(
                PgLearner::new(
                    shape,
                    algorithm,
                    cfg.learning_rate,
                    cfg.entropy,
                    cfg.max_grad_norm,
                    cfg.batch_size,
                    seed,
                )
                .context("cannot build the network")?,
            ),
        })
    }

    /// Starts from the weights `w` (the target network too).
    fn init_from(&mut self, w: &VarMap) -> Result<()> {
        crate::agent::copy_weights(w, self.vars()).context("--init weights")?;
        if let Learning::Dqn(learner, _) = self {
            learner.sync_target().context("--init weights")?;
        }
        Ok(())
    }

    /// The network that acts (the online one).
    fn net(&self) -> &QNet {
        match self {
            Learning::Dqn(l, _) => l.online(),
            Learning::Pg(p) => p.net(),
        }
    }

    /// The acting network's variables.
    fn vars(&self) -> &VarMap {
        match self {
            Learning::Dqn(l, _) => l.online_vars(),
            Learning::Pg(p) => p.vars(),
        }
    }

    /// Takes in transition `t`: into the replay buffer, or into the policy gradient's batch
    /// (whose step's loss, when it takes one, goes to `losses`).
    fn push(&mut self, t: &Transition, losses: &mut Vec<f64>) -> Result<()> {
        match self {
            Learning::Dqn(_, replay) => {
                replay.push(t);
            }
            Learning::Pg(pg) => {
                if let Some(loss) = pg.push(t).context("policy-gradient step")? {
                    losses.push(f64::from(loss));
                }
            }
        }
        Ok(())
    }

    /// Double DQN's `gradient_steps` on batches from the replay buffer (drawn with `rng`), once
    /// it holds enough transitions; their losses go to `losses`. Nothing for a policy gradient.
    fn gradient_steps(
        &mut self,
        cfg: &DqnConfig,
        rng: &mut SimRng,
        batch: &mut Batch,
        losses: &mut Vec<f64>,
    ) -> Result<()> {
        if let Learning::Dqn(learner, replay) = self
            && replay.len() >= cfg.learning_starts.max(cfg.batch_size)
        {
            for _ in 0..cfg.gradient_steps {
                replay.sample(cfg.batch_size, rng, batch);
                losses.push(f64::from(
                    learner.train_step(batch).context("gradient step")?,
                ));
            }
        }
        Ok(())
    }

    /// The acting network's variables, the learner done.
    fn into_vars(self) -> VarMap {
        match self {
            Learning::Dqn(l, _) => l.online_vars().clone(),
            Learning::Pg(p) => p.vars().clone(),
        }
    }
}

/// The episodes of one training: the learner, the environments running, the log.
struct Episodes<'a> {
    scenario: &'a Scenario,
    cfg: &'a DqnConfig,
    /// `cfg`, shared with every environment.
    cfg_arc: Arc<DqnConfig>,
    classes: StreamClasses,
    encoder: StateEncoder,
    shape: NetShape,
    budget: Budget,
    learning: Learning,
    /// Draws the episodes and the replay batches.
    rng: SimRng,
    eps: EpsilonSchedule,
    /// The environments, `None` once a slot's episode ended and the budget is spent.
    slots: Vec<Option<Slot>>,
    /// Episodes started.
    started: usize,
    logs: Vec<EpisodeLog>,
    /// Transitions taken in so far (ε's clock).
    env_steps: u64,
    batch: Batch,
    /// The states of every running environment (reused).
    states: Vec<f32>,
    start: Instant,
    progress: Progress<'a>,
}

impl<'a> Episodes<'a> {
    /// The learner of `setup` (from `init` or drawn from `seed`), ε's schedule over the
    /// budget's transitions, and the first `parallel_envs` environments.
    fn new(
        scenario: &'a Scenario,
        cfg: &'a DqnConfig,
        setup: Setup,
        seed: u64,
        init: Option<&VarMap>,
        start: Instant,
        progress: Progress<'a>,
    ) -> Result<Self> {
        let Setup {
            classes,
            encoder,
            shape,
            settings,
            budget,
        } = setup;
        let mut learning = Learning::new(cfg, shape, settings, encoder.state_len(), seed)?;
        if let Some(w) = init {
            learning.init_from(w)?;
        }
        let eps = epsilon_schedule(cfg, &encoder, &budget);
        let mut episodes = Self {
            scenario,
            cfg,
            cfg_arc: Arc::new(cfg.clone()),
            classes,
            encoder,
            shape,
            budget,
            learning,
            rng: stream_rng(seed, Purpose::Other, 0x7472_6169, 0),
            eps,
            slots: Vec::new(),
            started: 0,
            logs: Vec::new(),
            env_steps: 0,
            batch: Batch::default(),
            states: Vec::new(),
            start,
            progress,
        };
        while episodes.started < episodes.budget.episodes
            && episodes.slots.len() < cfg.parallel_envs
        {
            let slot = episodes.next_slot();
            episodes.slots.push(Some(slot));
        }
        Ok(episodes)
    }

    /// A new episode drawn from `cfg` (counted as started).
    fn next_slot(&mut self) -> Slot {
        let spec = EpisodeSpec::draw(self.cfg, self.cfg.horizon_s, &mut self.rng);
        self.started += 1;
        Slot {
            env: MetaEnv::new(self.scenario, self.cfg_arc.clone(), &self.classes, spec),
            rewards: 0.0,
            transitions: 0,
            losses: 0.0,
            loss_steps: 0,
        }
    }

    /// Runs every episode of the budget.
    fn run(mut self) -> Result<Learnt> {
        let mut reported = 0;
        while self.slots.iter().any(Option::is_some) {
            let epsilon = match self.learning {
                Learning::Dqn(..) => self.eps.at(self.env_steps),
                Learning::Pg(_) => 0.0,
            };
            let actions = self.actions(epsilon)?;
            self.step(&actions)?;
            self.finish_episodes(epsilon);
            if self.logs.len() > reported {
                reported = self.logs.len();
                (self.progress)(TrainEvent::Learnt {
                    episodes: reported,
                    vars: self.learning.vars(),
                });
            }
        }
        Ok(Learnt {
            vars: self.learning.into_vars(),
            shape: self.shape,
            classes: self.classes,
            logs: self.logs,
            budget: self.budget,
            apex_rounds: Vec::new(),
        })
    }

    /// Actions for every scheduler and class of every running environment, from one forward
    /// pass: sampled from a policy gradient's distribution, ε-greedy for DQN (each
    /// environment's own stream draws them).
    fn actions(&mut self, epsilon: f64) -> Result<Vec<Vec<Vec<u32>>>> {
        self.states.clear();
        for slot in self.slots.iter().flatten() {
            for s in slot.env.states() {
                self.states.extend_from_slice(s);
            }
        }
        let shape = self.shape;
        let rows = self.states.len() / self.encoder.state_len();
        let q = Tensor::from_slice(
            &self.states,
            (rows, shape.features, shape.history),
            &Device::Cpu,
        )
        .and_then(|x| self.learning.net().forward(&x))
        .and_then(|q| q.to_vec3::<f32>())
        .context("forward pass")?;
        let sampled = matches!(self.learning, Learning::Pg(_));
        let mut row = 0;
        let mut actions: Vec<Vec<Vec<u32>>> = Vec::with_capacity(self.slots.len());
        for slot in self.slots.iter_mut().flatten() {
            let n = slot.env.schedulers();
            let env_rng = slot.env.rng();
            actions.push(
                (0..n)
                    .map(|i| {
                        q[row + i]
                            .iter()
                            .map(|qc| {
                                if sampled {
                                    PgLearner::sample(qc, env_rng)
                                } else if env_rng.random::<f64>() < epsilon {
                                    env_rng.random_range(0..shape.actions) as u32
                                } else {
                                    argmax(qc) as u32
                                }
                            })
                            .collect()
                    })
                    .collect(),
            );
            row += n;
        }
        Ok(actions)
    }

    /// Steps every running environment one window under `actions`, in parallel; takes in their
    /// transitions in slot order, then the gradient steps; every loss of the round is credited
    /// to every running episode.
    fn step(&mut self, actions: &[Vec<Vec<u32>>]) -> Result<()> {
        let mut running: Vec<&mut Slot> = self.slots.iter_mut().flatten().collect();
        let produced: Vec<Vec<Transition>> = running
            .par_iter_mut()
            .zip(actions.par_iter())
            .map(|(slot, a)| slot.env.step(a))
            .collect();
        let mut round_losses = Vec::new();
        for (slot, ts) in running.iter_mut().zip(&produced) {
            for t in ts {
                self.learning.push(t, &mut round_losses)?;
                if let Some(v) = t.taken_value() {
                    slot.rewards += f64::from(v);
                    slot.transitions += 1;
                }
            }
            self.env_steps += ts.len() as u64;
        }
        self.learning.gradient_steps(
            self.cfg,
            &mut self.rng,
            &mut self.batch,
            &mut round_losses,
        )?;
        for loss in round_losses {
            for slot in running.iter_mut() {
                slot.losses += loss;
                slot.loss_steps += 1;
            }
        }
        Ok(())
    }

    /// Logs the episodes that ended (reported under `epsilon`) and starts new ones in their
    /// slots while the budget lasts.
    fn finish_episodes(&mut self, epsilon: f64) {
        for k in 0..self.slots.len() {
            let finished = self.slots[k]
                .as_ref()
                .is_some_and(|s| s.env.end() != EpisodeEnd::Running);
            if !finished {
                continue;
            }
            let s = self.slots[k].take().expect("checked");
            let log = s.log(self.cfg, self.logs.len(), epsilon, self.start);
            (self.progress)(TrainEvent::Episode(&log, self.budget.episodes));
            self.logs.push(log);
            if self.started < self.budget.episodes {
                self.slots[k] = Some(self.next_slot());
            }
        }
    }
}

/// ε's decay over `eps_fraction` of the transitions the budget's episodes will produce (one
/// per agent, per window after the warm-up).
fn epsilon_schedule(cfg: &DqnConfig, encoder: &StateEncoder, budget: &Budget) -> EpsilonSchedule {
    // Agents: one per scheduler, or one for the system.
    let schedulers = if cfg.granularity == Granularity::System {
        1
    } else {
        encoder.schedulers()
    };
    let windows = (cfg.horizon_s / cfg.window_s).floor() as usize;
    let total_transitions =
        (budget.episodes * windows.saturating_sub(cfg.warmup_windows) * schedulers) as u64;
    EpsilonSchedule {
        start: cfg.eps_start,
        end: cfg.eps_end,
        decay_steps: (total_transitions as f64 * cfg.eps_fraction) as u64,
    }
}

/// The training episodes of `setup` in this process, from `init` or weights drawn from `seed`;
/// `start` is when training started (the logs' wall clock).
pub(super) fn learn(
    scenario: &Scenario,
    cfg: &DqnConfig,
    setup: Setup,
    seed: u64,
    init: Option<&VarMap>,
    start: Instant,
    progress: Progress,
) -> Result<Learnt> {
    Episodes::new(scenario, cfg, setup, seed, init, start, progress)?.run()
}
