//! One training episode: the simulator seen as a multi-agent environment. At every window
//! boundary each scheduler's agent observes its state and picks one action (a configuration:
//! dispatch policy and mitigation) per stream class for its new bindings in the window.
//!
//! Credit (see [`Credit`]): with counterfactual credit, one class per window (in turn) gets the
//! value of every action from forks of the run ([`super::counterfactual`]) and its transitions
//! are ready at once; with temporal-difference credit, a window's reward is complete only once
//! its queries have been answered, so each transition is emitted `lag` windows later.

use super::counterfactual::{CfSettings, class_values};
use super::edgetuner_reward::{self, WindowEnd};
use crate::agent::Transition;
use crate::episode::EpisodeSpec;
use continuum_core::metrics::{Counts, LogHistogram, Objective};
use continuum_core::mitigation::Configuration;
use continuum_core::policy::StreamClasses;
use continuum_core::rng::{Purpose, SimRng, stream_rng};
use continuum_infer::agent::{
    CfApply, Credit, DqnConfig, Granularity, RewardScope, RewardSpec, StateEncoder,
};
use continuum_sim::{Scenario, Simulation};
use rand::Rng;
use std::collections::VecDeque;
use std::sync::Arc;

/// Time a counterfactual fork runs past its scoring horizon so its queries are answered, ms
/// (the longest deadline of the default workload is 1 s; assumption: twice that).
pub const CF_SETTLE_MS: f64 = 2000.0;

#[derive(Debug, Clone)]
struct Pending {
    state: Vec<f32>,
    actions: Vec<u32>,
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
    actions: Vec<Configuration>,
    /// Workload applications of each class.
    class_apps: Vec<Vec<usize>>,
    cfg: Arc<DqnConfig>,
    lag: usize,
    window_ms: f64,
    windows: usize,
    window: usize,
    pending: Vec<VecDeque<Pending>>,
    states: Vec<Vec<f32>>,
    rng: SimRng,
    end: EpisodeEnd,
    labelled: usize,
    /// Per scheduler and class, the moving average of past rewards (temporal-difference
    /// credit with `reward_baseline_rate` > 0).
    baseline: Vec<Vec<Option<f64>>>,
    /// Under EdgeTuner's reward: the simulation at each window's end so far (index w: the end
    /// of window w).
    ends: Vec<WindowEnd>,
    /// The episode's workload.
    pub spec: EpisodeSpec,
}

impl MetaEnv {
    /// A new episode on `scenario` with `spec`'s λ and seed, streams grouped by `classes`.
    pub fn new(
        scenario: &Scenario,
        cfg: Arc<DqnConfig>,
        classes: &StreamClasses,
        spec: EpisodeSpec,
    ) -> Self {
        let sc = Arc::new(spec.scenario(scenario));
        let actions = cfg.configurations();
        let sim_cfg = spec.sim_config(&cfg);
        let mut sim = Simulation::new(sc.clone(), sim_cfg, actions[0].policy);
        sim.set_classes(Arc::new(classes.clone()));
        sim.observe(cfg.buckets.clone());
        if cfg.reward_scope == RewardScope::BoundStreams {
            sim.count_by_binding();
        }
        let by_app = classes.for_apps(&sc.workload);
        let class_apps = (0..classes.len())
            .map(|c| {
                (0..by_app.len())
                    .filter(|&a| by_app[a] == Some(c as u16))
                    .collect()
            })
            .collect();
        let encoder = StateEncoder::new(&sc.topology, &sc.fleet, &cfg);
        // One agent per scheduler, or one for the system.
        let n = if cfg.granularity == Granularity::System {
            1
        } else {
            encoder.schedulers()
        };
        let mut states = vec![Vec::new(); n];
        Self::encode(&encoder, &cfg, &mut states);
        Self {
            sim,
            encoder,
            actions,
            class_apps,
            lag: match cfg.reward_scope {
                RewardScope::BoundStreams => 1 + cfg.reward_windows,
                _ => 1,
            },
            window_ms: cfg.window_s * 1000.0,
            windows: (cfg.horizon_s / cfg.window_s).floor() as usize,
            window: 0,
            pending: vec![VecDeque::new(); n],
            states,
            rng: stream_rng(spec.seed, Purpose::Other, 0x656e76, 0),
            end: EpisodeEnd::Running,
            labelled: 0,
            baseline: vec![vec![None; classes.len()]; n],
            ends: Vec::new(),
            spec,
            cfg,
        }
    }

    /// Every agent's state from `encoder`: each scheduler's, or (`granularity: system`) the
    /// system's.
    fn encode(encoder: &StateEncoder, cfg: &DqnConfig, states: &mut [Vec<f32>]) {
        if cfg.granularity == Granularity::System {
            encoder.system_state_into(&mut states[0], &mut Vec::new());
        } else {
            for (s, st) in states.iter_mut().enumerate() {
                encoder.state_into(s, st);
            }
        }
    }

    /// Number of agents: one per scheduler, or one for the system (`granularity: system`).
    pub fn schedulers(&self) -> usize {
        self.states.len()
    }

    /// Every agent's current state.
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
        self.window < self.cfg.warmup_windows
    }

    /// How the episode ended so far.
    pub fn end(&self) -> EpisodeEnd {
        self.end
    }

    /// The simulation (for final metrics).
    pub fn sim(&self) -> &Simulation {
        &self.sim
    }

    /// Whether the next window gets counterfactual values (which cost forks).
    pub fn labels_next(&self) -> bool {
        self.cfg.credit == Credit::Counterfactual
            && !self.warming_up()
            && self.window + self.cfg.cf_horizon_windows <= self.windows
    }

    /// Reward of `counts` under the configured definition (a window with no query counts as
    /// fully successful). Under a tail objective the success ratio is the objective's score,
    /// with the p99 of `latency` (the whole system's window; the config check asks for
    /// `reward_scope: system` then).
    pub fn reward_of(
        spec: RewardSpec,
        objective: Objective,
        c: &Counts,
        latency: &LogHistogram,
    ) -> f32 {
        if c.offered == 0 {
            return match spec {
                RewardSpec::SuccessRatio | RewardSpec::Edgetuner { .. } => 1.0,
                RewardSpec::Linear { base, .. } => base as f32,
            };
        }
        let n = c.offered as f64;
        (match spec {
            // EdgeTuner's reward is the system's window, computed apart (`edgetuner_reward`).
            RewardSpec::SuccessRatio | RewardSpec::Edgetuner { .. } => objective.score(c, latency),
            RewardSpec::Linear {
                base,
                failed,
                rejected,
            } => base + failed * c.failure as f64 / n + rejected * c.rejected as f64 / n,
        }) as f32
    }

    /// `reward_scale × (r − b)` for scheduler `s` and class `c`, `b` the moving average of its
    /// past rewards (none before the first, and without `reward_baseline_rate`); then updates
    /// the average.
    fn shaped(&mut self, s: usize, c: usize, r: f32) -> f32 {
        let (scale, rate) = (self.cfg.reward_scale, self.cfg.reward_baseline_rate);
        shape_reward(scale, rate, &mut self.baseline[s][c], f64::from(r)) as f32
    }

    fn window_counts(&self, window: usize, s: Option<usize>, apps: Option<&[usize]>) -> Counts {
        self.sim.metrics().sum(|w, x, a| {
            w == window && s.is_none_or(|s| s == x) && apps.is_none_or(|apps| apps.contains(&a))
        })
    }

    /// Runs the next window with `actions[s][c]` at scheduler `s` for class `c` (under
    /// `granularity: system`, `actions[0]` at every scheduler; during warm-up the actions are
    /// replaced by random ones) and returns the transitions whose values became final.
    pub fn step(&mut self, actions: &[Vec<u32>]) -> Vec<Transition> {
        assert_eq!(
            self.end,
            EpisodeEnd::Running,
            "step after the end of the episode"
        );
        let warm = self.warming_up();
        let n_actions = self.actions.len();
        let taken: Vec<Vec<u32>> = actions
            .iter()
            .map(|per_class| {
                per_class
                    .iter()
                    .map(|&a| {
                        if warm {
                            self.rng.random_range(0..n_actions) as u32
                        } else {
                            a
                        }
                    })
                    .collect()
            })
            .collect();
        let system = self.cfg.granularity == Granularity::System;
        for s in 0..self.encoder.schedulers() {
            let per_class = &taken[if system { 0 } else { s }];
            for (c, &a) in per_class.iter().enumerate() {
                self.sim
                    .set_class_configuration(s, c, &self.actions[a as usize]);
            }
        }
        let mut out = Vec::new();
        if self.labels_next() {
            self.counterfactual(&taken, &mut out);
        } else if !warm && self.cfg.credit == Credit::Td {
            for (s, a) in taken.iter().enumerate() {
                self.pending[s].push_back(Pending {
                    state: self.states[s].clone(),
                    actions: a.clone(),
                    window: self.window,
                });
            }
        }
        self.window += 1;
        self.sim.run_until(self.window as f64 * self.window_ms);
        let obs = self.sim.close_window().expect("observed run");
        self.encoder.push(&obs);
        Self::encode(&self.encoder, &self.cfg, &mut self.states);
        if matches!(self.cfg.reward, RewardSpec::Edgetuner { .. }) {
            self.ends.push(WindowEnd {
                ages: self.sim.task_ages(),
                flow: self.sim.task_flow(),
            });
        }
        // The window before the one just run is complete now (its queries had a whole window
        // to be answered); check θ on it.
        if self.window >= 2 {
            let done_window = self.window - 2;
            if done_window >= self.cfg.warmup_windows
                && self.window_counts(done_window, None, None).success_ratio() < self.cfg.theta
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

    /// Values of every action of this window's class (classes take turns), as transitions.
    fn counterfactual(&mut self, taken: &[Vec<u32>], out: &mut Vec<Transition>) {
        let classes = self.class_apps.len();
        let class = self.labelled % classes;
        // With `cf_apply: scheduler`, one scheduler per window, in turn (after every class).
        let only = (self.cfg.cf_apply == CfApply::Scheduler)
            .then(|| (self.labelled / classes) % self.states.len());
        self.labelled += 1;
        let st = CfSettings {
            actions: &self.actions,
            window_ms: self.window_ms,
            horizon_windows: self.cfg.cf_horizon_windows,
            persist_windows: self.cfg.cf_persist_windows,
            settle_ms: CF_SETTLE_MS,
            scope: self.cfg.cf_scope,
            scale: self.cfg.cf_scale,
            objective: self.cfg.objective,
            only,
        };
        let Some(values) = class_values(&self.sim, self.window, class, taken, &st) else {
            return;
        };
        let n = self.actions.len();
        for (s, v) in values.into_iter().enumerate() {
            if only.is_some_and(|o| o != s) || v.iter().any(|x| x.is_nan()) {
                continue;
            }
            let mut all = vec![0.0; classes * n];
            let mut weights = vec![0.0; classes * n];
            all[class * n..(class + 1) * n].copy_from_slice(&v);
            weights[class * n..(class + 1) * n].fill(1.0);
            out.push(Transition {
                state: self.states[s].clone(),
                actions: taken[s].clone(),
                values: all,
                weights,
                next_state: self.states[s].clone(),
                done: true,
            });
        }
    }

    /// Emits every pending transition of a window ≤ `last`; the one of window `last` is
    /// terminal when `terminal`. Later pending entries are dropped when terminal.
    fn emit(&mut self, last: usize, terminal: bool, out: &mut Vec<Transition>) {
        let n_actions = self.actions.len();
        for s in 0..self.pending.len() {
            while self.pending[s].front().is_some_and(|p| p.window <= last) {
                let p = self.pending[s].pop_front().expect("checked");
                let next_state = self.pending[s]
                    .front()
                    .map_or_else(|| self.states[s].clone(), |n| n.state.clone());
                let mut rewards = Vec::with_capacity(self.class_apps.len());
                let mut weights = Vec::with_capacity(self.class_apps.len());
                if let RewardSpec::Edgetuner { alpha, beta } = self.cfg.reward {
                    // The system's window, the same for every class.
                    let r = self.edgetuner_reward(alpha, beta, p.window);
                    rewards.resize(self.class_apps.len(), r);
                    weights.resize(self.class_apps.len(), 1.0);
                }
                let no_latency = LogHistogram::default();
                let latency = if self.cfg.objective.needs_latency() {
                    self.sim.metrics().window_latency(p.window)
                } else {
                    &no_latency
                };
                for apps in self.class_apps.iter().skip(rewards.len()) {
                    let c = match self.cfg.reward_scope {
                        RewardScope::Scheduler => self.window_counts(p.window, Some(s), Some(apps)),
                        RewardScope::System => self.window_counts(p.window, None, Some(apps)),
                        RewardScope::BoundStreams => {
                            let mut t = Counts::default();
                            for &a in apps {
                                t.add(&self.sim.bound_counts(p.window, s, a));
                            }
                            t
                        }
                    };
                    weights.push(if c.offered > 0 { 1.0 } else { 0.0 });
                    rewards.push(Self::reward_of(
                        self.cfg.reward,
                        self.cfg.objective,
                        &c,
                        latency,
                    ));
                }
                for (c, r) in rewards.iter_mut().enumerate() {
                    if weights[c] > 0.0 {
                        *r = self.shaped(s, c, *r);
                    }
                }
                out.push(Transition::taken(
                    p.state,
                    p.actions,
                    &rewards,
                    &weights,
                    n_actions,
                    next_state,
                    terminal && p.window == last,
                ));
            }
            if terminal {
                self.pending[s].clear();
            }
        }
    }
}

impl MetaEnv {
    /// EdgeTuner's reward of window `w` ([`edgetuner_reward`]).
    fn edgetuner_reward(&mut self, alpha: [f64; 3], beta: [f64; 3], w: usize) -> f32 {
        let jobs = self.sim.window_jobs(w);
        let offered = self.window_counts(w, None, None).offered;
        let start = if w == 0 {
            WindowEnd::default()
        } else {
            self.ends[w - 1]
        };
        edgetuner_reward::reward(alpha, beta, &jobs, &start, &self.ends[w], offered) as f32
    }
}

/// `scale × (r − b)` with `b` the moving average `baseline` of the rewards before `r` (none
/// before the first, so the first reward is 0; none at all when `rate` is 0), then moves the
/// average towards `r` by `rate`.
pub(super) fn shape_reward(scale: f64, rate: f64, baseline: &mut Option<f64>, r: f64) -> f64 {
    let centre = if rate > 0.0 {
        baseline.unwrap_or(r)
    } else {
        0.0
    };
    *baseline = Some(baseline.map_or(r, |b| b + rate * (r - b)));
    scale * (r - centre)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewards_are_scaled_around_their_moving_average() {
        let mut b = None;
        // No baseline: only the scale.
        assert_eq!(shape_reward(100.0, 0.0, &mut b, 0.8), 80.0);
        let mut b = None;
        assert_eq!(shape_reward(100.0, 0.5, &mut b, 0.8), 0.0);
        assert_eq!(b, Some(0.8));
        // 0.9 against 0.8: +10 points; the average moves half way, to 0.85.
        assert!((shape_reward(100.0, 0.5, &mut b, 0.9) - 10.0).abs() < 1e-9);
        assert!((b.unwrap() - 0.85).abs() < 1e-12);
    }

    #[test]
    fn a_tail_objective_scores_the_window_reward() {
        let c = Counts {
            offered: 10,
            success: 8,
            failure: 1,
            rejected: 1,
            ..Counts::default()
        };
        let mut h = LogHistogram::default();
        h.record(100.0);
        let s = MetaEnv::reward_of(RewardSpec::SuccessRatio, Objective::SuccessRatio, &c, &h);
        assert!((s - 0.8).abs() < 1e-6);
        let t = MetaEnv::reward_of(
            RewardSpec::SuccessRatio,
            Objective::Tail { weight: 0.1 },
            &c,
            &h,
        );
        assert!(t < s - 0.4, "{t}");
    }

    #[test]
    fn a_system_agent_has_one_state_one_action_and_one_transition_per_window() {
        use continuum_core::fixtures;
        use continuum_core::workload::Lambda;
        let sc = fixtures::scenario(
            fixtures::TOPOLOGY,
            &fixtures::workload(10.0, "periodic", 100.0, 0.0),
        );
        let cfg = DqnConfig {
            granularity: Granularity::System,
            credit: Credit::Td,
            reward_scope: RewardScope::System,
            fallback_levels: 0,
            warmup_windows: 0,
            horizon_s: 30.0,
            theta: 0.0,
            ..DqnConfig::default()
        };
        cfg.validate().unwrap();
        let classes = crate::train::classes_for(&sc, &cfg);
        let mut env = MetaEnv::new(
            &sc,
            Arc::new(cfg.clone()),
            &classes,
            EpisodeSpec::new(Lambda::Constant(40.0), 3),
        );
        assert_eq!(env.schedulers(), 1);
        let per_scheduler = StateEncoder::new(&sc.topology, &sc.fleet, &cfg);
        assert!(
            per_scheduler.schedulers() > 1,
            "the fixture has several schedulers"
        );
        let mut emitted = 0;
        while env.end() == EpisodeEnd::Running {
            let ts = env.step(&[vec![1; classes.len()]]);
            // Every scheduler runs the one action (`load-balancing`) for every class.
            for s in 0..per_scheduler.schedulers() {
                for c in 0..classes.len() {
                    assert_eq!(env.sim().policy(s, c).name(), "load-balancing");
                }
            }
            assert_eq!(env.states()[0].len(), per_scheduler.state_len());
            for t in &ts {
                assert_eq!(t.actions, vec![1; classes.len()]);
            }
            emitted += ts.len();
        }
        // One transition per window: six 5 s windows.
        assert_eq!(emitted, 6);
    }

    #[test]
    fn edgetuners_reward_is_the_systems_window() {
        use continuum_core::fixtures;
        use continuum_core::workload::Lambda;
        let sc = fixtures::scenario(
            fixtures::TOPOLOGY,
            &fixtures::workload(20.0, "periodic", 100.0, 0.0),
        );
        let reward = RewardSpec::Edgetuner {
            alpha: [-1.0, -0.5, -0.5],
            beta: [1.0, 0.5, 0.5],
        };
        let per_scheduler = DqnConfig {
            reward,
            credit: Credit::Td,
            ..DqnConfig::default()
        };
        assert_eq!(per_scheduler.validate().unwrap_err().0, "reward");
        let cfg = DqnConfig {
            reward_scope: RewardScope::System,
            granularity: Granularity::System,
            fallback_levels: 0,
            warmup_windows: 0,
            horizon_s: 30.0,
            theta: 0.0,
            reward_scale: 1.0,
            ..per_scheduler
        };
        cfg.validate().unwrap();
        let classes = crate::train::classes_for(&sc, &cfg);
        let mut env = MetaEnv::new(
            &sc,
            Arc::new(cfg),
            &classes,
            EpisodeSpec::new(Lambda::Constant(60.0), 5),
        );
        let mut values = Vec::new();
        while env.end() == EpisodeEnd::Running {
            for t in env.step(&[vec![0; classes.len()]]) {
                values.push(t.taken_value().expect("a taken action"));
            }
        }
        assert_eq!(values.len(), 6);
        // Work is done and jobs complete in every window: β's terms make each reward positive,
        // bounded by β1 + β2 + β3 plus the ages' falls.
        assert!(
            values.iter().all(|v| v.is_finite() && *v > 0.0 && *v < 3.0),
            "{values:?}"
        );
    }
}
