//! The bench's SVGs: average reward over time (like OGASched's Fig. 2a) and regret / t.

use super::output::running_average;
use continuum_alloc::oga_bench::{AllocatorRun, BenchResult};
use continuum_plot::{Axis, Emphasis, Figure, Format, Panel, Series};
use std::path::Path;

/// Each run's index in `res` in legend order with its emphasis and legend name: OGASched's
/// two allocators (`oga`, `oga-lookahead`) and the best heuristic (highest average reward
/// among the registered ones, ablations aside; the first on a tie) bold, the other heuristics
/// faint.
fn rows(res: &BenchResult) -> Vec<(usize, Emphasis, String)> {
    let is_oga = |name: &str| name == "oga" || name == "oga-lookahead";
    let is_ablation = |name: &str| continuum_alloc::alloc::ABLATIONS.contains(&name);
    let best = res
        .runs
        .iter()
        .enumerate()
        .filter(|(_, r)| !is_oga(r.name) && !is_ablation(r.name))
        .fold(None::<(usize, f64)>, |best, (i, r)| match best {
            Some((_, b)) if b >= r.average() => best,
            _ => Some((i, r.average())),
        })
        .map(|(i, _)| i);
    let mut out: Vec<(usize, Emphasis, String)> = res
        .runs
        .iter()
        .enumerate()
        .filter(|(_, r)| is_oga(r.name))
        .map(|(i, r)| (i, Emphasis::Bold, r.name.to_string()))
        .collect();
    if let Some(i) = best {
        let name = format!("{} (best heuristic)", res.runs[i].name);
        out.push((i, Emphasis::Bold, name));
    }
    for (i, r) in res.runs.iter().enumerate() {
        if !out.iter().any(|o| o.0 == i) {
            out.push((i, Emphasis::Faint, r.name.to_string()));
        }
    }
    out
}

/// Draws one line per run, `points` of each, into `path`.
fn lines(
    res: &BenchResult,
    path: &Path,
    title: String,
    y: Axis,
    points: impl Fn(&AllocatorRun) -> Vec<(f64, f64)>,
) -> Result<(), String> {
    let series = rows(res)
        .into_iter()
        .map(|(i, emphasis, name)| Series::new(name, points(&res.runs[i]), emphasis))
        .collect();
    continuum_plot::line_chart(
        path,
        &Figure {
            title,
            x: Axis::new("time slot t", Format::Number),
            panels: vec![Panel { y, series }],
        },
    )
}

/// Writes the average reward (1/t) Σ_{s ≤ t} q(s) of every allocator over time.
pub(super) fn plot_average_reward(
    res: &BenchResult,
    caption: &str,
    path: &Path,
) -> Result<(), String> {
    lines(
        res,
        path,
        format!("Average reward over time: {caption}"),
        Axis::new("average reward (per slot)", Format::Number),
        |r| {
            running_average(&r.rewards)
                .iter()
                .enumerate()
                .map(|(i, v)| ((i + 1) as f64, *v))
                .collect()
        },
    )
}

/// Writes regret(t) / t of every allocator at the measured horizons.
pub(super) fn plot_regret(res: &BenchResult, caption: &str, path: &Path) -> Result<(), String> {
    lines(
        res,
        path,
        format!("Regret / t against the best fixed allocation in hindsight: {caption}"),
        Axis::new("regret(t) / t (reward per slot)", Format::Number),
        |r| {
            res.regret
                .iter()
                .map(|p| (p.t as f64, p.regret[r.name] / p.t as f64))
                .collect()
        },
    )
}
