//! What a running dispatcher needs from a trained checkpoint, and nothing of training: the
//! meta-policy's [`agent`] (state encoder, checkpoint, fallback tables, the Q-network's forward)
//! and TapFinger's pull agents ([`tapfinger`]: round encoding, checkpoint, the network's
//! forward), both networks run in plain Rust over [`weights`] read from the checkpoint's
//! safetensors bytes. The simulator's runs and the gateway decide with these; training (in
//! `continuum-learn`, with candle) writes the checkpoints and checks its networks against these
//! forwards within 1e-5.

#![warn(missing_docs)]
#![deny(unreachable_pub)]

pub mod agent;
pub mod checkpoint;
mod linalg;
mod par;
pub mod tapfinger;
pub mod weights;
