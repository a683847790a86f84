//! OGASched's comparison (its Fig. 2a and regret) as a computation: a synthetic setting drawn
//! from the paper's Table 2 ranges ([`synthetic`]), every allocator of [`crate::alloc`] run on
//! its trace, and each one's regret against the best fixed allocation in hindsight ([`run()`]).
//! The command that runs it, `continuum oga-bench` (its options, report and SVGs), is
//! `continuum-lab`'s.

mod run;
pub mod synthetic;

pub use run::{AllocatorRun, BenchConfig, BenchResult, RegretPoint, horizons, run};
