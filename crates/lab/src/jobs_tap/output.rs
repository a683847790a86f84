//! What `continuum jobs ml` prints and writes: the comparison table (per case and method the
//! total completion time, mean JCT and makespan as mean ± sd over the seeds, and the change of
//! the total against the case's best rule) and the learning curve as CSV.

use continuum_jobs::ml::RULES;
use continuum_learn::jobtap::JobTapLog;
use continuum_learn::jobtap::evaluate::{Row, best_rules, change_pct, mean_sd};
use continuum_plot::{Axis, Emphasis, Figure, Format, Panel, Series};
use continuum_term::text_table::{new_table, render};
use std::fmt::Write;
use std::path::Path;

fn pm(v: &[f64], digits: usize) -> String {
    let (m, s) = mean_sd(v);
    format!("{m:.digits$} ± {s:.digits$}")
}

/// The mean first allocation of each type over the seeds: `c, g | c, g`.
fn first_allocs(r: &Row) -> String {
    let n = r.reports.len().max(1) as f64;
    let mean = |f: fn(&continuum_jobs::ml::MlReport) -> [f64; 2]| {
        let s = r
            .reports
            .iter()
            .map(f)
            .fold([0.0, 0.0], |a, b| [a[0] + b[0], a[1] + b[1]]);
        format!("{:.1}, {:.1}", s[0] / n, s[1] / n)
    };
    format!(
        "{} | {}",
        mean(|x| x.first_alloc_insensitive),
        mean(|x| x.first_alloc_sensitive)
    )
}

/// The comparison table.
pub(crate) fn text_table(rows: &[Row]) -> String {
    let best = best_rules(rows, &RULES);
    let mut t = new_table(&[
        "case",
        "method",
        "total completion (timesteps)",
        "mean JCT",
        "makespan",
        "unfinished",
        "first cores, GPUs (insens. | sens.)",
        "vs best rule, %",
    ]);
    for r in rows {
        let base = best.iter().find(|b| b.case == r.case);
        let jct: Vec<f64> = r.reports.iter().map(|x| x.mean_jct).collect();
        let mk: Vec<f64> = r.reports.iter().map(|x| x.makespan).collect();
        let unfinished: usize = r.reports.iter().map(|x| x.unfinished).sum();
        let vs = match base {
            Some(b) if b.method == r.method => format!("({} is best)", b.method),
            Some(b) => format!("{} vs {}", pm(&change_pct(r, b), 1), b.method),
            None => "-".into(),
        };
        t.add_row(vec![
            r.case.clone(),
            r.method.clone(),
            pm(&r.totals(), 0),
            pm(&jct, 2),
            pm(&mk, 1),
            unfinished.to_string(),
            first_allocs(r),
            vs,
        ]);
    }
    let seeds = rows.first().map_or(0, |r| r.seeds.len());
    format!(
        "{}mean ± sd over {seeds} seeds; a change below 0 is a shorter total completion time\n",
        render(&mut t, 0, &[0, 1])
    )
}

/// The learning curve as CSV.
pub(crate) fn curve_csv(logs: &[JobTapLog]) -> String {
    let mut s =
        String::from("update,mean_jct,validation_jct,decisions,policy_loss,value_loss,entropy\n");
    for l in logs {
        let _ = writeln!(
            s,
            "{},{:.4},{:.4},{},{:.6},{:.6},{:.6}",
            l.update,
            l.mean_jct,
            l.validation_jct,
            l.decisions,
            l.policy_loss,
            l.value_loss,
            l.entropy
        );
    }
    s
}

/// The learning curve as a figure: per update, the greedy agents' validation JCT (the
/// checkpoint keeps the lowest) and the training environments' mean JCT (sampled agents, a new
/// draw of cluster count and rate each).
pub(crate) fn plot_curve(logs: &[JobTapLog], variant: &str, path: &Path) -> Result<(), String> {
    let pts = |f: fn(&JobTapLog) -> f64| -> Vec<(f64, f64)> {
        logs.iter()
            .map(|l| ((l.update + 1) as f64, f(l)))
            .filter(|p| p.1.is_finite())
            .collect()
    };
    continuum_plot::line_chart(
        path,
        &Figure {
            title: format!("{variant} on ML tasks, MAPPO training"),
            x: Axis::new("update", Format::Number),
            panels: vec![
                Panel {
                    y: Axis::new("validation mean JCT (timesteps)", Format::Number),
                    series: vec![Series::new(
                        "greedy agents, 3 clusters λ 2 and 6 clusters λ 4",
                        pts(|l| l.validation_jct),
                        Emphasis::Bold,
                    )],
                },
                Panel {
                    y: Axis::new("training mean JCT (timesteps)", Format::Number),
                    series: vec![Series::new(
                        "sampled agents, drawn settings",
                        pts(|l| l.mean_jct),
                        Emphasis::Faint,
                    )],
                },
            ],
        },
    )
}
