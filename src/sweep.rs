//! `continuum sweep`: the grid's reports and jobs are this binary's command lines, read by its
//! own parser; the sweep itself is [`continuum_lab::sweep`]'s.

use crate::cli::{Cli, Command};
use anyhow::{Result, bail};
use clap::Parser;
use continuum_lab::run::RunArgs;
use continuum_lab::runner::Runner;
use continuum_lab::sweep::{CommandLine, SweepCommand};

/// Runs a `sweep` subcommand.
pub fn execute(cmd: &SweepCommand) -> Result<()> {
    continuum_lab::sweep::execute(cmd, &Binary)
}

/// This binary's command line, as a grid names it.
struct Binary;

/// Parses `argv` (after the program name).
fn parse(argv: &[String]) -> std::result::Result<Cli, clap::Error> {
    Cli::try_parse_from(std::iter::once("continuum".to_string()).chain(argv.iter().cloned()))
}

impl CommandLine for Binary {
    fn check(&self, argv: &[String]) -> std::result::Result<(), String> {
        parse(argv).map(|_| ()).map_err(|e| {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("").trim();
            first.strip_prefix("error: ").unwrap_or(first).to_string()
        })
    }

    fn compare(&self, argv: &[String]) -> Result<(RunArgs, Vec<Runner>)> {
        let cli = parse(argv).map_err(|e| anyhow::anyhow!("{e}"))?;
        let rows = crate::cli::compare_rows(&cli.command)?.unwrap_or_default();
        match cli.command {
            Command::Compare { run, .. } => Ok((run, rows)),
            _ => bail!("expected a `compare` command line"),
        }
    }

    /// A job is a `train` or `table` run (the grid refuses any other command), which
    /// [`crate::cli::execute`] carries out.
    fn run(&self, argv: &[String]) -> Result<()> {
        let cli = parse(argv).map_err(|e| anyhow::anyhow!("{e}"))?;
        crate::cli::execute(&cli)
    }
}
