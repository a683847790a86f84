//! The learned side of continuum: [`agent`] (the DQN meta-policy, its state encoder and
//! checkpoints), [`episode`] (what one training or validation episode is), [`train`] (episodes
//! of the simulation that teach the agent) and [`meta`] (running a meta-policy over the
//! simulator: the agent, fallback tables, the per-window oracle).

#![warn(missing_docs)]

pub mod agent;
pub mod deeprm;
pub mod episode;
pub mod meta;
pub mod reptile;
pub mod tapfinger;
pub mod train;
