//! The DQN meta-policy (docs/model.md §9): the state encoder (sans-IO, shared with the gateway), the
//! branching Q-network (one head per stream class), Double-DQN learning, the replay buffer, the
//! exploration schedule, checkpoints, and the trained agent that picks a dispatch policy per
//! scheduler and class per window.

pub(crate) mod checkpoint;
mod choices;
mod config;
mod dqn;
mod fallback;
mod fast;
mod net;
mod pg;
mod replay;
mod schedule;
mod state;
mod trained;

pub use checkpoint::{Checkpoint, CheckpointError, CheckpointMeta, topology_fingerprint};
pub use config::{
    Algorithm, CfApply, CfScope, ClassMode, Credit, DqnConfig, Granularity, LambdaProfile,
    MarginPerLevel, RewardScope, RewardSpec, parse_actions,
};
pub use dqn::{LearnSettings, Learner, clip_grad_norm, huber, weighted_huber};
pub use fallback::Fallback;
pub use fast::FastQNet;
pub use net::{NetShape, QNet, build, copy_weights, flat, init_weights, set_flat};
pub use pg::PgLearner;
pub use replay::{Batch, ReplayBuffer, Transition};
pub use schedule::EpsilonSchedule;
pub use state::StateEncoder;
pub use trained::{Agent, argmax, conservative_choice, majority};
