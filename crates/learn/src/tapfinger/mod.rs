//! Training TapFinger (docs/model.md §15, docs/tapfinger.md): the shared network in candle
//! ([`net`]: a heterogeneous graph attention encoder, a pointer over an agent's pending streams, a
//! masked allocation head and MAPPO's per-agent critic), observations padded into batches
//! ([`batch`]), the recording puller ([`recorder`]), PPO ([`ppo`]) and episodes ([`train`]),
//! and writing checkpoints ([`checkpoint`]). The agents that decide, their graph encoding and
//! the checkpoint's reading are [`continuum_infer::tapfinger`]'s.

pub mod batch;
pub mod checkpoint;
pub mod net;
pub mod ppo;
pub mod recorder;
pub mod train;

pub use recorder::{Decision, Recorder};

#[cfg(test)]
mod tests;
