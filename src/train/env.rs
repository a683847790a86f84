//! One training episode: the simulator seen as a multi-agent environment. At every window
//! boundary each scheduler's agent observes its state and picks an action (a dispatch policy)
//! for its new bindings in the window. A window's reward is complete only once its queries
//! have been answered, so each transition is emitted one window later, when its reward is final.

use crate::agent::{DqnConfig, RewardScope, RewardSpec, StateEncoder};
use crate::metrics::Counts;
use crate::policy::Policy;
use crate::rng::{Purpose, SimRng, stream_rng};
use crate::sim::{Scenario, SimConfig, Simulation};
use rand::Rng;
use std::collections::VecDeque;
use std::sync::Arc;

/// A (state, action, reward, next state, done) tuple of one scheduler.
#[derive(Debug, Clone, PartialEq)]
pub struct Transition {
    /// State the action was chosen in.
    pub state: Vec<f32>,
    /// Action index.
    pub action: u32,
    /// Reward of the window.
    pub reward: f32,
    /// State at the next boundary.
    pub next_state: Vec<f32>,
    /// Whether the episode ended (θ) with this window: no bootstrap.
    pub done: bool,
}

#[derive(Debug, Clone)]
struct Pending {
    state: Vec<f32>,
    action: u32,
    window: usize,
}

/// How an episode ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EpisodeEnd {
    /// Still running.
    Running,
    /// Reached the horizon H.
    Horizon,
    /// A window's success ratio fell below θ.
    Theta,
}

/// One episode in progress.
pub struct MetaEnv {
    sim: Simulation,
    encoder: StateEncoder,
    actions: Vec<&'static dyn Policy>,
    reward: RewardSpec,
    scope: RewardScope,
    lag: usize,
    theta: f64,
    warmup: usize,
    window_ms: f64,
    windows: usize,
    window: usize,
    pending: Vec<VecDeque<Pending>>,
    states: Vec<Vec<f32>>,
    rng: SimRng,
    end: EpisodeEnd,
    /// Client rate of this episode, clients/min/antenna.
    pub lambda: f64,
    /// Seed of this episode.
    pub seed: u64,
}

impl MetaEnv {
    /// A new episode on `scenario` at client rate `lambda` with `seed`.
    pub fn new(scenario: &Scenario, cfg: &DqnConfig, lambda: f64, seed: u64) -> Self {
        let sc = Arc::new(scenario.clone().with_lambda(lambda));
        let actions: Vec<&'static dyn Policy> = cfg
            .actions
            .iter()
            .map(|a| crate::policy::by_name(a).expect("validated action"))
            .collect();
        let sim_cfg = SimConfig {
            duration_s: cfg.horizon_s,
            window_s: cfg.window_s,
            seed,
            ..SimConfig::default()
        };
        let mut sim = Simulation::new(sc.clone(), sim_cfg, actions[0]);
        sim.observe(cfg.buckets.clone());
        let encoder = StateEncoder::new(&sc.topology, &sc.fleet, cfg);
        let n = encoder.schedulers();
        let states = (0..n).map(|s| encoder.state(s)).collect();
        Self {
            sim,
            encoder,
            actions,
            reward: cfg.reward,
            scope: cfg.reward_scope,
            lag: match cfg.reward_scope {
                RewardScope::BoundStreams => 1 + cfg.reward_windows,
                _ => 1,
            },
            theta: cfg.theta,
            warmup: cfg.warmup_windows,
            window_ms: cfg.window_s * 1000.0,
            windows: (cfg.horizon_s / cfg.window_s).floor() as usize,
            window: 0,
            pending: vec![VecDeque::new(); n],
            states,
            rng: stream_rng(seed, Purpose::Other, 0x656e76, 0),
            end: EpisodeEnd::Running,
            lambda,
            seed,
        }
    }

    /// Number of schedulers (agents).
    pub fn schedulers(&self) -> usize {
        self.states.len()
    }

    /// Every scheduler's current state.
    pub fn states(&self) -> &[Vec<f32>] {
        &self.states
    }

    /// The environment's own random stream (for ε-greedy draws).
    pub fn rng(&mut self) -> &mut SimRng {
        &mut self.rng
    }

    /// Whether the next window is a warm-up window (actions are drawn at random and no
    /// transition is recorded).
    pub fn warming_up(&self) -> bool {
        self.window < self.warmup
    }

    /// How the episode ended so far.
    pub fn end(&self) -> EpisodeEnd {
        self.end
    }

    /// The simulation (for final metrics).
    pub fn sim(&self) -> &Simulation {
        &self.sim
    }

    /// Reward of `counts` under the configured definition (a window with no query counts as
    /// fully successful).
    pub fn reward_of(spec: RewardSpec, c: &Counts) -> f32 {
        if c.offered == 0 {
            return match spec {
                RewardSpec::SuccessRatio => 1.0,
                RewardSpec::Linear { base, .. } => base as f32,
            };
        }
        let n = c.offered as f64;
        (match spec {
            RewardSpec::SuccessRatio => c.success as f64 / n,
            RewardSpec::Linear {
                base,
                failed,
                rejected,
            } => base + failed * c.failure as f64 / n + rejected * c.rejected as f64 / n,
        }) as f32
    }

    fn window_counts(&self, window: usize, s: Option<usize>) -> Counts {
        self.sim
            .metrics()
            .sum(|w, x, _| w == window && s.is_none_or(|s| s == x))
    }

    /// Runs the next window with `actions[s]` at scheduler `s` (during warm-up the actions are
    /// replaced by random ones) and returns the transitions whose rewards became final.
    pub fn step(&mut self, actions: &[u32]) -> Vec<Transition> {
        assert_eq!(
            self.end,
            EpisodeEnd::Running,
            "step after the end of the episode"
        );
        let warm = self.warming_up();
        for (s, &a) in actions.iter().enumerate() {
            let a = if warm {
                self.rng.random_range(0..self.actions.len()) as u32
            } else {
                a
            };
            self.sim.set_policy(s, self.actions[a as usize]);
            if !warm {
                self.pending[s].push_back(Pending {
                    state: self.states[s].clone(),
                    action: a,
                    window: self.window,
                });
            }
        }
        self.window += 1;
        self.sim.run_until(self.window as f64 * self.window_ms);
        let obs = self.sim.close_window().expect("observed run");
        self.encoder.push(&obs);
        for (s, st) in self.states.iter_mut().enumerate() {
            self.encoder.state_into(s, st);
        }
        let mut out = Vec::new();
        // The window before the one just run is complete now (its queries had a whole window
        // to be answered); check θ on it.
        if self.window >= 2 {
            let done_window = self.window - 2;
            if done_window >= self.warmup
                && self.window_counts(done_window, None).success_ratio() < self.theta
            {
                self.end = EpisodeEnd::Theta;
                self.emit(done_window, true, &mut out);
                return out;
            }
        }
        // A window's reward is final `lag` windows after it ends.
        if self.window > self.lag {
            self.emit(self.window - 1 - self.lag, false, &mut out);
        }
        if self.window >= self.windows {
            self.sim.finish();
            self.end = EpisodeEnd::Horizon;
            self.emit(self.window - 1, false, &mut out);
        }
        out
    }

    /// Emits every pending transition of a window ≤ `last`; the one of window `last` is
    /// terminal when `terminal`. Later pending entries are dropped when terminal.
    fn emit(&mut self, last: usize, terminal: bool, out: &mut Vec<Transition>) {
        for s in 0..self.pending.len() {
            while self.pending[s].front().is_some_and(|p| p.window <= last) {
                let p = self.pending[s].pop_front().expect("checked");
                let next_state = self.pending[s]
                    .front()
                    .map_or_else(|| self.states[s].clone(), |n| n.state.clone());
                let c = match self.scope {
                    RewardScope::Scheduler => self.window_counts(p.window, Some(s)),
                    RewardScope::System => self.window_counts(p.window, None),
                    RewardScope::BoundStreams => self.sim.bound_counts(p.window, s),
                };
                out.push(Transition {
                    state: p.state,
                    action: p.action,
                    reward: Self::reward_of(self.reward, &c),
                    next_state,
                    done: terminal && p.window == last,
                });
            }
            if terminal {
                self.pending[s].clear();
            }
        }
    }
}
