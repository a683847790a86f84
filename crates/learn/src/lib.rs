//! The learned side of continuum: [`agent`] (the meta-policy network, learnt by DQN or policy
//! gradient, its state encoder and checkpoints), [`episode`] (what one training or validation
//! episode is), [`train`] (episodes of the simulation that teach the agent, and meta-training
//! over generated topologies), [`reptile`] (the first-order meta-update), [`meta`] (running a
//! meta-policy over the simulator: the agent, fallback tables, the per-window oracle),
//! [`tapfinger`] (learned pull dispatch) and [`deeprm`] (the DeepRM reproduction).

#![warn(missing_docs)]

pub mod agent;
pub mod deeprm;
pub mod episode;
mod linalg;
pub mod meta;
pub mod reptile;
pub mod tapfinger;
pub mod train;
