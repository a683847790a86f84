//! continuum: an edge-cloud inference request dispatcher.
//!
//! The crate is a sans-IO core — [`topology`], [`profiles`], [`workload`], [`feasibility`],
//! [`policy`], [`load`] — driven by the discrete-event simulator [`sim`] (virtual time), with
//! [`metrics`] and [`report`] for results and [`cli`] for the `continuum` command. [`alloc`] is
//! the sans-IO core of online resource allocation (OGASched and its heuristics), reproduced by
//! [`oga_bench`].

pub mod admission;
pub mod agent;
pub mod alloc;
pub mod allocator;
pub mod cli;
pub mod config;
pub mod feasibility;
pub mod gateway;
pub mod inference;
pub mod load;
pub mod loadgen;
pub mod meta;
pub mod metrics;
pub mod mitigation;
pub mod observe;
pub mod oga_bench;
pub mod placement;
pub mod policy;
pub mod profiler;
pub mod profiles;
pub mod report;
pub mod rng;
pub mod sim;
pub mod topology;
pub mod train;
pub mod worker;
pub mod workload;

#[cfg(test)]
pub(crate) mod fixtures;
