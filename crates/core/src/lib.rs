//! The sans-IO core of continuum: what a scheduler knows and decides, with no clock, socket or
//! thread of its own. The simulator drives it with virtual time and the gateway with real I/O;
//! neither writes any of this twice.
//!
//! Inputs ([`config`], [`topology`], [`profiles`], [`workload`], [`scenario`]), the decision
//! ([`feasibility`], [`policy`], [`dispatch`]), what a scheduler sees and what happens to a
//! query ([`load`], [`observe`], [`admission`], [`mitigation`]) and how outcomes are counted
//! ([`metrics`]). The model these modules implement is `docs/model.md`.
//!
//! This crate must never depend on an async runtime, a network stack, an inference engine or a
//! learning framework: its `Cargo.toml` is the check.

#![warn(missing_docs)]
#![deny(unreachable_pub)]

pub mod admission;
pub mod config;
pub mod dispatch;
pub mod feasibility;
#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures;
pub mod load;
pub mod metrics;
pub mod mitigation;
pub mod observe;
pub mod policy;
pub mod profiles;
pub mod pull;
pub mod rng;
pub mod scenario;
pub mod topology;
pub mod workload;
