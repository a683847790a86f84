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
        // The reader of standard output went away (`continuum compare … | head`): stop quietly.
        Err(e) if broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// Whether `e` comes from writing to a pipe whose reader has closed it.
fn broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
