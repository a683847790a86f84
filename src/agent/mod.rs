//! The DQN meta-policy (SPEC §9): the state encoder (sans-IO, shared with the gateway), the
//! Q-network, Double-DQN learning, the replay buffer, the exploration schedule, checkpoints, and
//! the trained agent that picks a dispatch policy per scheduler per window.

mod checkpoint;
mod config;
mod dqn;
mod net;
mod replay;
mod schedule;
mod state;

pub use checkpoint::{Agent, Checkpoint, CheckpointError, argmax, topology_fingerprint};
pub use config::{DqnConfig, RewardScope, RewardSpec};
pub use dqn::{LearnSettings, Learner, clip_grad_norm, huber};
pub use net::{NetShape, QNet, build, copy_weights, init_weights};
pub use replay::{Batch, ReplayBuffer};
pub use schedule::EpsilonSchedule;
pub use state::StateEncoder;
