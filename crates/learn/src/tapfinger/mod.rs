//! TapFinger in continuum (docs/model.md §15, docs/tapfinger.md): multi-agent learned pull
//! dispatch. One agent per cluster claims pending streams for its own workers: a heterogeneous
//! graph attention encoder ([`net`]) over its graph ([`features`]), a pointer over its pending
//! streams and a masked allocation head, conflicts settled by Bayes' rule (in the core's
//! [`continuum_core::pull`]), trained by MAPPO ([`ppo`], [`train`]). One checkpoint
//! ([`checkpoint`]) serves any topology.

pub mod agent;
pub mod batch;
pub mod checkpoint;
pub mod config;
mod fast;
pub mod features;
pub mod net;
pub mod ppo;
pub mod train;

pub use agent::{Decision, Pick, TapFinger};
pub use checkpoint::TapCheckpoint;
pub use config::{TapConfig, TapReward};
pub use fast::FastTapNet;

#[cfg(test)]
mod tests;
