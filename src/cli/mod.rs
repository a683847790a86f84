//! The `continuum` command line: `simulate` (one policy, a time series) and `compare` (every
//! policy on the same workload and seed).

mod args;
mod meta_steps;
mod meta_train;
mod names;
mod progress;
mod rows;
mod run;
mod sweep_args;
mod table;
mod topology;
mod train;
mod train_tapfinger;

pub use args::{Cli, Command, TrainArgs};

/// Checks a `--budget` value: a positive, finite number of simulated queries.
pub(crate) fn check_budget(b: f64) -> anyhow::Result<f64> {
    if b > 0.0 && b.is_finite() {
        Ok(b)
    } else {
        anyhow::bail!("--budget: expected a positive number of simulated queries, got {b}")
    }
}

/// Writes `text` and a newline to standard output. A reader that went away (`… | head`) comes
/// back as an `io::ErrorKind::BrokenPipe` error, which the binary's entry point turns into a
/// quiet exit instead of `println!`'s panic.
pub(crate) fn print(text: &str) -> Result<(), std::io::Error> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")?;
    out.flush()
}
pub use rows::compare_rows;
pub use run::execute;
pub use sweep_args::SweepCommand;
