//! The binary's entry point: parses the command line and hands each command to the module that
//! carries it out — `sweep` to [`crate::sweep`] (which runs its cells and jobs through
//! [`crate::cli`]), every other command to [`crate::cli`].

use crate::cli::{Cli, Command};
use anyhow::Result;
use clap::Parser;
use std::process::ExitCode;

/// Runs a parsed command.
pub fn execute(cli: &Cli) -> Result<()> {
    match &cli.command {
        Command::Sweep { cmd } => crate::sweep::execute(cmd),
        _ => crate::cli::execute(cli),
    }
}

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
