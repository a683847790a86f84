//! Sweeps (`continuum sweep`): a grid file expands into reports and jobs; each row of each
//! report is a cell, run alone and written as its own file; the merge assembles the cells into
//! the reports `compare` would write. Cells run locally on a thread pool (`sweep run`) or on a
//! Ray cluster through the Python driver (`python/continuum_ray`), which calls `sweep plan`,
//! `sweep job` and `sweep cell` and gathers the files (docs/scale-out.md).
//!
//! A grid's reports and jobs are `continuum` command lines; the sweep reads them through
//! [`CommandLine`], which the binary implements with its own parser, so a grid accepts exactly
//! what the command line accepts.

pub mod cell;
mod command;
pub mod grid;
pub mod merge;

pub use command::SweepCommand;

use crate::run::RunArgs;
use crate::runner::Runner;
use anyhow::{Context, Result};
use cell::{CellSpec, cell_path, plan, run_cell, write_atomic};
use continuum_term::ProgressArgs;
use grid::Grid;
use rayon::prelude::*;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The command line a grid's reports and jobs are written in (the binary's parser).
pub trait CommandLine: Sync {
    /// Checks that `argv` (after the program name) parses; the parser's one-line message if
    /// not.
    fn check(&self, argv: &[String]) -> std::result::Result<(), String>;
    /// The run options and rows of a `compare` command line, as `compare` builds them.
    fn compare(&self, argv: &[String]) -> Result<(RunArgs, Vec<Runner>)>;
    /// Runs a job's command line (a `train` or `table` run) in this process.
    fn run(&self, argv: &[String]) -> Result<()>;
}

/// `sweep plan`'s output.
#[derive(Debug, Serialize)]
struct PlanOut {
    grid: String,
    digest: String,
    jobs: Vec<JobOut>,
    /// `None` while some job's output is missing.
    cells: Option<Vec<CellOut>>,
}

#[derive(Debug, Serialize)]
struct JobOut {
    key: String,
    out: PathBuf,
    command: String,
    done: bool,
}

#[derive(Debug, Serialize)]
struct CellOut {
    #[serde(flatten)]
    cell: CellSpec,
    done: bool,
}

/// Runs a `sweep` subcommand.
pub fn execute(cmd: &SweepCommand, cl: &dyn CommandLine) -> Result<()> {
    match cmd {
        SweepCommand::Plan { grid, dir } => {
            let g = Grid::load(grid, cl)?;
            let jobs: Vec<JobOut> = g
                .jobs
                .iter()
                .map(|j| JobOut {
                    key: j.key.clone(),
                    out: j.out.clone(),
                    command: format!("continuum {}", j.argv.join(" ")),
                    done: j.out.exists(),
                })
                .collect();
            let cells = if jobs.iter().all(|j| j.done) {
                Some(
                    plan(&g, cl)?
                        .into_iter()
                        .map(|c| CellOut {
                            done: dir.as_ref().is_some_and(|d| cell_path(d, &c.id).exists()),
                            cell: c,
                        })
                        .collect(),
                )
            } else {
                None
            };
            let out = PlanOut {
                grid: g.name.clone(),
                digest: g.digest.clone(),
                jobs,
                cells,
            };
            crate::print(&serde_json::to_string_pretty(&out)?)?;
            Ok(())
        }
        SweepCommand::Job { grid, key } => {
            let g = Grid::load(grid, cl)?;
            let job = g
                .jobs
                .iter()
                .find(|j| j.key == *key)
                .with_context(|| format!("grid `{}` has no job `{key}`", g.name))?;
            run_job(job, None, cl)
        }
        SweepCommand::Cell {
            grid,
            id,
            dir,
            stdout,
        } => {
            let g = Grid::load(grid, cl)?;
            let text = serde_json::to_string_pretty(&run_cell(&g, id, cl)?)?;
            match dir {
                Some(d) if !stdout => write_atomic(&cell_path(d, id), &text),
                _ => crate::print(&text).map_err(Into::into),
            }
        }
        SweepCommand::Merge { grid, dir } => {
            let g = Grid::load(grid, cl)?;
            let p = plan(&g, cl)?;
            let reports = merge::merge(&g, &p, dir)?;
            merge::write(&g, &p, &reports, dir)?;
            eprintln!(
                "merged {} cells into {} reports under {}",
                p.len(),
                reports.len(),
                dir.join("reports").display()
            );
            Ok(())
        }
        SweepCommand::Run {
            grid,
            dir,
            threads,
            progress,
        } => run_local(grid, dir, *threads, *progress, cl),
    }
}

/// Runs `job` in this process unless its output exists; `progress`, when given, replaces the
/// progress flags of its command line.
fn run_job(
    job: &grid::JobSpec,
    progress: Option<ProgressArgs>,
    cl: &dyn CommandLine,
) -> Result<()> {
    if job.out.exists() {
        eprintln!("{}: {} exists, skipped", job.key, job.out.display());
        return Ok(());
    }
    let argv = match progress {
        Some(p) => with_progress(&job.argv, p),
        None => job.argv.clone(),
    };
    cl.run(&argv)
        .with_context(|| format!("{}: continuum {}", job.key, job.argv.join(" ")))
}

/// `argv` with its progress flags replaced by those of `p` (none given: `argv` as it is).
fn with_progress(argv: &[String], p: ProgressArgs) -> Vec<String> {
    let flag = match (p.quiet, p.progress) {
        (true, _) => "--quiet",
        (false, true) => "--progress",
        (false, false) => return argv.to_vec(),
    };
    argv.iter()
        .filter(|a| *a != "--quiet" && *a != "--progress")
        .cloned()
        .chain(std::iter::once(flag.to_string()))
        .collect()
}

/// `sweep run`: jobs in order, then the cells not yet written in parallel, then the merge.
fn run_local(
    grid: &Path,
    dir: &Path,
    threads: Option<usize>,
    progress: ProgressArgs,
    cl: &dyn CommandLine,
) -> Result<()> {
    let g = Grid::load(grid, cl)?;
    for j in &g.jobs {
        run_job(j, Some(progress), cl)?;
    }
    let p = plan(&g, cl)?;
    let todo: Vec<&CellSpec> = p
        .iter()
        .filter(|c| !cell_path(dir, &c.id).exists())
        .collect();
    let pool = crate::thread_pool(threads)?;
    let bar = progress.bar(
        todo.len() as u64,
        "{elapsed_precise} [{bar:40}] {pos}/{len} cells ({eta} left)",
        "{pos}/{len} cells ({eta} left)",
    );
    pool.install(|| {
        todo.par_iter().try_for_each(|c| -> Result<()> {
            let f = run_cell(&g, &c.id, cl)?;
            write_atomic(&cell_path(dir, &c.id), &serde_json::to_string_pretty(&f)?)?;
            bar.inc(1);
            Ok(())
        })
    })?;
    bar.finish_and_clear();
    let reports = merge::merge(&g, &p, dir)?;
    merge::write(&g, &p, &reports, dir)?;
    eprintln!(
        "{} cells ({} run now, {} already written) merged into {} reports under {}",
        p.len(),
        todo.len(),
        p.len() - todo.len(),
        reports.len(),
        dir.join("reports").display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_runs_progress_flags_replace_its_jobs() {
        let argv: Vec<String> = ["train", "t.yaml", "--progress", "--out", "a.dqn"]
            .map(String::from)
            .to_vec();
        assert_eq!(with_progress(&argv, ProgressArgs::default()), argv);
        assert_eq!(
            with_progress(&argv, ProgressArgs::QUIET),
            ["train", "t.yaml", "--out", "a.dqn", "--quiet"]
        );
        let quiet: Vec<String> = ["table", "--quiet"].map(String::from).to_vec();
        let lines = ProgressArgs {
            quiet: false,
            progress: true,
        };
        assert_eq!(with_progress(&quiet, lines), ["table", "--progress"]);
    }
}
