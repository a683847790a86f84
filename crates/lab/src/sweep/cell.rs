//! Cells, the unit of work of a sweep: one row of one report, run alone, and the file that
//! carries its result to the merge.

use super::CommandLine;
use super::grid::Grid;
use crate::report::Report;
use crate::run::RunArgs;
use crate::runner::Runner;
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One cell of a planned grid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellSpec {
    /// `<report key>/<row>`: unique within the grid.
    pub id: String,
    /// The report's key.
    pub report: String,
    /// The row's index in the report.
    pub row: usize,
    /// The row's name (as the report names it).
    pub name: String,
}

/// What a cell file holds: its place in the grid and its one-row report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellFile {
    /// The grid's name.
    pub grid: String,
    /// The grid's digest ([`Grid::digest`]): a cell of another grid is refused at merge.
    pub digest: String,
    /// The cell.
    pub cell: CellSpec,
    /// The report of the row alone (its `sim` timings are this cell's).
    pub report: Report,
}

/// The run options and rows of report `r` of `grid`, built as `compare` builds them.
pub fn report_rows(grid: &Grid, r: usize, cl: &dyn CommandLine) -> Result<(RunArgs, Vec<Runner>)> {
    let spec = &grid.reports[r];
    let (run, rows) = cl
        .compare(&spec.argv)
        .with_context(|| format!("{}: report {}", grid.path.display(), spec.key))?;
    if rows.is_empty() {
        bail!(
            "{}: report {}: expected at least one row (policies, configs or agents)",
            grid.path.display(),
            spec.key
        );
    }
    Ok((run, rows))
}

/// Every cell of `grid`, in report order then row order. Builds every report's rows (so an
/// unknown policy or a missing checkpoint is refused here, before any cell runs) and loads
/// every distinct scenario once (an unknown topology, profile or workload likewise).
pub fn plan(grid: &Grid, cl: &dyn CommandLine) -> Result<Vec<CellSpec>> {
    let mut cells = Vec::new();
    let mut loaded = std::collections::HashSet::new();
    for (r, spec) in grid.reports.iter().enumerate() {
        let (run, rows) = report_rows(grid, r, cl)?;
        let files = (
            run.topology.clone(),
            run.profiles.clone(),
            run.workload.clone(),
        );
        if loaded.insert(files) {
            continuum_sim::Scenario::load(&run.topology, &run.profiles, &run.workload)
                .with_context(|| format!("{}: report {}", grid.path.display(), spec.key))?;
        }
        for (i, row) in rows.iter().enumerate() {
            cells.push(CellSpec {
                id: format!("{}/{i}", spec.key),
                report: spec.key.clone(),
                row: i,
                name: row.name(),
            });
        }
        if run.bound {
            // The bound is a cell of its own, after the rows.
            cells.push(CellSpec {
                id: format!("{}/{}", spec.key, rows.len()),
                report: spec.key.clone(),
                row: rows.len(),
                name: BOUND_CELL.into(),
            });
        }
    }
    Ok(cells)
}

/// The name of a report's bound cell (`--bound`).
pub const BOUND_CELL: &str = "bound";

/// Runs cell `id` (`<report key>/<row>`) of `grid` on one thread.
pub fn run_cell(grid: &Grid, id: &str, cl: &dyn CommandLine) -> Result<CellFile> {
    let (key, row) = id
        .rsplit_once('/')
        .and_then(|(k, r)| Some((k, r.parse::<usize>().ok()?)))
        .with_context(|| format!("cell `{id}`: expected `<report key>/<row>`"))?;
    let (r, _) = grid.report(key)?;
    let (run, rows) = report_rows(grid, r, cl)?;
    let cells = rows.len() + usize::from(run.bound);
    if row >= cells {
        bail!("cell `{id}`: report {key} has {cells} cells");
    }
    let mut run = run;
    run.threads = Some(1);
    run.bound = false;
    run.progress = continuum_term::ProgressArgs::QUIET;
    let (report, name) = if row == rows.len() {
        (crate::run::bound_report(&run)?, BOUND_CELL.to_string())
    } else {
        let r = crate::run::build_report(&run, &rows[row..row + 1])?;
        (r, rows[row].name())
    };
    Ok(CellFile {
        grid: grid.name.clone(),
        digest: grid.digest.clone(),
        cell: CellSpec {
            id: id.to_string(),
            report: key.to_string(),
            row,
            name,
        },
        report,
    })
}

/// Where cell `id`'s file lies under the sweep directory `dir`.
pub fn cell_path(dir: &Path, id: &str) -> PathBuf {
    let (key, row) = id.rsplit_once('/').unwrap_or((id, "0"));
    dir.join("cells").join(key).join(format!("{row}.json"))
}

/// Writes `text` to `path` whole or not at all (a temporary file renamed into place), so that
/// an interrupted sweep never leaves a half-written cell.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

/// Reads a cell file; its grid and digest are checked by the merge.
pub fn read_cell(path: &Path) -> Result<CellFile> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{}: not a cell file", path.display()))
}
