//! Merging a sweep's cells into its reports: each report equal, but for timings, to the one
//! `compare` writes for the same command line.

use super::cell::{CellSpec, cell_path, read_cell};
use super::grid::Grid;
use crate::report::{Report, SimSummary};
use anyhow::{Result, bail};
use serde::Serialize;
use std::path::Path;

/// One merged report in the sweep's index.
#[derive(Debug, Clone, Serialize)]
pub struct IndexEntry {
    /// The report's key.
    pub key: String,
    /// Each axis's name and the report's label on it.
    pub labels: Vec<(String, String)>,
    /// The `compare` command line it equals.
    pub command: String,
    /// Its JSON report, relative to the sweep directory.
    pub results: String,
}

/// The sweep's index (`<dir>/sweep.json`): every report, in grid order.
#[derive(Debug, Clone, Serialize)]
pub struct Index {
    /// The grid's name.
    pub grid: String,
    /// The grid's digest.
    pub digest: String,
    /// Cells merged.
    pub cells: usize,
    /// Reports.
    pub reports: Vec<IndexEntry>,
}

/// Merges the cells of `plan` found under `dir` into one report per report of `grid`. Refuses
/// a missing cell, a cell of another grid, and a cell whose row is not the one planned.
pub fn merge(grid: &Grid, plan: &[CellSpec], dir: &Path) -> Result<Vec<Report>> {
    let mut missing = Vec::new();
    let mut reports = Vec::new();
    for spec in &grid.reports {
        let mut parts: Vec<Report> = Vec::new();
        for c in plan.iter().filter(|c| c.report == spec.key) {
            let path = cell_path(dir, &c.id);
            if !path.exists() {
                missing.push(c.id.clone());
                continue;
            }
            let f = read_cell(&path)?;
            if f.grid != grid.name || f.digest != grid.digest {
                bail!(
                    "{}: a cell of grid `{}` (digest {}), not of `{}` (digest {}); use another directory or delete it",
                    path.display(),
                    f.grid,
                    f.digest,
                    grid.name,
                    grid.digest
                );
            }
            let is_bound = c.name == super::cell::BOUND_CELL && f.report.results.is_empty();
            let one_row = f.report.results.len() == 1 && f.report.results[0].policy == c.name;
            if f.cell != *c || !(one_row || is_bound && f.report.bound.is_some()) {
                bail!(
                    "{}: expected cell {} (row `{}`), found {} (row `{}`)",
                    path.display(),
                    c.id,
                    c.name,
                    f.cell.id,
                    f.cell.name
                );
            }
            parts.push(f.report);
        }
        if parts.is_empty() {
            continue;
        }
        let bound = parts.iter().find_map(|p| p.bound.clone());
        let parts: Vec<Report> = parts.into_iter().filter(|p| p.bound.is_none()).collect();
        let Some(first) = parts.first() else {
            bail!("report {}: only its bound cell ran", spec.key);
        };
        let mut merged = Report {
            topology: first.topology.clone(),
            seed: first.seed,
            lambda: first.lambda,
            lambda_profile: first.lambda_profile.clone(),
            duration_s: first.duration_s,
            own_bindings: first.own_bindings.clone(),
            load_view: first.load_view.clone(),
            results: Vec::new(),
            sim: SimSummary::of_cells(
                &parts.iter().map(|p| p.sim).collect::<Vec<_>>(),
                first.duration_s,
            ),
            bound: None,
        };
        for p in &parts {
            if (&p.topology, p.seed, p.duration_s)
                != (&merged.topology, merged.seed, merged.duration_s)
            {
                bail!("report {}: its cells describe different runs", spec.key);
            }
        }
        merged.results = parts.into_iter().flat_map(|p| p.results).collect();
        if let Some(b) = bound {
            merged.set_bound(b);
        }
        reports.push(merged);
    }
    if !missing.is_empty() {
        let shown: Vec<_> = missing.iter().take(5).cloned().collect();
        bail!(
            "{} of {} cells have no file under {} (e.g. {}): run them first",
            missing.len(),
            plan.len(),
            dir.join("cells").display(),
            shown.join(", ")
        );
    }
    Ok(reports)
}

/// Writes each merged report (results.json, results.csv and the plots, as `compare --out`
/// writes them) under `<dir>/reports/<key>/`, and the index `<dir>/sweep.json`.
pub fn write(grid: &Grid, plan: &[CellSpec], reports: &[Report], dir: &Path) -> Result<Index> {
    let mut entries = Vec::new();
    for (spec, report) in grid.reports.iter().zip(reports) {
        let sub = dir.join("reports").join(&spec.key);
        crate::run::write_outputs(report, &sub)?;
        entries.push(IndexEntry {
            key: spec.key.clone(),
            labels: spec.labels.clone(),
            command: format!("continuum {}", spec.argv.join(" ")),
            results: format!("reports/{}/results.json", spec.key),
        });
    }
    let index = Index {
        grid: grid.name.clone(),
        digest: grid.digest.clone(),
        cells: plan.len(),
        reports: entries,
    };
    let text = continuum_core::config::versioned_json(&index)?;
    super::cell::write_atomic(&dir.join("sweep.json"), &text)?;
    Ok(index)
}
