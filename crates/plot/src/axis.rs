//! The axes' ranges and tick labels: the x range over the data, the y range zoomed to it (or
//! an axis' fixed range), and tick labels printed to the precision of their step.

use crate::{Axis, Format, Series};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

/// Tick labels wanted on the x and y axes (at most).
pub(crate) const X_TICKS: usize = 10;
pub(crate) const Y_TICKS: usize = 7;
/// Fraction of the data's span added below and above it on a zoomed axis.
const MARGIN: f64 = 0.06;

/// The smallest and largest finite of `values`, if any.
fn extent(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(None, |e, v| match e {
            None => Some((v, v)),
            Some((a, b)) => Some((v.min(a), v.max(b))),
        })
}

/// The range an axis shows for `values`: their minimum and maximum widened by a small margin
/// on both sides (a constant gets a range around it; no finite value, 0–1).
pub fn zoomed_range(values: impl IntoIterator<Item = f64>) -> (f64, f64) {
    let Some((lo, hi)) = extent(values) else {
        return (0.0, 1.0);
    };
    let span = hi - lo;
    if span <= 1e-9 * hi.abs().max(1.0) {
        let d = if hi.abs() > 0.0 { 0.05 * hi.abs() } else { 0.5 };
        return (lo - d, hi + d);
    }
    (lo - MARGIN * span, hi + MARGIN * span)
}

/// The range an x axis shows for `values`: their minimum and maximum exactly; for a single
/// value, it ± one unit of its magnitude (the largest power of ten not above it), cut at 0 so
/// that a value of one sign never shows the other (a lone episode 0 shows 0–1, never negative
/// episodes); no finite value, 0–1.
pub fn x_range(values: impl IntoIterator<Item = f64>) -> (f64, f64) {
    match extent(values) {
        None => (0.0, 1.0),
        Some((lo, hi)) if lo < hi => (lo, hi),
        Some((0.0, _)) => (0.0, 1.0),
        Some((v, _)) => {
            let unit = 10f64.powf(v.abs().log10().floor());
            if v > 0.0 {
                ((v - unit).max(0.0), v + unit)
            } else {
                (v - unit, (v + unit).min(0.0))
            }
        }
    }
}

/// The range `axis` shows for `series`: its fixed range, else [`zoomed_range`] of their y
/// values.
pub(crate) fn y_range(axis: &Axis, series: &[Series]) -> (f64, f64) {
    axis.fixed()
        .unwrap_or_else(|| zoomed_range(series.iter().flat_map(|s| s.points.iter().map(|p| p.1))))
}

/// The decimals a tick label on an axis over `lo..hi` with at most `ticks` ticks needs, as
/// printed in `format`: those of the step between the ticks plotters draws there.
pub fn tick_decimals(lo: f64, hi: f64, ticks: usize, format: Format) -> usize {
    let keys = RangedCoordf64::from(lo..hi).key_points(ticks);
    let step = keys
        .windows(2)
        .map(|w| w[1] - w[0])
        .fold(f64::INFINITY, f64::min);
    if !step.is_finite() || step <= 0.0 {
        return 2;
    }
    let step = match format {
        Format::Number => step,
        Format::Percent => step * 100.0,
    };
    (-step.log10() - 1e-6).ceil().max(0.0) as usize
}

/// A tick label: `v` printed in `format` with `decimals` decimals (never `-0`).
pub fn tick_label(v: f64, decimals: usize, format: Format) -> String {
    let (v, unit) = match format {
        Format::Number => (v, ""),
        Format::Percent => (v * 100.0, " %"),
    };
    let s = format!("{v:.decimals$}");
    let s = if s
        .trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        s.trim_start_matches('-').to_string()
    } else {
        s
    };
    format!("{s}{unit}")
}
