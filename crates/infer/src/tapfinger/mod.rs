//! TapFinger (docs/model.md §15, docs/tapfinger.md) as a dispatcher runs it: multi-agent learned
//! pull dispatch. One agent per cluster claims pending streams for its own workers: its graph
//! ([`features`]), the shared network's forward in plain Rust ([`FastTapNet`]: a heterogeneous
//! graph attention encoder, a pointer over its pending streams and a masked allocation head),
//! conflicts settled by Bayes' rule (in the core's [`continuum_core::pull`]). One checkpoint
//! ([`TapCheckpoint`]) serves any topology.

mod agent;
mod checkpoint;
mod config;
mod fast;
pub mod features;

pub use agent::{Pick, TapFinger, choose, observe, softmax};
pub use checkpoint::{TapCheckpoint, TapMeta};
pub use config::{ResolutionName, TapConfig, TapReward};
pub use fast::{AgentLogits, FastTapNet, TapNetShape};
