//! continuum: an edge-cloud inference request dispatcher.
//!
//! This crate is the `continuum` command ([`app`], [`cli`], [`sweep`]); the runs it makes and
//! their reports are [`continuum_lab`]'s, the live allocator [`continuum_alloc_live`]'s.
//! Everything else is a crate of its own, named by its own path (no re-exports here): the
//! sans-IO core [`continuum_core`], the simulator [`continuum_sim`], allocation
//! [`continuum_alloc`], experiments and their reports [`continuum_lab`], training
//! [`continuum_learn`], the trained agents as a dispatcher runs them [`continuum_infer`], the
//! DeepRM reproduction [`continuum_deeprm`], the wire protocols [`continuum_wire`], the worker
//! [`continuum_worker`], the gateway [`continuum_gateway`] and the load generator
//! [`continuum_loadgen`]. The crate graph and what each crate may import are in
//! `docs/architecture.md`.

#![warn(missing_docs)]
#![deny(unreachable_pub)]

pub mod app;
pub mod cli;
pub mod sweep;
