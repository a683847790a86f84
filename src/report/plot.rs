//! SVG plots of a report: success ratio and p99 latency over time (one line per policy) and
//! success ratio per application class (grouped bars, one per policy).

use super::Report;
use plotters::prelude::*;
use std::path::Path;

fn err<E: std::fmt::Display>(e: E) -> String {
    format!("cannot draw plot: {e}")
}

/// Writes `success_over_time.svg`-style plot of every policy's per-window success ratio.
pub fn plot_success_over_time(r: &Report, path: &Path) -> Result<(), String> {
    let title = format!(
        "Success ratio over time: {} (λ = {})",
        r.topology, r.lambda_profile
    );
    plot_over_time(
        r,
        path,
        &title,
        "success ratio",
        |w| w.success_ratio,
        Some(1.0),
    )
}

/// Writes `p99_over_time.svg`-style plot of every policy's per-window p99 latency.
pub fn plot_p99_over_time(r: &Report, path: &Path) -> Result<(), String> {
    let title = format!(
        "p99 latency of answered queries over time: {} (λ = {})",
        r.topology, r.lambda_profile
    );
    plot_over_time(r, path, &title, "p99 latency (ms)", |w| w.p99_ms, None)
}

/// One line per policy of `value` per window; the y axis from 0 to `y_max` (default: the
/// largest value, with room above).
fn plot_over_time(
    r: &Report,
    path: &Path,
    title: &str,
    y_desc: &str,
    value: impl Fn(&super::WindowPoint) -> f64,
    y_max: Option<f64>,
) -> Result<(), String> {
    let root = SVGBackend::new(path, (1000, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let t_max = r
        .results
        .iter()
        .flat_map(|p| p.per_window.last())
        .map(|w| w.t_s)
        .fold(0.0, f64::max)
        .max(1.0);
    let y_max = y_max.unwrap_or_else(|| {
        let top = r
            .results
            .iter()
            .flat_map(|p| p.per_window.iter().map(&value))
            .fold(0.0, f64::max);
        (top * 1.1).max(1.0)
    });
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..t_max, 0.0..y_max)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc(y_desc)
        .draw()
        .map_err(err)?;
    for (i, p) in r.results.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(
                p.per_window.iter().map(|w| (w.t_s, value(w))),
                color.stroke_width(2),
            ))
            .map_err(err)?
            .label(p.policy.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}

/// Writes a grouped bar chart: for each app, one bar per policy with its success ratio.
pub fn plot_success_per_app(r: &Report, path: &Path) -> Result<(), String> {
    let root = SVGBackend::new(path, (1200, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    // Bars on the left, the legend in a panel of its own on the right (bars reach 1.0).
    let (area, side) = root.split_horizontally(960);
    let apps: Vec<String> = r
        .results
        .first()
        .map(|p| p.per_app.iter().map(|a| a.app.clone()).collect())
        .unwrap_or_default();
    let n = apps.len().max(1) as f64;
    let labels = apps.clone();
    let mut chart = ChartBuilder::on(&area)
        .caption(
            format!(
                "Success ratio per application: {} (λ = {})",
                r.topology, r.lambda_profile
            ),
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..n, 0.0..1.0)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(apps.len() * 2 + 1)
        .x_label_formatter(&|x| {
            // Label only the centre of each group.
            let i = x.floor() as usize;
            if (x.fract() - 0.5).abs() < 1e-6 {
                labels.get(i).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_desc("success ratio")
        .draw()
        .map_err(err)?;
    let k = r.results.len().max(1) as f64;
    let width = 0.8 / k;
    for (j, p) in r.results.iter().enumerate() {
        let color = Palette99::pick(j).to_rgba();
        chart
            .draw_series(p.per_app.iter().enumerate().map(|(i, a)| {
                let x0 = i as f64 + 0.1 + j as f64 * width;
                Rectangle::new(
                    [(x0, 0.0), (x0 + width * 0.9, a.success_ratio)],
                    color.filled(),
                )
            }))
            .map_err(err)?;
        let y = 60 + 24 * j as i32;
        side.draw(&Rectangle::new([(8, y - 6), (22, y + 6)], color.filled()))
            .map_err(err)?;
        side.draw(&Text::new(
            p.policy.clone(),
            (30, y - 7),
            ("sans-serif", 14),
        ))
        .map_err(err)?;
    }
    root.present().map_err(err)
}
