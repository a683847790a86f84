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
    print_warnings(&cli.command);
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

/// Prints the libraries' warnings (a deprecated key in an input file, with its `file:line:col`)
/// on standard error, for the commands that set up no logging of their own: the gateway, the
/// worker and the profiler do (`RUST_LOG` chooses more).
fn print_warnings(command: &Command) {
    if matches!(
        command,
        Command::Worker { .. } | Command::Gateway { .. } | Command::Profile { .. }
    ) {
        return;
    }
    let filter =
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .without_time()
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

/// Whether `e` comes from writing to a pipe whose reader has closed it.
fn broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
