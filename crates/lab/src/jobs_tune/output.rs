//! What `jobs train` and `jobs evaluate` write: the learning curve (CSV and SVG) and Ape-X's
//! rounds; the evaluation as JSON and as text tables.

use anyhow::{Context, Result};
use continuum_learn::jobtuner::{CurvePoint, Evaluation, Trained};
use continuum_plot::{Axis, Emphasis, Figure, Format, Panel, Series};
use continuum_term::text_table::{new_table, render};
use serde::Serialize;
use std::fmt::Write;
use std::path::Path;

/// An evaluation with what it ran on.
#[derive(Serialize)]
pub(super) struct Evaluated<'a> {
    pub(super) topology: &'a str,
    pub(super) workload: String,
    pub(super) checkpoint: String,
    pub(super) evaluation: &'a Evaluation,
}

/// `curve.csv`, `learning_curve.svg` and `rounds.json` in `dir`.
pub(super) fn write_training(dir: &Path, t: &Trained, topology: &str) -> Result<()> {
    let mut csv =
        String::from("episode,epsilon,mean_reward,mean_jtl_s,completed,mean_loss,wall_s\n");
    for c in &t.curve {
        let _ = writeln!(
            csv,
            "{},{:.4},{:.6},{:.3},{:.6},{:.6},{:.2}",
            c.episode, c.epsilon, c.mean_reward, c.mean_jtl_s, c.completed, c.mean_loss, c.wall_s
        );
    }
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).with_context(|| format!("cannot write {}", p.display()))
    };
    write("curve.csv", &csv)?;
    write("rounds.json", &serde_json::to_string_pretty(&t.rounds)?)?;
    plot_curve(&t.curve, topology, &dir.join("learning_curve.svg")).map_err(anyhow::Error::msg)
}

/// Each episode's mean JTL and mean reward, with their moving averages over 8 episodes (one
/// round of the paper's 8 actors), against the episode number.
fn plot_curve(curve: &[CurvePoint], topology: &str, path: &Path) -> Result<(), String> {
    let series = |f: fn(&CurvePoint) -> f64, what: &str| {
        let points: Vec<(f64, f64)> = curve.iter().map(|c| (c.episode as f64, f(c))).collect();
        let k = 8usize;
        let avg: Vec<(f64, f64)> = (0..points.len())
            .map(|i| {
                let w = &points[i.saturating_sub(k - 1)..=i];
                (
                    points[i].0,
                    w.iter().map(|p| p.1).sum::<f64>() / w.len() as f64,
                )
            })
            .collect();
        vec![
            Series::new("moving average of 8 episodes", avg, Emphasis::Bold),
            Series::new(what, points, Emphasis::Faint),
        ]
    };
    continuum_plot::line_chart(
        path,
        &Figure {
            title: format!("EdgeTuner on batch jobs, training: {topology}"),
            x: Axis::new("episode", Format::Number),
            panels: vec![
                Panel {
                    y: Axis::new("mean JTL (s)", Format::Number),
                    series: series(|c| c.mean_jtl_s, "episode mean JTL"),
                },
                Panel {
                    y: Axis::new("mean reward per time-step", Format::Number),
                    series: series(|c| c.mean_reward, "episode mean reward"),
                },
            ],
        },
    )
}

fn jtl(mean: f64, sd: f64) -> String {
    format!("{mean:.1} ± {sd:.1}")
}

/// The evaluation as text: per scenario the tuner and every fixed configuration, then the
/// summary lines.
pub(super) fn text_table(ev: &Evaluation, topology: &str) -> String {
    let mut s = format!(
        "EdgeTuner on batch jobs: {topology}, {} held-out seeds ({}), {} s of arrivals each; \
         mean JTL ± sd over seeds\n",
        ev.seeds.len(),
        ev.seeds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        ev.duration_s
    );
    for sc in &ev.scenarios {
        let _ = writeln!(s, "\nscenario {}:", sc.mitigation);
        let mut t = new_table(&[
            "configuration",
            "JTL mean s",
            "p99 s",
            "makespan s",
            "tuner vs it",
        ]);
        t.add_row(vec![
            sc.tuned.config.clone(),
            jtl(sc.tuned.mean_s, sc.tuned.sd_s),
            format!("{:.1}", sc.tuned.p99_s),
            format!("{:.0}", sc.tuned.makespan_s),
            String::new(),
        ]);
        for f in &sc.fixed {
            let change = 100.0 * (sc.tuned.mean_s - f.mean_s) / f.mean_s.max(1e-9);
            t.add_row(vec![
                f.config.clone(),
                jtl(f.mean_s, f.sd_s),
                format!("{:.1}", f.p99_s),
                format!("{:.0}", f.makespan_s),
                format!("{change:+.1} %"),
            ]);
        }
        s += &render(&mut t, 2, &[0]);
        let chosen: Vec<String> = sc
            .tuned
            .chosen
            .iter()
            .take(4)
            .map(|(n, f)| format!("{n} {:.0} %", 100.0 * f))
            .collect();
        let _ = writeln!(
            s,
            "  tuner below {} of {} fixed; paper's form (mean change against each) {:+.1} %; \
             against the best ({}) {:+.1} %; it chose {}",
            sc.beaten,
            sc.fixed.len(),
            sc.mean_change_pct,
            sc.best,
            sc.vs_best_pct,
            chosen.join(", ")
        );
    }
    let _ = writeln!(
        s,
        "\nheadline, the paper's form (mean change against every fixed configuration of every \
         scenario; the paper: -21.66 %): {:+.1} %",
        ev.headline_pct
    );
    let _ = writeln!(
        s,
        "tuner choosing any mitigation too: JTL {} s, against the best fixed configuration \
         ({}) {:+.1} %",
        jtl(ev.free.mean_s, ev.free.sd_s),
        ev.best_fixed,
        ev.free_vs_best_pct
    );
    s
}
