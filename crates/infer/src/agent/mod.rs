//! The trained meta-policy (docs/model.md §9) as a dispatcher runs it: the state encoder (sans-IO,
//! the simulator's windows and the gateway's encoded alike), the checkpoint and its metadata, the
//! fallback tables, the Q-network's forward in plain Rust and the [`Agent`] that picks a dispatch
//! policy per scheduler and class per window. The hyper-parameters ([`DqnConfig`]) live here
//! because every checkpoint carries them and the encoder reads its sizes from them.

mod apex;
mod checkpoint;
mod choices;
mod config;
mod fallback;
mod fast;
mod situation;
mod state;
mod trained;

pub use checkpoint::{Checkpoint, CheckpointMeta, topology_fingerprint};
pub use config::{
    Algorithm, ApexConfig, CfApply, CfScope, ClassMode, Credit, DqnConfig, Granularity,
    LambdaProfile, MarginPerLevel, RewardScope, RewardSpec, StateKind, parse_actions,
};
pub use fallback::Fallback;
pub use fast::{FastQNet, IQN_GRID, NetShape, cos_embedding, quantile_grid};
pub use situation::SituationEncoder;
pub use state::StateEncoder;
pub use trained::{Agent, argmax, conservative_choice, majority};
