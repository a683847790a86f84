//! Carrying out the parsed command: `simulate` and `compare` run their rows through
//! [`continuum_lab::run`] and print the report; every other command hands off to the crate or
//! module that owns it.

use super::args::{Cli, Command, JobsCmd};
use anyhow::{Result, bail};
use continuum_lab::report;
use continuum_lab::run::{Format, build_report, check_out_dir, write_outputs};
use continuum_lab::runner::Runner;

/// Runs the parsed command.
pub fn execute(cli: &Cli) -> Result<()> {
    let (runners, run, series): (Vec<Runner>, _, _) = match &cli.command {
        Command::Simulate { policy, run } => (super::rows::parse_rows(policy)?, run, true),
        Command::Compare { run, .. } => (
            super::rows::compare_rows(&cli.command)?.unwrap_or_default(),
            run,
            false,
        ),
        Command::Table(args) => return continuum_lab::table::execute(args),
        Command::Sweep { .. } => bail!("`sweep` is carried out by continuum::app::execute"),
        Command::Topology { cmd } => return super::topology::execute(cmd),
        Command::Train(args) => return continuum_lab::train::train(args),
        Command::Deeprm { cmd } => return continuum_deeprm::cli::execute(cmd),
        Command::MetaTrain(a) => return continuum_lab::train::meta_train(a),
        Command::TrainUniversal(a) => return continuum_lab::train::train_universal(a),
        Command::Worker { config } => return continuum_worker::run_from_file(config),
        Command::Gateway { config } => return continuum_gateway::run_from_file(config),
        Command::Allocator { config, slots } => {
            return continuum_alloc_live::run_from_file(config, *slots);
        }
        Command::Loadgen(args) => return continuum_loadgen::execute(args),
        Command::Live { cmd } => return super::live::execute(cmd),
        Command::Jobs { cmd } => {
            return match cmd {
                JobsCmd::Sim(c) => continuum_jobs::cli::execute(c),
                JobsCmd::Train(a) => continuum_lab::jobs_tune::train(a),
                JobsCmd::Evaluate(a) => continuum_lab::jobs_tune::evaluate(a),
                JobsCmd::Ml { cmd } => continuum_lab::jobs_tap::run(cmd),
            };
        }
        Command::Completions { shell } => return completions(*shell),
        Command::OgaBench(args) => return continuum_lab::oga_bench::execute(args),
        Command::Profile {
            models,
            out,
            reps,
            min_time_ms,
        } => {
            let opts = continuum_worker::profiler::ProfileOptions {
                reps: *reps,
                min_time: std::time::Duration::from_millis(*min_time_ms),
                ..Default::default()
            };
            return continuum_worker::profiler::run_cli(models, out, &opts);
        }
    };
    if runners.is_empty() {
        bail!("--policies: expected at least one policy name");
    }
    if let Some(dir) = &run.out {
        check_out_dir(dir)?;
    }
    let report = build_report(run, &runners)?;
    let text = match run.format {
        Format::Json => report.to_json(),
        Format::Csv => report::to_csv(&report),
        Format::Table if series => format!(
            "{}\n{}",
            report::to_time_series_text_table(&report),
            report::to_text_table(&report)
        ),
        Format::Table => report::to_text_table(&report),
    };
    super::print(text.trim_end())?;
    if let Some(dir) = &run.out {
        write_outputs(&report, dir)?;
        eprintln!(
            "wrote {}: results.json, results.csv, success_over_time.svg, success_per_app.svg, p99_over_time.svg",
            dir.display()
        );
    }
    Ok(())
}

/// Prints `shell`'s completion script for the whole command line.
fn completions(shell: clap_complete::Shell) -> Result<()> {
    let mut text = Vec::new();
    let mut cli = <super::Cli as clap::CommandFactory>::command();
    clap_complete::generate(shell, &mut cli, "continuum", &mut text);
    super::print(String::from_utf8_lossy(&text).trim_end())?;
    Ok(())
}
