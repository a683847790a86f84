//! Training outputs: the episode log as CSV and the training curve as SVG.

use super::EpisodeLog;
use plotters::prelude::*;
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

/// Plots each episode's success ratio and mean reward, with a moving average, against the
/// episode number.
pub fn plot_training_curve(logs: &[EpisodeLog], title: &str, path: &Path) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("cannot draw plot: {e}");
    let root = SVGBackend::new(path, (1000, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let n = logs.len().max(2) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("Training: {title}"), ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..n, 0.0..1.0)
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc("episode")
        .y_desc("ratio")
        .draw()
        .map_err(|e| err(&e))?;
    type Series = (&'static str, RGBColor, fn(&EpisodeLog) -> f64);
    let series: [Series; 3] = [
        ("episode success ratio", BLUE, |l| l.success_ratio),
        ("mean reward", GREEN, |l| l.mean_reward),
        ("epsilon", RED, |l| l.epsilon),
    ];
    for (name, color, f) in series {
        chart
            .draw_series(LineSeries::new(
                logs.iter().map(|l| (l.episode as f64, f(l))),
                color.mix(0.5).stroke_width(1),
            ))
            .map_err(|e| err(&e))?
            .label(name)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    let k = 10usize;
    let avg: Vec<(f64, f64)> = (0..logs.len())
        .map(|i| {
            let lo = i.saturating_sub(k - 1);
            let w = &logs[lo..=i];
            (
                i as f64,
                w.iter().map(|l| l.success_ratio).sum::<f64>() / w.len() as f64,
            )
        })
        .collect();
    chart
        .draw_series(LineSeries::new(avg, BLUE.stroke_width(3)))
        .map_err(|e| err(&e))?
        .label("success ratio, moving average of 10")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.stroke_width(3)));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}
