//! Hyper-parameters of the DQN meta-policy, read from one YAML file (`config/dqn.yaml`); every
//! field has a documented default.

use continuum_core::admission::QueueBound;
use continuum_core::config::{ConfigError, Source};
use continuum_core::load::LoadViewMode;
use continuum_core::metrics::Objective;
use continuum_core::mitigation::Configuration;
use continuum_core::observe::DemandBuckets;
use serde::{Deserialize, Serialize};

pub use super::apex::ApexConfig;
use std::path::Path;

pub use super::choices::{
    Algorithm, CfApply, CfScope, ClassMode, Credit, Granularity, LambdaProfile, MarginPerLevel,
    RewardScope, RewardSpec, StateKind,
};

/// Every hyper-parameter of training and of the network.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DqnConfig {
    /// Configurations the agent chooses among: a policy name, or `policy+mitigation`
    /// (`least-impedance+reissue@0.8`; a joint action over a grid of policies and
    /// mitigations). Default: docs/model.md §6's policies but `random`, `farthest`, `cheaper`
    /// (the slowest feasible binding by construction) and `tetris` (docs/model.md §9.1's five),
    /// no mitigation.
    pub actions: Vec<String>,
    /// What a decision is scored by: counterfactual values, the fallback tables' search and the
    /// choice of the margin all use it (`success_ratio`, or `{tail: {weight: w}}`, which
    /// trades success ratio against the p99 of answered queries; see [`Objective`]).
    pub objective: Objective,
    /// Who shares a decision: each scheduler its own (`per_scheduler`), or one configuration
    /// per class for every scheduler — the schedulers' own choices decided by majority
    /// (`global`), or one agent with the system's state, action and reward (`system`,
    /// EdgeTuner's; needs `credit: td`, `reward_scope: system` and `fallback_levels: 0`).
    pub granularity: Granularity,
    /// Window T, s (docs/model.md §9 default 5 s).
    pub window_s: f64,
    /// Windows stacked along time in the state, k.
    pub history: usize,
    /// Demand buckets of the state's incoming-query part.
    pub buckets: DemandBuckets,
    /// Incoming qps that maps to 1.0 in the state (≈ one antenna's load at λ = 60).
    pub incoming_scale_qps: f64,
    /// Stream rate that maps a stream count to capacity units in the state.
    pub stream_rate_ref_qps: f64,
    /// Output channels of the time convolution.
    pub conv_channels: usize,
    /// Kernel size of the time convolution (≤ history).
    pub conv_kernel: usize,
    /// Width of the two hidden dense layers.
    pub hidden: usize,
    /// Discount factor γ.
    pub gamma: f64,
    /// Adam learning rate.
    pub learning_rate: f64,
    /// Global gradient-norm clip.
    pub max_grad_norm: f64,
    /// Replay buffer capacity, transitions.
    pub buffer_size: usize,
    /// Minibatch size.
    pub batch_size: usize,
    /// Transitions collected before learning starts.
    pub learning_starts: usize,
    /// Gradient steps per collection round (one window of every environment).
    pub gradient_steps: usize,
    /// Gradient steps between target-network syncs.
    pub target_update_interval: u64,
    /// Initial exploration rate ε.
    pub eps_start: f64,
    /// Final exploration rate ε.
    pub eps_end: f64,
    /// Fraction of all training transitions over which ε decays linearly.
    pub eps_fraction: f64,
    /// Training episodes.
    pub episodes: usize,
    /// Environments stepped in parallel.
    pub parallel_envs: usize,
    /// Episode horizon H, s of simulated time.
    pub horizon_s: f64,
    /// An episode ends early when a window's success ratio drops below θ.
    pub theta: f64,
    /// Client rate λ per episode is drawn uniformly from this range, clients/min/antenna.
    pub lambda_range: [f64; 2],
    /// Windows of warm-up at the start of an episode (no transitions recorded), so the
    /// topology fills with streams first.
    pub warmup_windows: usize,
    /// Reward definition.
    pub reward: RewardSpec,
    /// Whose window outcome the reward measures.
    pub reward_scope: RewardScope,
    /// With `reward_scope: bound_streams`, windows over which the streams' outcomes are
    /// counted before the reward is final.
    pub reward_windows: usize,
    /// How streams are grouped for actions: one head per application class (`per_app`) or one
    /// action for all streams (`single`, docs/model.md §9 as written).
    pub classes: ClassMode,
    /// How an action earns its learning value.
    pub credit: Credit,
    /// Counterfactual credit: windows after the decision over which the forks are scored.
    pub cf_horizon_windows: usize,
    /// Counterfactual credit: windows a fork keeps the action for (1: the decision window
    /// only; up to `cf_horizon_windows`: the value of keeping the action that long).
    pub cf_persist_windows: usize,
    /// Counterfactual credit: whose queries score a fork.
    pub cf_scope: CfScope,
    /// Counterfactual values are this factor × the change of the scored queries' success
    /// ratio (100: percentage points), so values are of order 1 for the network.
    pub cf_scale: f64,
    /// How λ moves inside a training episode (within `lambda_range`).
    pub lambda_profile: LambdaProfile,
    /// Total simulated queries training may spend (episodes and counterfactual forks); the
    /// episode count is cut so the estimate stays within it. 0: no cap.
    pub budget_queries: f64,
    /// Validation episodes (held-out seeds from the training distribution, λ moving as in
    /// training) on which the deviation margin is chosen.
    pub validation_episodes: usize,
    /// Load levels of the fallback: the λ range is cut into this many equal parts, and the best
    /// static per-class table is searched at the middle λ of each (1: one table for all loads;
    /// 0: no fallback and no margin — the network alone decides, as ASET's agent does).
    pub fallback_levels: usize,
    /// Episodes (held-out seeds, constant λ) each level's table search scores tables on.
    pub fallback_seeds: usize,
    /// Candidate margins, in the value unit: a class deviates from the fallback table only when
    /// the greedy action's value beats the fallback action's by more than the margin.
    pub margins: Vec<f64>,
    /// Whether a fallback table's change is kept only if it scores at least as well on every
    /// one of the level's `fallback_seeds` episodes, not only in total (docs/model.md §9.6).
    pub fallback_every_episode: bool,
    /// Whether each load level also gets its own margin, chosen among `margins` (and infinite)
    /// on the episodes that chose its table.
    pub margin_per_level: MarginPerLevel,
    /// Scheduler identity in the state: a one-hot of the scheduler appended to every window's
    /// features, so the network shared by all schedulers knows whose workers its slots are.
    pub identity: bool,
    /// Temporal-difference credit: the reward is `reward_scale × (r − b)`, with `b` a moving
    /// average of the scheduler's (and class's) past rewards when `reward_baseline_rate` > 0
    /// (`b ← b + rate · (r − b)` after each window; 0: no baseline).
    pub reward_scale: f64,
    /// Rate of the reward baseline's moving average, in [0, 1) (0: none).
    pub reward_baseline_rate: f64,
    /// Counterfactual credit: where a fork applies the action — at every scheduler at once
    /// (`all`), or at one scheduler only, the others keeping their own actions (`scheduler`:
    /// the value is that of the decision the scheduler makes; one scheduler is labelled per
    /// window, in turn).
    pub cf_apply: CfApply,
    /// Actual worker capacity against the profiles during training and selection (the
    /// schedulers keep believing the profiles): EdgeTuner's protocol retrains per resource
    /// level. 1: the profiles.
    pub capacity_scale: f64,
    /// Capacity randomisation in training and selection: each episode's workers run at a
    /// multiple drawn uniformly from `capacity_scale × [1 − spread, 1 + spread]` (the
    /// schedulers keep believing the profiles), so one checkpoint learns every resource level
    /// in the range instead of one. 0: every episode at `capacity_scale`.
    pub capacity_spread: f64,
    /// The workers' queue bound in every training, table-search and selection episode
    /// (docs/model.md §7.3): `deadline` (the simulator's default) or `unbounded` (every admitted
    /// query is served and a late answer is a failure, ASET's setting), or a number of queries.
    /// Run the checkpoint under the same `--queue-bound`.
    pub queue_bound: QueueBound,
    /// The load view every training, table-search and selection episode's schedulers decide on
    /// (docs/model.md §8): `published` (the default; the measured 1 s average republished every
    /// 100 ms) or `current` (every worker's present load, every scheduler's bindings included:
    /// ASET's assumption). Run the checkpoint under the same `--load-view`.
    #[serde(skip_serializing_if = "LoadViewMode::is_published")]
    pub load_view: LoadViewMode,
    /// The tasks' requirements per training episode (ASET's protocol, its §IV-C: an episode's
    /// workload has its own "requirements from tasks"): each episode multiplies every
    /// application class's share of the clients by its own factor drawn uniformly from
    /// `[1 − spread, 1 + spread]`, so the mix of deadlines, accuracy floors and rates the
    /// schedulers meet changes from episode to episode. 0: the workload's mix in every
    /// episode (no draw is made, and the episodes are those of older checkpoints).
    #[serde(skip_serializing_if = "is_zero")]
    pub mix_spread: f64,
    /// How the network learns: `dqn` (Double DQN, its output a value per action), `iqn` (an
    /// implicit quantile network, EdgeTuner's learner; docs/model.md §9.5), `reinforce` or
    /// `reinforce-improved` (a softmax policy, its output logits; docs/model.md §9.8). Needs
    /// `credit: counterfactual` unless `dqn` or `iqn`.
    pub algorithm: Algorithm,
    /// Entropy bonus weight of `reinforce-improved`.
    pub entropy: f64,
    /// Worker slots in the state: the K nearest workers of each scheduler, zero-padded (0:
    /// every reachable worker, so the state's size depends on the topology). A fixed K gives
    /// every topology the same network shape, which `--init` and meta-training need.
    pub state_workers: usize,
    /// Ape-X (`apex: {actors: 4}`, the rest defaulting to the paper's): several actors with
    /// fixed ε each run whole episodes and feed one learner through a prioritised replay
    /// (docs/model.md §9.5); `eps_start`, `eps_end`, `eps_fraction` and `parallel_envs` are then
    /// unused. Needs `algorithm: dqn` or `iqn`. Absent: the one-process loop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub apex: Option<ApexConfig>,
    /// What the state describes: `slots` (the nearest workers, a network per topology) or
    /// `situation` (per scheduler and demand bucket, in terms every network has: one network
    /// for any topology; needs `classes: demand`, `history: 1`, `conv_kernel: 1`,
    /// `granularity: per_scheduler` and `credit: counterfactual`; docs/model.md §9.9).
    #[serde(skip_serializing_if = "StateKind::is_slots")]
    pub state: StateKind,
}

/// Whether a number is zero (for skipping a default when serialising, so that checkpoints of
/// configurations without the field are as they were).
fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// A finite number > 0.
fn pos(x: f64) -> bool {
    x > 0.0 && x.is_finite()
}

/// A validation error of field `f`.
fn bad(f: &'static str, m: &str) -> Result<(), (&'static str, String)> {
    Err((f, m.to_string()))
}

impl Default for DqnConfig {
    fn default() -> Self {
        Self {
            // docs/model.md §9.1's set: ASET's policies but the two that seek the slowest
            // binding (`farthest`, `cheaper`); every action costs a counterfactual fork per class
            // and window. The baselines and the heuristic suite registered since are not in it.
            actions: [
                "closest",
                "load-balancing",
                "random-proportional-latency",
                "random-proportional-load",
                "least-impedance",
            ]
            .map(String::from)
            .to_vec(),
            objective: Objective::SuccessRatio,
            granularity: Granularity::PerScheduler,
            window_s: 5.0,
            history: 4,
            buckets: DemandBuckets::default(),
            incoming_scale_qps: 1000.0,
            stream_rate_ref_qps: 15.0,
            conv_channels: 16,
            conv_kernel: 2,
            hidden: 128,
            gamma: 0.9,
            learning_rate: 5e-4,
            max_grad_norm: 10.0,
            buffer_size: 50_000,
            batch_size: 128,
            learning_starts: 1_000,
            gradient_steps: 4,
            target_update_interval: 250,
            eps_start: 1.0,
            eps_end: 0.05,
            eps_fraction: 0.5,
            episodes: 200,
            parallel_envs: 2,
            horizon_s: 300.0,
            theta: 0.2,
            lambda_range: [20.0, 100.0],
            warmup_windows: 6,
            reward: RewardSpec::SuccessRatio,
            reward_scope: RewardScope::Scheduler,
            reward_windows: 6,
            classes: ClassMode::PerApp,
            credit: Credit::Counterfactual,
            cf_horizon_windows: 6,
            cf_persist_windows: 6,
            cf_scope: CfScope::System,
            cf_scale: 100.0,
            lambda_profile: LambdaProfile::Dynamic,
            budget_queries: 3.5e9,
            validation_episodes: 4,
            fallback_levels: 4,
            fallback_seeds: 2,
            margins: vec![0.0, 0.05, 0.1, 0.2],
            margin_per_level: MarginPerLevel::Off,
            fallback_every_episode: false,
            identity: false,
            reward_scale: 1.0,
            reward_baseline_rate: 0.0,
            cf_apply: CfApply::All,
            capacity_scale: 1.0,
            capacity_spread: 0.0,
            queue_bound: QueueBound::Deadline,
            load_view: LoadViewMode::Published,
            mix_spread: 0.0,
            algorithm: Algorithm::Dqn,
            entropy: 0.01,
            state_workers: 0,
            apex: None,
            state: StateKind::Slots,
        }
    }
}

impl DqnConfig {
    /// The configurations of `actions`, in order (the config must have been validated).
    pub fn configurations(&self) -> Vec<Configuration> {
        parse_actions(&self.actions).expect("validated actions")
    }

    /// Loads a config file; absent fields take their defaults.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let src = Source::read(path)?;
        let c: Self = src.parse()?;
        c.validate()
            .map_err(|(field, m)| src.error_file(field, m))?;
        Ok(c)
    }

    /// Checks ranges; the error names the field.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        self.check_actions()?;
        self.check_learning()?;
        self.check_episodes()?;
        self.check_combinations()
    }

    /// `state: situation`'s needs: demand classes, one window, the per-scheduler network and
    /// counterfactual values; `classes: demand` only with it.
    fn check_situation(&self) -> Result<(), (&'static str, String)> {
        let situation = self.state == StateKind::Situation;
        if situation
            && (self.classes != ClassMode::Demand
                || self.history != 1
                || self.conv_kernel != 1
                || self.granularity != Granularity::PerScheduler
                || self.credit != Credit::Counterfactual
                || self.identity)
        {
            return bad(
                "state",
                "`situation` needs `classes: demand`, `history: 1`, `conv_kernel: 1`, \
                 `granularity: per_scheduler`, `credit: counterfactual` and `identity: false`",
            );
        }
        if !situation && self.classes == ClassMode::Demand {
            return bad("classes", "`demand` needs `state: situation`");
        }
        Ok(())
    }

    /// The actions, the objective, the window and the state's shape.
    fn check_actions(&self) -> Result<(), (&'static str, String)> {
        if self.actions.is_empty() {
            return bad("actions", "expected at least one policy");
        }
        for a in &self.actions {
            Configuration::parse(a).map_err(|m| ("actions", m))?;
        }
        self.objective.validate().map_err(|m| ("objective", m))?;
        if self.actions.len() > 255 {
            return bad("actions", "at most 255 actions");
        }
        if !pos(self.window_s) {
            return bad("window_s", "expected a number > 0");
        }
        if self.history == 0 || self.conv_kernel == 0 || self.conv_kernel > self.history {
            return bad("conv_kernel", "expected 1 <= conv_kernel <= history");
        }
        self.buckets.validate().map_err(|m| ("buckets", m))?;
        if !(0.0..1.0).contains(&self.gamma) {
            return bad("gamma", "expected 0 <= gamma < 1");
        }
        Ok(())
    }

    /// The learner's numbers: rates, sizes, exploration.
    fn check_learning(&self) -> Result<(), (&'static str, String)> {
        if !pos(self.learning_rate)
            || !pos(self.max_grad_norm)
            || !pos(self.incoming_scale_qps)
            || !pos(self.stream_rate_ref_qps)
        {
            return bad(
                "learning_rate",
                "learning_rate, max_grad_norm, incoming_scale_qps and stream_rate_ref_qps must be > 0",
            );
        }
        if self.batch_size == 0
            || self.buffer_size < self.batch_size
            || self.conv_channels == 0
            || self.hidden == 0
            || self.parallel_envs == 0
        {
            return bad(
                "batch_size",
                "expected batch_size, conv_channels, hidden, parallel_envs >= 1 and buffer_size >= batch_size",
            );
        }
        if !(0.0..=1.0).contains(&self.eps_start)
            || !(0.0..=1.0).contains(&self.eps_end)
            || !(0.0..=1.0).contains(&self.eps_fraction)
        {
            return bad(
                "eps_start",
                "eps_start, eps_end and eps_fraction must be in [0, 1]",
            );
        }
        Ok(())
    }

    /// What the training episodes draw and how long they last, credit and reward scales.
    fn check_episodes(&self) -> Result<(), (&'static str, String)> {
        if !pos(self.horizon_s)
            || self.horizon_s < self.window_s * (self.warmup_windows as f64 + 3.0)
        {
            return bad(
                "horizon_s",
                "expected a horizon of at least warmup_windows + 3 windows",
            );
        }
        let [lo, hi] = self.lambda_range;
        if !(lo >= 0.0 && hi >= lo && hi.is_finite()) {
            return bad("lambda_range", "expected [low, high] with 0 <= low <= high");
        }
        if self.cf_horizon_windows == 0 {
            return bad("cf_horizon_windows", "expected at least 1 window");
        }
        if self.cf_persist_windows == 0 || self.cf_persist_windows > self.cf_horizon_windows {
            return bad(
                "cf_persist_windows",
                "expected 1 <= cf_persist_windows <= cf_horizon_windows",
            );
        }
        if !pos(self.cf_scale) {
            return bad("cf_scale", "expected a number > 0");
        }
        if !(self.budget_queries >= 0.0 && self.budget_queries.is_finite()) {
            return bad("budget_queries", "expected a number >= 0 (0: no cap)");
        }
        if self.fallback_levels > 0 && self.fallback_seeds == 0 {
            return bad(
                "fallback_seeds",
                "expected fallback_seeds >= 1 (or fallback_levels: 0, no fallback)",
            );
        }
        if !pos(self.reward_scale) {
            return bad("reward_scale", "expected a number > 0");
        }
        if !(0.0..1.0).contains(&self.reward_baseline_rate) {
            return bad(
                "reward_baseline_rate",
                "expected 0 <= rate < 1 (0: no baseline)",
            );
        }
        if !pos(self.capacity_scale) {
            return bad("capacity_scale", "expected a number > 0 (1: the profiles)");
        }
        if !(0.0..1.0).contains(&self.capacity_spread) {
            return bad(
                "capacity_spread",
                "expected 0 <= spread < 1 (0: no randomisation)",
            );
        }
        if !(0.0..1.0).contains(&self.mix_spread) {
            return bad(
                "mix_spread",
                "expected 0 <= spread < 1 (each class's share times a factor in \
                 [1 − spread, 1 + spread]; 0: the workload's mix)",
            );
        }
        if !(0.0..=1.0).contains(&self.theta) {
            return bad(
                "theta",
                "expected a success ratio in [0, 1] (an episode ends when a window's success \
                 ratio falls below it; 0: only at the horizon)",
            );
        }
        Ok(())
    }

    /// Settings that only work together (credit, reward, granularity, algorithm, Ape-X).
    fn check_combinations(&self) -> Result<(), (&'static str, String)> {
        self.check_situation()?;
        if self.credit == Credit::Td
            && self.objective.needs_latency()
            && self.reward_scope != RewardScope::System
        {
            return bad(
                "objective",
                "a tail objective with `credit: td` needs `reward_scope: system` (the window's \
                 p99 is measured over the whole system, not per scheduler); use \
                 `credit: counterfactual` or `objective: success_ratio` otherwise",
            );
        }
        if let RewardSpec::Edgetuner { alpha, beta } = self.reward {
            if alpha.iter().any(|a| !(*a <= 0.0 && a.is_finite()))
                || beta.iter().any(|b| !(*b >= 0.0 && b.is_finite()))
            {
                return bad(
                    "reward",
                    "`edgetuner` expects alpha: three numbers <= 0 and beta: three numbers >= 0 \
                     (the paper's signs)",
                );
            }
            if self.credit != Credit::Td || self.reward_scope != RewardScope::System {
                return bad(
                    "reward",
                    "`edgetuner` measures the whole system's window: it needs `credit: td` and \
                     `reward_scope: system`",
                );
            }
        }
        if self.granularity == Granularity::System
            && (self.credit != Credit::Td
                || self.reward_scope != RewardScope::System
                || self.fallback_levels != 0)
        {
            return bad(
                "granularity",
                "`system` (one agent for the system) needs `credit: td`, `reward_scope: system` \
                 and `fallback_levels: 0` (its one state has no scheduler's load level)",
            );
        }
        if self.margins.iter().any(|m| !(*m >= 0.0 && m.is_finite())) {
            return bad("margins", "expected numbers >= 0");
        }
        if !matches!(self.algorithm, Algorithm::Dqn | Algorithm::Iqn)
            && self.credit != Credit::Counterfactual
        {
            return bad(
                "algorithm",
                "`reinforce` and `reinforce-improved` need `credit: counterfactual` (every \
                 action's value at each decision)",
            );
        }
        if !(self.entropy >= 0.0 && self.entropy.is_finite()) {
            return bad("entropy", "expected a number >= 0");
        }
        if let Some(a) = &self.apex {
            a.validate()?;
            if !matches!(self.algorithm, Algorithm::Dqn | Algorithm::Iqn) {
                return bad("apex", "Ape-X needs `algorithm: dqn` or `iqn` (a replay)");
            }
        }
        Ok(())
    }
}

/// The configurations named by `names` (policy or `policy+mitigation`), or why one is not one.
pub fn parse_actions(names: &[String]) -> Result<Vec<Configuration>, String> {
    names.iter().map(|a| Configuration::parse(a)).collect()
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
