//! The `continuum` command line: `simulate` (one policy, a time series) and `compare` (every
//! policy on the same workload and seed).

mod allocated;
mod args;
pub mod deeprm;
mod deeprm_eval;
mod meta_steps;
mod meta_train;
mod rows;
mod run;
mod runner;
mod table;
mod topology;
mod train;
mod train_tapfinger;

pub use args::{Cli, Command, Format, RunArgs, TrainArgs};
pub use rows::compare_rows;
pub use run::{bound_report, build_report, build_report_with, execute, write_outputs};
pub use runner::Runner;

use clap::Parser;
use std::process::ExitCode;

/// Entry point of the binary: parses arguments, runs, prints errors as `error: …`.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match execute(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}
