//! DeepRM (Mao et al., HotNets 2016) reproduced as a small environment of its own: the cluster
//! with d resources and a job queue ([`env`]), its reward objectives ([`objective`]), the
//! paper's baselines ([`heuristics`]), the policy network ([`net`]), REINFORCE with the time-step
//! baseline and its improved variants ([`reinforce`], [`train`]), evaluation ([`eval`]),
//! first-order meta-training over job distributions ([`meta_train`]), checkpoints
//! ([`checkpoint`]) and its commands, `continuum deeprm train | meta-train | eval` ([`cli`]). It
//! checks the policy-gradient code against a published result before the same code trains
//! continuum's own policies.

#![warn(missing_docs)]
#![deny(unreachable_pub)]

pub mod checkpoint;
pub mod cli;
pub mod env;
pub mod eval;
pub mod heuristics;
pub mod imitate;
pub mod meta_train;
pub mod net;
pub mod objective;
pub mod reinforce;
pub mod rmsprop;
pub mod train;

pub use checkpoint::PgCheckpoint;
pub use env::{End, Env, EnvParams};
pub use heuristics::Heuristic;
pub use objective::Objective;
pub use reinforce::PgVariant;
pub use train::PgConfig;

#[cfg(test)]
mod tests;
