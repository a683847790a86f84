//! Training the DQN meta-policy (docs/model.md §9): the branching Q-network in candle (one head
//! per stream class), Double-DQN and policy-gradient learning, the replay buffer, the exploration
//! schedule and writing checkpoints. The trained agent, its state encoder and its checkpoint's
//! reading are [`continuum_infer::agent`]'s.

mod checkpoint;
mod dqn;
mod net;
mod pg;
mod prioritised;
mod replay;
mod schedule;

pub use checkpoint::{fill_vars, save, weights_of, write_weights, write_with_meta};
pub use dqn::{LearnSettings, Learner, clip_grad_norm, huber, weighted_huber};
pub(crate) use net::build_with;
pub use net::{QNet, build, copy_weights, flat, init_weights, set_flat};
pub use pg::PgLearner;
pub use prioritised::PrioritisedReplay;
pub use replay::{Batch, ReplayBuffer, Transition};
pub use schedule::EpsilonSchedule;
