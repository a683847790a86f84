//! The learned side of continuum: [`agent`] (the DQN meta-policy, its state encoder and
//! checkpoints), [`train`] (episodes of the simulation that teach it) and [`meta`] (running a
//! meta-policy over the simulator: the agent, fallback tables, the per-window oracle).

pub mod agent;
pub mod meta;
pub mod train;
