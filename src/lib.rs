//! continuum: an edge-cloud inference request dispatcher.
//!
//! This crate is the `continuum` command: it parses the command line ([`cli`]) and hands each
//! command to the crate that carries it out ([`app`]). The runs, reports, sweeps and trainings
//! it starts are [`continuum_lab`]'s (a sweep reads its grid's command lines through this
//! parser: [`sweep`]); the DeepRM reproduction is [`continuum_deeprm`]'s, the live allocator
//! [`continuum_alloc_live`]'s, the worker [`continuum_worker`]'s, the gateway
//! [`continuum_gateway`]'s and the load generator [`continuum_loadgen`]'s. Every crate is named
//! by its own path (no re-exports here); the crate graph and what each crate may import are in
//! `docs/architecture.md`.

#![warn(missing_docs)]
#![deny(unreachable_pub)]

pub mod app;
pub mod cli;
pub mod sweep;
