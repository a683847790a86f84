//! A line chart's lines: each series drawn in its look through at most [`LINE_POINTS`] of its
//! points, its markers on all or a staggered few of them, emphasised lines on top.

use crate::look::legend_order;
use crate::look::{Look, marker};
use crate::{Chart, Series, err};
use plotters::prelude::*;

/// Series with at most this many points get a marker on each point; longer ones on about
/// [`SPARSE_MARKERS`] of them.
const MARKER_MAX: usize = 40;
/// Markers on a series of more than [`MARKER_MAX`] points (about).
pub(crate) const SPARSE_MARKERS: usize = 12;
/// Lines of more points are drawn through every k-th of them (and the last), at most this many:
/// a thick line through points less than a pixel apart draws spikes at its joints.
const LINE_POINTS: usize = 500;

/// The points a line is drawn through: all of `points` when they are at most `max`, else
/// every k-th of them (k the smallest that keeps at most `max`) and the last.
pub(crate) fn thin(points: &[(f64, f64)], max: usize) -> Vec<(f64, f64)> {
    if points.len() <= max {
        return points.to_vec();
    }
    let k = points.len().div_ceil(max - 1);
    let mut out: Vec<(f64, f64)> = points.iter().step_by(k).copied().collect();
    if (points.len() - 1) % k != 0 {
        out.extend(points.last());
    }
    out
}

/// The points of a series that get a marker: all when at most [`MARKER_MAX`], else every k-th
/// (about [`SPARSE_MARKERS`] of them) from the `stagger`-th on modulo k, so that the markers of
/// lines on top of each other do not cover each other.
pub(crate) fn marked(points: &[(f64, f64)], stagger: usize) -> Vec<(f64, f64)> {
    let finite = |p: &&(f64, f64)| p.0.is_finite() && p.1.is_finite();
    if points.len() <= MARKER_MAX {
        return points.iter().filter(finite).copied().collect();
    }
    let k = points.len().div_ceil(SPARSE_MARKERS);
    (points.iter().skip(stagger % k).step_by(k))
        .filter(finite)
        .copied()
        .collect()
}

/// Draws `series` on `chart` in their `looks`, the first legend entry last (emphasised lines
/// lie on top): each line in its dash, then its markers ([`marked`], staggered by its style
/// index in `styles`).
pub(crate) fn draw_lines(
    chart: &mut Chart,
    series: &[Series],
    looks: &[Look],
    styles: &[usize],
) -> Result<(), String> {
    for &i in legend_order(series).iter().rev() {
        let (s, look) = (&series[i], looks[i]);
        let points = thin(&s.points, LINE_POINTS);
        match look.dash.pattern() {
            None => chart
                .draw_series(LineSeries::new(points, look.line()))
                .map(|_| ()),
            Some((on, off)) => chart
                .draw_series(DashedLineSeries::new(points, on, off, look.line()))
                .map(|_| ()),
        }
        .map_err(err)?;
        let marks = marked(&s.points, styles[i]);
        chart
            .draw_series(marks.into_iter().map(|p| marker(p, &look)))
            .map_err(err)?;
    }
    Ok(())
}
