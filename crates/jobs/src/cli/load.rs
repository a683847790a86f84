//! `continuum jobs load`: each configuration's job latency as the arrival rates grow (the
//! workload's rates times each factor, the jobs' shapes unchanged), a row per configuration and
//! factor, and the figure of mean JTL against the factor.

use super::{Format, Row, RunArgs, load_scenario, mitigations, out_file, placements, run_all};
use super::{header, workload_label};
use crate::{Mitigation, Placement};
use anyhow::{Context, Result, anyhow};
use clap::Args;
use continuum_term::text_table::{new_table, render};
use serde::Serialize;

/// `continuum jobs load`'s options.
#[derive(Debug, Args)]
pub struct LoadArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Comma-separated placement configurations, or `all`.
    #[arg(long, default_value = "LRP,MRP,BRA,EP")]
    placements: String,
    /// Comma-separated mitigations, or `grid`.
    #[arg(long, default_value = "none")]
    mitigations: String,
    /// Comma-separated factors on the arrival rates (on top of `--rate-scale`), each > 0.
    #[arg(long, default_value = "0.5,1,1.5,2,2.5")]
    factors: String,
}

/// One factor's rows.
#[derive(Debug, Serialize)]
struct Point {
    factor: f64,
    rows: Vec<Row>,
}

/// What `results.json` and `--format json` hold.
#[derive(Debug, Serialize)]
struct LoadResults<'a> {
    topology: &'a str,
    workload: String,
    seed: u64,
    duration_s: f64,
    nodes: usize,
    points: Vec<Point>,
}

fn factors(list: &str) -> Result<Vec<f64>> {
    let v = list
        .split(',')
        .map(|x| {
            x.trim()
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite() && *f > 0.0)
        })
        .collect::<Option<Vec<f64>>>()
        .ok_or_else(|| anyhow!("--factors: expected comma-separated numbers > 0, got `{list}`"))?;
    if v.is_empty() {
        return Err(anyhow!("--factors: expected at least one factor"));
    }
    Ok(v)
}

/// Runs `continuum jobs load`.
pub(super) fn execute(a: &LoadArgs) -> Result<()> {
    let r = &a.run;
    continuum_core::config::check_threads(r.threads).map_err(anyhow::Error::msg)?;
    let fs = factors(&a.factors)?;
    let ps = placements(&a.placements)?;
    let ms = mitigations(&a.mitigations)?;
    let configs: Vec<(Placement, Mitigation)> = ps
        .iter()
        .flat_map(|p| ms.iter().map(move |m| (p.clone(), *m)))
        .collect();
    let out = out_file(r, "results.json")?;
    let (topology, base, nodes) = load_scenario(
        &r.topology,
        &r.profiles,
        &r.workload,
        r.kind.as_deref(),
        r.rate_scale,
    )?;
    let mut points = Vec::new();
    for &f in &fs {
        let reports = run_all(r, &nodes, &base.scaled(f), &configs)?;
        points.push(Point {
            factor: f,
            rows: reports.iter().map(Row::from).collect(),
        });
    }
    let results = LoadResults {
        topology: &topology.name,
        workload: workload_label(&r.workload, r.kind.as_deref(), r.rate_scale),
        seed: r.seed,
        duration_s: r.duration,
        nodes: nodes.len(),
        points,
    };
    let json = continuum_core::config::versioned_json(&results)?;
    match r.format {
        Format::Json => println!("{json}"),
        Format::Table => print!("{}", text_table(&results)),
    }
    if let Some(path) = out {
        std::fs::write(&path, &json).with_context(|| format!("cannot write {}", path.display()))?;
        let svg = path.with_file_name("jtl_vs_load.svg");
        plot(&results, &svg)?;
        eprintln!("wrote {} and {}", path.display(), svg.display());
    }
    Ok(())
}

fn text_table(r: &LoadResults) -> String {
    let mut s = header(r.topology, r.nodes, &r.workload, r.duration_s, r.seed);
    let mut t = new_table(&[
        "placement",
        "mitigation",
        "rates ×",
        "jobs",
        "completed",
        "JTL mean s",
        "p99 s",
    ]);
    for p in &r.points {
        for row in &p.rows {
            t.add_row(vec![
                row.placement.clone(),
                row.mitigation.clone(),
                format!("{}", p.factor),
                row.jobs_arrived.to_string(),
                row.jobs_completed.to_string(),
                format!("{:.1}", row.jtl.mean_s),
                format!("{:.1}", row.jtl.p99_s),
            ]);
        }
    }
    s += &render(&mut t, 0, &[0, 1]);
    s
}

/// Mean JTL against the factor, a series per configuration; the lowest at the largest factor
/// in bold.
fn plot(r: &LoadResults, path: &std::path::Path) -> Result<()> {
    use continuum_plot::{Axis, Emphasis, Figure, Format as Ticks, Panel, Series};
    let Some(last) = r.points.last() else {
        return Ok(());
    };
    let best = last
        .rows
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.jtl.mean_s.total_cmp(&b.1.jtl.mean_s))
        .map(|(i, _)| i);
    let series = (0..last.rows.len())
        .map(|i| {
            let pts = r
                .points
                .iter()
                .map(|p| (p.factor, p.rows[i].jtl.mean_s))
                .collect();
            let row = &last.rows[i];
            let emphasis = if Some(i) == best {
                Emphasis::Bold
            } else {
                Emphasis::Normal
            };
            Series::new(
                format!("{} {}", row.placement, row.mitigation),
                pts,
                emphasis,
            )
        })
        .collect();
    let fig = Figure {
        title: format!("Mean job latency against load, {}", r.topology),
        x: Axis::new("arrival rates × (of the workload file)", Ticks::Number),
        panels: vec![Panel {
            y: Axis::new("mean JTL of completed jobs (s)", Ticks::Number),
            series,
        }],
    };
    continuum_plot::line_chart(path, &fig).map_err(anyhow::Error::msg)
}
