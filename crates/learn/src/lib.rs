//! Training continuum's learned dispatch: [`agent`] (the meta-policy network in candle, learnt by
//! DQN or policy gradient, and writing its checkpoints), [`episode`] (what one training or
//! validation episode is), [`train`] (episodes of the simulation that teach the agent, and
//! meta-training over generated topologies), [`reptile`] (the first-order meta-training update),
//! [`meta`] (running a meta-policy over the simulator: the agent, fallback tables, the per-window
//! oracle),
//! [`tapfinger`] (training learned pull dispatch) and [`jobtuner`] (EdgeTuner on batch jobs). What the trained agents decide with is
//! `continuum-infer`'s; the DeepRM reproduction is `continuum-deeprm`.

#![warn(missing_docs)]
#![deny(unreachable_pub)]

pub mod agent;
pub mod episode;
pub mod jobtap;
pub mod jobtuner;
pub mod meta;
pub mod reptile;
pub mod tapfinger;
pub mod train;
pub mod universal;
