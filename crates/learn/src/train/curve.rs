//! Training outputs: the episode log as CSV and the training curve as SVG.

use super::EpisodeLog;
use continuum_plot::{Axis, Emphasis, Figure, Format, Panel, Series};
use std::fmt::Write;
use std::path::Path;

/// The episode log as CSV.
pub fn training_csv(logs: &[EpisodeLog]) -> String {
    let mut s = String::from(
        "episode,lambda,seed,windows,end,mean_reward,success_ratio,epsilon,mean_loss,wall_s\n",
    );
    for l in logs {
        let _ = writeln!(
            s,
            "{},{:.3},{},{},{},{:.6},{:.6},{:.4},{:.6},{:.2}",
            l.episode,
            l.lambda,
            l.seed,
            l.windows,
            l.end,
            l.mean_reward,
            l.success_ratio,
            l.epsilon,
            l.mean_loss,
            l.wall_s
        );
    }
    s
}

/// Plots each episode's success ratio (with its moving average of 10, bold), mean reward and
/// ε against the episode number, in three panels over one episode axis.
pub fn plot_training_curve(logs: &[EpisodeLog], title: &str, path: &Path) -> Result<(), String> {
    let per = |f: fn(&EpisodeLog) -> f64| -> Vec<(f64, f64)> {
        logs.iter().map(|l| (l.episode as f64, f(l))).collect()
    };
    let k = 10usize;
    let avg: Vec<(f64, f64)> = (0..logs.len())
        .map(|i| {
            let w = &logs[i.saturating_sub(k - 1)..=i];
            (
                logs[i].episode as f64,
                w.iter().map(|l| l.success_ratio).sum::<f64>() / w.len() as f64,
            )
        })
        .collect();
    let panel = |desc: &str, format: Format, series: Vec<Series>| Panel {
        y: Axis::new(desc, format),
        series,
    };
    continuum_plot::line_chart(
        path,
        &Figure {
            title: format!("Training: {title}"),
            x: Axis::new("episode", Format::Number),
            panels: vec![
                panel(
                    "success ratio (%)",
                    Format::Percent,
                    vec![
                        Series::new("moving average of 10 episodes", avg, Emphasis::Bold),
                        Series::new(
                            "episode success ratio",
                            per(|l| l.success_ratio),
                            Emphasis::Faint,
                        ),
                    ],
                ),
                panel(
                    "mean reward (per action)",
                    Format::Number,
                    vec![Series::new(
                        "episode mean reward",
                        per(|l| l.mean_reward),
                        Emphasis::Normal,
                    )],
                ),
                panel(
                    "exploration ε",
                    Format::Number,
                    vec![Series::new(
                        "ε at episode end",
                        per(|l| l.epsilon),
                        Emphasis::Normal,
                    )],
                ),
            ],
        },
    )
}
