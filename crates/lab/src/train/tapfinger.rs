//! `continuum train` with a TapFinger config (`method: tapfinger`): MAPPO episodes of pulled
//! simulations, then the checkpoint, the episode log and the learning curve.

use super::TrainArgs;
use anyhow::{Context, Result, bail};
use continuum_infer::tapfinger::TapConfig;
use continuum_learn::tapfinger::train::{TapEvent, tap_training_csv, train};
use continuum_plot::{Axis, Emphasis, Figure, Format, Panel, Series};
use continuum_sim::Scenario;

/// Runs `continuum train` for TapFinger's agents.
pub(super) fn execute(args: &TrainArgs) -> Result<()> {
    let mut cfg = TapConfig::load(&args.config)?;
    if let Some(e) = args.episodes {
        if e == 0 {
            bail!("--episodes: expected at least 1");
        }
        cfg.episodes = e;
    }
    if args.capacity_scale.is_some() {
        bail!("--capacity-scale: TapFinger's training has no capacity setting");
    }
    let sc = Scenario::load(&args.topology, &args.profiles, &args.workload)?;
    if let Some(b) = args.budget {
        super::check_budget(b)?;
        for change in fit_budget(&sc, &mut cfg, b) {
            eprintln!("--budget {b:.2e}: {change}");
        }
    }
    let init = match &args.init {
        Some(p) => Some(
            continuum_infer::tapfinger::TapCheckpoint::load(p)
                .with_context(|| format!("--init {}: not a TapFinger checkpoint", p.display()))?,
        ),
        None => None,
    };
    let pool = crate::thread_pool(args.threads)?;
    let progress = continuum_term::Progress::new(args.progress);
    let on_event = |e: TapEvent| match e {
        TapEvent::Episode(l, total) => progress.step(
            "episodes",
            &format!(
                "success {:.3}  refused {:.3}  reward {:+.3}  λ {:.0}  decisions {}",
                l.success_ratio, l.refused, l.mean_reward, l.lambda, l.decisions
            ),
            l.episode + 1,
            total,
        ),
    };
    let logs = pool.install(|| train(&sc, &cfg, args.seed, init.as_ref(), &args.out, &on_event))?;
    progress.finish();
    let stem = args.out.with_extension("");
    let name = stem
        .file_name()
        .and_then(|s| s.to_str())
        .unwrap_or("tapfinger")
        .to_string();
    let csv = stem.with_file_name(format!("{name}.training.csv"));
    let svg = stem.with_file_name(format!("{name}.training_curve.svg"));
    std::fs::write(&csv, tap_training_csv(&logs))
        .with_context(|| format!("cannot write {}", csv.display()))?;
    let per = |f: fn(&continuum_learn::tapfinger::train::TapEpisodeLog) -> f64| -> Vec<(f64, f64)> {
        logs.iter().map(|l| (l.episode as f64, f(l))).collect()
    };
    let fig = Figure {
        title: format!("TapFinger training on {}", sc.topology.name),
        x: Axis::new("episode", Format::Number),
        panels: vec![
            Panel {
                y: Axis::new("success ratio (%)", Format::Percent),
                series: vec![Series::new(
                    "episode success ratio",
                    per(|l| l.success_ratio),
                    Emphasis::Bold,
                )],
            },
            Panel {
                y: Axis::new("mean reward per decision", Format::Number),
                series: vec![Series::new(
                    "mean reward",
                    per(|l| l.mean_reward),
                    Emphasis::Normal,
                )],
            },
        ],
    };
    continuum_plot::line_chart(&svg, &fig).map_err(anyhow::Error::msg)?;
    let wall = logs.last().map_or(0.0, |l| l.wall_s);
    eprintln!(
        "trained {} episodes in {wall:.1} s; wrote {}, {}, {}",
        logs.len(),
        args.out.display(),
        csv.display(),
        svg.display()
    );
    Ok(())
}

/// Fits TapFinger's training into `budget` simulated queries: as many episodes as it buys (at
/// most the config's), each as long as configured, or one shorter episode (never below 30 s)
/// when one does not fit. Returns one line per change.
fn fit_budget(sc: &Scenario, cfg: &mut TapConfig, budget: f64) -> Vec<String> {
    let [lo, hi] = cfg.lambda_range;
    let qps = sc.workload.expected_qps((lo + hi) / 2.0) * sc.topology.schedulers.len() as f64;
    let per_episode = (qps * cfg.episode_s).max(1.0);
    let mut changes = Vec::new();
    let episodes = ((budget / per_episode).floor() as usize).clamp(1, cfg.episodes.max(1));
    if episodes != cfg.episodes {
        changes.push(format!("episodes {} → {episodes}", cfg.episodes));
        cfg.episodes = episodes;
    }
    if per_episode > budget {
        let s = (cfg.episode_s * budget / per_episode)
            .max(30.0)
            .min(cfg.episode_s);
        if s < cfg.episode_s {
            changes.push(format!("episode length {} → {s:.0} s", cfg.episode_s));
            cfg.episode_s = s.round();
        }
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;
    use continuum_core::fixtures;

    /// The tiny scenario at λ 60 (two schedulers, 10 qps streams of 30 s: 200 expected qps) and
    /// a config of 10 episodes of 100 s at λ 60: 20 000 simulated queries an episode.
    fn setting() -> (Scenario, TapConfig) {
        let sc = fixtures::scenario(
            fixtures::TOPOLOGY,
            &fixtures::workload(60.0, "periodic", 1000.0, 0.0),
        );
        let cfg = TapConfig {
            episodes: 10,
            episode_s: 100.0,
            lambda_range: [60.0, 60.0],
            ..TapConfig::default()
        };
        (sc, cfg)
    }

    fn per_episode(sc: &Scenario, cfg: &TapConfig) -> f64 {
        sc.workload.expected_qps(60.0) * sc.topology.schedulers.len() as f64 * cfg.episode_s
    }

    #[test]
    fn a_budget_buys_whole_episodes_and_leaves_a_larger_one_alone() {
        let (sc, base) = setting();
        let e = per_episode(&sc, &base);
        // Enough for all ten, or more: unchanged.
        for budget in [10.0 * e, 100.0 * e] {
            let mut cfg = base.clone();
            assert!(fit_budget(&sc, &mut cfg, budget).is_empty());
            assert_eq!((cfg.episodes, cfg.episode_s), (10, 100.0));
        }
        // 3.5 episodes' worth: three whole episodes, each as long as configured.
        let mut cfg = base.clone();
        assert_eq!(fit_budget(&sc, &mut cfg, 3.5 * e), ["episodes 10 → 3"]);
        assert_eq!((cfg.episodes, cfg.episode_s), (3, 100.0));
    }

    #[test]
    fn less_than_an_episode_shortens_one_but_never_below_30_s() {
        let (sc, base) = setting();
        let e = per_episode(&sc, &base);
        let mut cfg = base.clone();
        assert_eq!(
            fit_budget(&sc, &mut cfg, 0.5 * e),
            ["episodes 10 → 1", "episode length 100 → 50 s"]
        );
        assert_eq!((cfg.episodes, cfg.episode_s), (1, 50.0));
        let mut cfg = base.clone();
        fit_budget(&sc, &mut cfg, 1.0);
        assert_eq!((cfg.episodes, cfg.episode_s), (1, 30.0));
    }
}
