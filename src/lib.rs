//! continuum: an edge-cloud inference request dispatcher.
//!
//! This crate is the `continuum` command ([`app`], [`cli`], [`sweep`]), its reports ([`report`]) and the live
//! allocator ([`allocator`]). Everything else is a crate of its own, re-exported here under its
//! module name so that `continuum::topology`, `continuum::sim`, `continuum::gateway` and the
//! rest keep one path: the sans-IO core [`continuum_core`], the simulator [`continuum_sim`],
//! allocation [`continuum_alloc`], learning [`continuum_learn`] (the trained agents themselves are
//! [`continuum_infer`]'s), the wire protocols
//! [`continuum_wire`], the worker [`continuum_worker`], the gateway [`continuum_gateway`] and the
//! load generator [`continuum_loadgen`]. The crate graph and what each crate may import are in
//! `docs/architecture.md`.

#![warn(missing_docs)]

pub use continuum_alloc::{alloc, oga_bench, placement};
pub use continuum_core::{
    admission, config, dispatch, feasibility, fixtures, load, metrics, mitigation, observe, policy,
    profiles, pull, rng, scenario, topology, workload,
};
pub use continuum_gateway as gateway;
pub use continuum_learn::{meta, train};
pub use continuum_loadgen as loadgen;
pub use continuum_sim as sim;
pub use continuum_worker as worker;
pub use continuum_worker::{inference, profiler};

pub mod allocator;
pub mod app;
pub mod cli;
pub mod report;
pub mod sweep;
