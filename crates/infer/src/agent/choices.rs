//! The named choices of the meta-policy's hyper-parameters (`config/dqn.yaml`): each a small
//! enum read from YAML by its snake-case (or kebab-case) name, documented where it is chosen.

use serde::{Deserialize, Serialize};

/// How a window's outcome becomes a reward.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum RewardSpec {
    /// The window's success ratio at the scheduler (default).
    SuccessRatio,
    /// `base + failed · failed_fraction + rejected · rejected_fraction`.
    Linear {
        /// Constant term.
        base: f64,
        /// Weight of the fraction answered late.
        failed: f64,
        /// Weight of the fraction never processed.
        rejected: f64,
    },
    /// EdgeTuner's reward, eqs. 3–6 as continuum reads them (docs/model.md §9.5): r = r_job +
    /// r_run + r_wait, each an α (≤ 0) times a tail plus a β (≥ 0) times a share of work done —
    /// the mean JTL of the window's complete jobs (s) and the share of its jobs complete; the
    /// change over the window of the oldest running task's age (s) and the tasks processed per
    /// offered; the same for the oldest waiting task and the tasks taken into batches. Needs
    /// `reward_scope: system` and `credit: td`.
    Edgetuner {
        /// α1, α2, α3 (the paper: negative).
        alpha: [f64; 3],
        /// β1, β2, β3 (the paper: positive).
        beta: [f64; 3],
    },
}

/// The learning algorithm of the meta-policy network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Algorithm {
    /// Double DQN on the values (ε-greedy behaviour, replay).
    Dqn,
    /// An implicit quantile network (Dabney et al., ICML 2018; EdgeTuner's learner): the same
    /// network with a cosine embedding of the quantile τ multiplied into its trunk, trained on
    /// the quantile-Huber loss over sampled τ; it acts on the mean over a fixed grid of τ
    /// (risk-neutral), Double-DQN targets, ε-greedy behaviour and replay as `dqn`.
    Iqn,
    /// REINFORCE: actions sampled from the policy; the gradient of the taken action's log
    /// probability times its value less the class's mean value.
    Reinforce,
    /// REINFORCE improved: the all-action gradient Σ_a ∇π(a|s)(v_a − v̄) over every action's
    /// counterfactual value (Mean Actor-Critic, Asadi et al. 2017), advantages normalised
    /// over the batch, an entropy bonus.
    ReinforceImproved,
}

/// Whether the load levels get margins of their own (docs/model.md §9.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MarginPerLevel {
    /// One margin for every level.
    Off,
    /// A margin per level, kept only if it also beats the one margin on the dynamic
    /// validation episodes.
    Validated,
    /// A margin per level, kept whatever the validation episodes say.
    Always,
}

/// Where a counterfactual fork applies the action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CfApply {
    /// At every scheduler (the value of a joint action, shared by all).
    All,
    /// At one scheduler, the others keeping their behaviour actions.
    Scheduler,
}

/// Who shares a meta-policy decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Granularity {
    /// Every scheduler decides for itself, from its own state.
    PerScheduler,
    /// One decision per class for all schedulers: the action most schedulers would choose
    /// (ties to the lower action index), EdgeTuner's one configuration for the cluster.
    Global,
    /// One agent for the whole system, trained as it runs: one state (the mean of the
    /// schedulers' states), one action per class and window applied at every scheduler, one
    /// reward (the system's window). EdgeTuner's global agent.
    System,
}

/// How streams are grouped into classes for the meta-policy's actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClassMode {
    /// One head per application class of the training workload (streams of unknown
    /// applications by demand bucket).
    PerApp,
    /// One action for every stream (docs/model.md §9's per-scheduler action).
    Single,
    /// One class per demand bucket, whatever the application (docs/model.md §9.9): what a
    /// checkpoint meant for any workload uses.
    Demand,
}

/// What the state describes (docs/model.md §9, §9.9).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StateKind {
    /// The K nearest workers' loads and the scheduler's incoming queries by bucket, over the
    /// history: a network per topology.
    #[default]
    Slots,
    /// Per scheduler and demand bucket, the bucket's situation in terms every network has
    /// ([`super::situation::SituationEncoder`]): one network for any topology.
    Situation,
}

impl StateKind {
    /// Whether this is the default, `slots` (not written into checkpoints, so those of older
    /// configurations stay as they were).
    pub fn is_slots(&self) -> bool {
        *self == Self::Slots
    }
}

/// How an action earns its learning value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Credit {
    /// At each decision window the run is forked once per (class, action); each fork applies
    /// that action to that class at every scheduler for the window, then all forks continue
    /// alike. A fork's value is how much the scored queries' success ratio over the next
    /// `cf_horizon_windows` differs from the mean of the class's forks: every action of every
    /// class gets a value measured on the same future (common random numbers), so the value
    /// measures the action, not the luck of the window.
    Counterfactual,
    /// Temporal-difference learning on the reward of `reward` / `reward_scope`, per class.
    Td,
}

/// Whose queries score a counterfactual fork.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CfScope {
    /// Every scheduler's: each scheduler learns the action's effect on the whole system.
    System,
    /// The scheduler's own: each scheduler learns the action's effect where it stands.
    Scheduler,
}

/// How λ moves inside a training episode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LambdaProfile {
    /// One λ per episode, uniform in the range.
    Constant,
    /// Per episode, at random: a constant, random steps, or a sine, all within the range.
    Dynamic,
}

/// Whose outcome a scheduler's reward measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RewardScope {
    /// The scheduler's own queries in the window (docs/model.md §9's default).
    Scheduler,
    /// Every scheduler's queries in the window: each agent is credited with the outcome of the
    /// whole system, which its bindings share with the others through common workers.
    System,
    /// The queries of the streams the scheduler opened in the window, over the next
    /// `reward_windows` windows: the consequence of exactly the bindings the action made.
    BoundStreams,
}
