//! The test kit: what the integration tests of the worker, the gateway and the `continuum`
//! binary share, a dev-dependency only (nothing here is built into a release binary).
//!
//! - [`worker`]: a worker on loopback with free ports, direct inference, a small HTTP client;
//! - [`gateway`]: the two workers of topologies/live.yaml behind a gateway started in-process,
//!   the repository's files (`gateway::repo`), and the worker kit re-exported (feature
//!   `gateway`).

#![warn(missing_docs)]

#[cfg(feature = "gateway")]
pub mod gateway;
pub mod worker;
