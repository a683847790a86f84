//! The `continuum` command line: `simulate` (one policy, a time series) and `compare` (every
//! policy on the same workload and seed).

mod args;
mod live;
mod names;
mod rows;
mod run;
mod topology;

pub use args::{Cli, Command};

pub(crate) use continuum_lab::print;
pub use rows::compare_rows;
pub use run::execute;
