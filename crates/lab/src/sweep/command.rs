//! The arguments of `continuum sweep` (carried out by [`super::execute`]).

use clap::Subcommand;
use std::path::PathBuf;

/// `continuum sweep` subcommands.
#[derive(Debug, Subcommand)]
pub enum SweepCommand {
    /// Check a grid and print its jobs and cells as JSON (cells only once every job's output
    /// exists: the reports may read them).
    Plan {
        /// Grid file (YAML).
        grid: PathBuf,
        /// Sweep directory: says which cells are done.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Run one job of a grid (a `train` or `table` run), unless its output exists.
    Job {
        /// Grid file (YAML).
        grid: PathBuf,
        /// The job's key (`job-<index>`, as `plan` prints it).
        key: String,
    },
    /// Run one cell and write its file under `<dir>/cells/` (or print it with `--stdout`).
    Cell {
        /// Grid file (YAML).
        grid: PathBuf,
        /// The cell's id (`<report key>/<row>`, as `plan` prints it).
        id: String,
        /// Sweep directory.
        #[arg(long, required_unless_present = "stdout")]
        dir: Option<PathBuf>,
        /// Print the cell file on standard output instead of writing it.
        #[arg(long)]
        stdout: bool,
    },
    /// Merge the cells under `<dir>/cells/` into `<dir>/reports/<key>/` and `<dir>/sweep.json`.
    Merge {
        /// Grid file (YAML).
        grid: PathBuf,
        /// Sweep directory.
        #[arg(long)]
        dir: PathBuf,
    },
    /// Run a whole grid on this machine: its jobs, then every cell not already written (on
    /// `--threads` threads), then the merge. An interrupted run resumes where it stopped.
    /// `--quiet` or `--progress` applies to the jobs too, in place of their own.
    Run {
        /// Grid file (YAML).
        grid: PathBuf,
        /// Sweep directory.
        #[arg(long)]
        dir: PathBuf,
        /// Cells run at once (default: all cores). The reports do not depend on it.
        #[arg(long)]
        threads: Option<usize>,
        /// Progress on standard error (a bar of the cells; the jobs' own, unless a flag here
        /// overrides their command lines').
        #[command(flatten)]
        progress: continuum_term::ProgressArgs,
    },
}
