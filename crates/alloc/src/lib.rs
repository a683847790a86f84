//! Allocation of capacity to demand, above dispatch: [`alloc`] is the sans-IO core of online
//! multi-resource allocation (OGASched and its heuristics), [`placement`] applies it to the
//! simulator's deployment slot by slot, and [`oga_bench`] computes OGASched's own comparison
//! (the `continuum oga-bench` command around it is `continuum-lab`'s).

#![warn(missing_docs)]
#![deny(unreachable_pub)]

pub mod alloc;
pub mod oga_bench;
pub mod placement;
