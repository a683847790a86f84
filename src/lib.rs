//! continuum: an edge-cloud inference request dispatcher.
//!
//! This crate is the `continuum` command and the live faces (worker, gateway, load generator,
//! live allocator). The layers below are crates of their own, re-exported here under their
//! module names so that `continuum::topology`, `continuum::sim` and the rest keep one path:
//! the sans-IO core [`continuum_core`], the simulator [`continuum_sim`], allocation
//! [`continuum_alloc`] and learning [`continuum_learn`]. The crate graph and what each crate may
//! import are in `docs/architecture.md`.

pub use continuum_alloc::{alloc, oga_bench, placement};
pub use continuum_core::{
    admission, config, dispatch, feasibility, fixtures, load, metrics, mitigation, observe, policy,
    profiles, rng, scenario, topology, workload,
};
pub use continuum_learn::{agent, meta, train};
pub use continuum_sim as sim;

pub mod allocator;
pub mod cli;
pub mod gateway;
pub mod inference;
pub mod layered;
pub mod loadgen;
pub mod profiler;
pub mod report;
pub mod worker;
