//! SVG plots of a report: success ratio and p99 latency over time (one line per policy) and
//! success ratio per application class (one marker per policy).
//!
//! Every plot is about the same comparison: the learned rows (`dqn`, `dqn:<stem>`), the best
//! static policy of the report and the oracle are bold, listed first and named next to their
//! lines; the other rows are thinner context lines, each in a colour, dash and marker of its
//! own. Over time, each window's value stands at its window's mid-point (a window's ratio or
//! percentile is about the whole window), on an axis from the run's start to its end.

use super::Report;
use continuum_plot::{Axis, Emphasis, Figure, Format, Panel, Series};
use std::path::Path;

/// Whether the row `policy` is a learned agent's.
fn is_learned(policy: &str) -> bool {
    policy == "dqn" || policy.starts_with("dqn:")
}

/// The rows of a report, given as (policy, overall success ratio), in legend order with
/// their emphasis and legend name: the learned rows, the best static row (highest success
/// ratio of the rest but the oracle; the first on a tie), the oracle, then the others, faint,
/// in the report's order.
fn rows(policies: &[(&str, f64)]) -> Vec<(usize, Emphasis, String)> {
    let best_static = policies
        .iter()
        .enumerate()
        .filter(|(_, (p, _))| !is_learned(p) && *p != "oracle")
        .fold(None::<(usize, f64)>, |best, (i, &(_, s))| match best {
            Some((_, b)) if b >= s => best,
            _ => Some((i, s)),
        })
        .map(|(i, _)| i);
    let mut out: Vec<(usize, Emphasis, String)> = Vec::with_capacity(policies.len());
    let mut push = |i: usize, e: Emphasis, name: String| {
        if !out.iter().any(|o| o.0 == i) {
            out.push((i, e, name));
        }
    };
    for (i, (p, _)) in policies.iter().enumerate() {
        if is_learned(p) {
            push(i, Emphasis::Bold, format!("{p} (learned)"));
        }
    }
    if let Some(i) = best_static {
        push(
            i,
            Emphasis::Bold,
            format!("{} (best static)", policies[i].0),
        );
    }
    for (i, (p, _)) in policies.iter().enumerate() {
        if *p == "oracle" {
            push(i, Emphasis::Bold, p.to_string());
        }
    }
    for (i, (p, _)) in policies.iter().enumerate() {
        push(i, Emphasis::Faint, p.to_string());
    }
    out
}

/// [`rows`] of the report `r`.
fn report_rows(r: &Report) -> Vec<(usize, Emphasis, String)> {
    let policies: Vec<(&str, f64)> = r
        .results
        .iter()
        .map(|p| (p.policy.as_str(), p.success_ratio))
        .collect();
    rows(&policies)
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
        title,
        Axis::new("success ratio of the window (%)", Format::Percent),
        |w| w.success_ratio,
    )
}

/// Writes `p99_over_time.svg`-style plot of every policy's per-window p99 latency.
pub fn plot_p99_over_time(r: &Report, path: &Path) -> Result<(), String> {
    let title = format!(
        "p99 latency of answered queries over time: {} (λ = {})",
        r.topology, r.lambda_profile
    );
    plot_over_time(
        r,
        path,
        title,
        Axis::new("p99 latency of the window (ms)", Format::Number),
        |w| w.p99_ms,
    )
}

/// The span (start, end) of each window of a run of `duration_s` whose windows start at
/// `starts`, s: each ends where the next one starts, the last at the run's end (a window
/// length after its start where the run's end is not past it).
fn window_spans(starts: &[f64], duration_s: f64) -> Vec<(f64, f64)> {
    let step = match starts {
        [.., a, b] => b - a,
        [a] if duration_s > *a => duration_s - a,
        _ => 1.0,
    };
    (starts.iter().enumerate())
        .map(|(i, &t)| {
            let end = match starts.get(i + 1) {
                Some(&next) => next,
                None if duration_s > t => duration_s,
                None => t + step,
            };
            (t, end)
        })
        .collect()
}

/// The points of `value` per window of `windows` (a run of `duration_s`), each at its
/// window's mid-point.
fn window_points(
    windows: &[super::WindowPoint],
    duration_s: f64,
    value: impl Fn(&super::WindowPoint) -> f64,
) -> Vec<(f64, f64)> {
    let starts: Vec<f64> = windows.iter().map(|w| w.t_s).collect();
    (window_spans(&starts, duration_s).into_iter().zip(windows))
        .map(|((a, b), w)| ((a + b) / 2.0, value(w)))
        .collect()
}

/// The time axis of a run's plots over time, its windows starting at `starts` and the run
/// lasting `duration_s`: from the run's start to its end (its last window's, where that is
/// later).
fn time_axis(starts: &[f64], duration_s: f64) -> Axis {
    let axis = Axis::new(
        "time since start (s; each point at its window's middle)",
        Format::Number,
    );
    match (starts.first(), window_spans(starts, duration_s).last()) {
        (Some(&start), Some(&(_, end))) => axis.with_range(start.min(0.0), end),
        _ => axis,
    }
}

/// One line per policy of `value` per window, each window's value at its mid-point.
fn plot_over_time(
    r: &Report,
    path: &Path,
    title: String,
    y: Axis,
    value: impl Fn(&super::WindowPoint) -> f64,
) -> Result<(), String> {
    let starts: Vec<f64> = (r.results.first())
        .map(|p| p.per_window.iter().map(|w| w.t_s).collect())
        .unwrap_or_default();
    let series = report_rows(r)
        .into_iter()
        .map(|(i, emphasis, name)| {
            let pts = window_points(&r.results[i].per_window, r.duration_s, &value);
            Series::new(name, pts, emphasis)
        })
        .collect();
    continuum_plot::line_chart(
        path,
        &Figure {
            title,
            x: time_axis(&starts, r.duration_s),
            panels: vec![Panel { y, series }],
        },
    )
}

/// Writes a chart of each policy's success ratio per app: one column per app, one marker per
/// policy in it.
pub fn plot_success_per_app(r: &Report, path: &Path) -> Result<(), String> {
    let categories: Vec<String> = r
        .results
        .first()
        .map(|p| p.per_app.iter().map(|a| a.app.clone()).collect())
        .unwrap_or_default();
    let series = report_rows(r)
        .into_iter()
        .map(|(i, emphasis, name)| {
            let pts = r.results[i]
                .per_app
                .iter()
                .filter_map(|a| {
                    let c = categories.iter().position(|c| *c == a.app)?;
                    Some((c as f64, a.success_ratio))
                })
                .collect();
            Series::new(name, pts, emphasis)
        })
        .collect();
    let figure = Figure {
        title: format!(
            "Success ratio per application: {} (λ = {})",
            r.topology, r.lambda_profile
        ),
        x: Axis::new("application", Format::Number),
        panels: vec![Panel {
            y: Axis::new("success ratio (%)", Format::Percent),
            series,
        }],
    };
    continuum_plot::category_chart(path, &figure, &categories)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::WindowPoint;

    /// Windows of 5 s starting at `starts`, each with success ratio `t_s / 100`.
    fn windows(starts: &[f64]) -> Vec<WindowPoint> {
        (starts.iter())
            .map(|&t_s| WindowPoint {
                t_s,
                success_ratio: t_s / 100.0,
                offered: 10,
                success: 9,
                p99_ms: 50.0,
            })
            .collect()
    }

    #[test]
    fn a_window_is_drawn_at_its_middle_and_the_last_reaches_the_run_end() {
        // A 30 s run in 5 s windows: points at 2.5, 7.5, …, 27.5, each with its own value.
        let w = windows(&[0.0, 5.0, 10.0, 15.0, 20.0, 25.0]);
        let pts = window_points(&w, 30.0, |w| w.success_ratio);
        let xs: Vec<f64> = pts.iter().map(|p| p.0).collect();
        assert_eq!(xs, [2.5, 7.5, 12.5, 17.5, 22.5, 27.5]);
        assert!(*xs.last().unwrap() >= 27.5);
        assert_eq!(pts[5].1, 0.25);
        assert_eq!(
            window_spans(&[0.0, 5.0, 10.0], 15.0).last(),
            Some(&(10.0, 15.0))
        );
        // A run that ends within its last window: that window ends with the run.
        let spans = window_spans(&[0.0, 5.0, 10.0], 12.0);
        assert_eq!(spans, [(0.0, 5.0), (5.0, 10.0), (10.0, 12.0)]);
        // No run end past the last start: a window length after it.
        assert_eq!(window_spans(&[0.0, 5.0], 0.0).last(), Some(&(5.0, 10.0)));
        assert_eq!(window_spans(&[0.0], 30.0), [(0.0, 30.0)]);
        assert!(window_spans(&[], 30.0).is_empty());
    }

    #[test]
    fn the_time_axis_spans_the_whole_run() {
        let starts = [0.0, 5.0, 10.0, 15.0, 20.0, 25.0];
        assert_eq!(time_axis(&starts, 30.0).range, Some((0.0, 30.0)));
        assert_eq!(time_axis(&starts, 27.0).range, Some((0.0, 27.0)));
        assert_eq!(time_axis(&[], 30.0).range, None);
    }

    #[test]
    fn learned_best_static_and_oracle_are_bold_and_first() {
        let policies = [
            ("random", 0.5),
            ("least-impedance", 0.91),
            ("oracle", 0.99),
            ("dqn:a", 0.93),
            ("greedy", 0.95),
            ("dqn", 0.94),
        ];
        let got: Vec<(usize, Emphasis, String)> = rows(&policies);
        let bold: Vec<&str> = got
            .iter()
            .filter(|r| r.1 == Emphasis::Bold)
            .map(|r| r.2.as_str())
            .collect();
        assert_eq!(
            bold,
            [
                "dqn:a (learned)",
                "dqn (learned)",
                "greedy (best static)",
                "oracle"
            ]
        );
        let faint: Vec<usize> = got
            .iter()
            .filter(|r| r.1 == Emphasis::Faint)
            .map(|r| r.0)
            .collect();
        assert_eq!(faint, [0, 1]);
    }
}
