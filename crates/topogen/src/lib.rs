//! Topology files made by program rather than by hand: `generate` writes an ISP-shaped topology
//! of any size from fan-outs, link delays and per-site resources (`continuum topology
//! generate`), `import` turns a real network (Topology Zoo GML, networkx node-link JSON) into
//! one by stated rules (`continuum topology import`, docs/model.md §2.6).
//!
//! Both are sans-IO: options (and a network's text) in, topology YAML out. The text is an
//! ordinary topology file, which the caller validates with `continuum_core`'s
//! [`Topology`](continuum_core::topology::Topology) loader like a hand-written one; the model
//! itself, and everything that reads a topology, stays in the core.

#![warn(missing_docs)]
#![deny(unreachable_pub)]

pub mod generate;
pub mod import;
