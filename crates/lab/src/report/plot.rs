//! SVG plots of a report: success ratio and p99 latency over time (one line per policy) and
//! success ratio per application class (one marker per policy).
//!
//! Every plot is about the same comparison: the learned rows (`dqn`, `dqn:<stem>`), the best
//! static policy of the report and the oracle are bold and listed first; the other rows are
//! faint grey context.

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

/// One line per policy of `value` per window against the window's start.
fn plot_over_time(
    r: &Report,
    path: &Path,
    title: String,
    y: Axis,
    value: impl Fn(&super::WindowPoint) -> f64,
) -> Result<(), String> {
    let series = report_rows(r)
        .into_iter()
        .map(|(i, emphasis, name)| {
            let pts = r.results[i]
                .per_window
                .iter()
                .map(|w| (w.t_s, value(w)))
                .collect();
            Series::new(name, pts, emphasis)
        })
        .collect();
    continuum_plot::line_chart(
        path,
        &Figure {
            title,
            x: Axis::new("time since start (s)", Format::Number),
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
