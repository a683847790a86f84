//! The bench's SVGs: average reward over time (like OGASched's Fig. 2a) and regret / t.

use super::output::running_average;
use super::run::BenchResult;
use plotters::prelude::*;
use std::path::Path;

fn err<E: std::fmt::Display>(e: E) -> String {
    format!("cannot draw plot: {e}")
}

/// The y range covering `values` with a 5 % margin (a unit range around a constant).
fn span(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let m = ((hi - lo) * 0.05).max(1e-9 * hi.abs().max(1.0));
    if hi - lo < 1e-12 {
        (lo - 0.5, hi + 0.5)
    } else {
        (lo - m, hi + m)
    }
}

/// Draws `lines` (name, points) into `path` with the given caption and axis labels.
fn lines(
    path: &Path,
    caption: &str,
    y_desc: &str,
    series: &[(&str, Vec<(f64, f64)>)],
) -> Result<(), String> {
    let root = SVGBackend::new(path, (1000, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let t_max = series
        .iter()
        .flat_map(|s| s.1.last())
        .map(|p| p.0)
        .fold(1.0, f64::max);
    let (lo, hi) = span(series.iter().flat_map(|s| s.1.iter().map(|p| p.1)));
    // Headroom above the data for the legend, so that it never hides a line.
    let hi = hi + 0.3 * (hi - lo);
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(0.0..t_max, lo..hi)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("time slot t")
        .y_desc(y_desc)
        .draw()
        .map_err(err)?;
    for (i, (name, pts)) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
            .map_err(err)?
            .label(name.to_string())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}

/// Writes the average reward (1/t) Σ_{s ≤ t} q(s) of every allocator over time.
pub fn plot_average_reward(res: &BenchResult, caption: &str, path: &Path) -> Result<(), String> {
    let series: Vec<(&str, Vec<(f64, f64)>)> = res
        .runs
        .iter()
        .map(|r| {
            let avg = running_average(&r.rewards);
            let pts = avg
                .iter()
                .enumerate()
                .map(|(i, v)| ((i + 1) as f64, *v))
                .collect();
            (r.name, pts)
        })
        .collect();
    lines(
        path,
        &format!("Average reward over time: {caption}"),
        "average reward per slot",
        &series,
    )
}

/// Writes regret(t) / t of every allocator at the measured horizons.
pub fn plot_regret(res: &BenchResult, caption: &str, path: &Path) -> Result<(), String> {
    let series: Vec<(&str, Vec<(f64, f64)>)> = res
        .runs
        .iter()
        .map(|r| {
            let pts = res
                .regret
                .iter()
                .map(|p| (p.t as f64, p.regret[r.name] / p.t as f64))
                .collect();
            (r.name, pts)
        })
        .collect();
    lines(
        path,
        &format!("Regret / t against the best fixed allocation in hindsight: {caption}"),
        "regret(t) / t",
        &series,
    )
}
