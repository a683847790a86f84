//! The tuner end to end on a small cluster: a trained checkpoint reads back, training is the
//! same whatever the thread count, a tuner with one action is that configuration fixed, and
//! the evaluation's figures follow from its rows.

use super::*;
use continuum_core::config::Source;
use continuum_jobs::{Node, Res};

const WORKLOAD: &str = r#"
schema: 1
arrivals: {per_min: 6}
kinds:
  - {name: dag, share: 1, tasks: {uniform: [3, 12]}, dag: {stages: {uniform: [1, 3]}}, cpu_request: {choice: [1, 2]}, mem_request_gb: 2, duration_s: {exponential: {mean: 40}}}
"#;

fn problem() -> (Nodes, JobsWorkload) {
    let nodes = Nodes::new(
        (0..4)
            .map(|i| Node {
                cluster: None,
                capacity: Res::new(8.0, 0.0, 32.0),
                speed: if i < 2 { 1.0 } else { 0.5 },
            })
            .collect(),
    )
    .unwrap();
    let w = JobsWorkload::from_source(&Source::inline("w.yaml", WORKLOAD)).unwrap();
    (nodes, w)
}

fn small() -> TunerSettings {
    TunerSettings {
        episodes: 4,
        actors: 2,
        episode_s: 200.0,
        drain_s: 300.0,
        learning_starts: 50,
        hidden: 16,
        conv_channels: 8,
        quantiles: 8,
        gradient_steps_per_window: 0.5,
        ..TunerSettings::default()
    }
}

fn actions(algorithms: &[&str]) -> ActionSet {
    ActionSet::new(
        algorithms,
        &[Mitigation::None, Mitigation::Restart { ratio: 0.8 }],
    )
    .unwrap()
}

fn trained(threads: usize) -> Trained {
    let (nodes, w) = problem();
    let set = actions(&["LRP", "MRP"]);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| train_tuner(&nodes, &w, &set, &small(), 7, &mut |_| {}))
        .unwrap()
}

#[test]
fn training_is_the_same_whatever_the_thread_count() {
    let (a, b) = (trained(1), trained(2));
    let w = |t: &Trained| crate::agent::weights_of(&t.vars).unwrap();
    assert_eq!(w(&a), w(&b));
    let timeless = |t: &Trained| -> Vec<CurvePoint> {
        t.curve
            .iter()
            .map(|c| CurvePoint {
                wall_s: 0.0,
                ..c.clone()
            })
            .collect()
    };
    assert_eq!(timeless(&a), timeless(&b));
    assert_eq!(a.curve.len(), 4);
    // Learning happened: the learner took gradient steps after its first round.
    assert!(a.rounds.iter().map(|r| r.gradient_steps).sum::<usize>() > 0);
}

fn meta(set: &ActionSet, nodes: usize) -> TunerMeta {
    TunerMeta {
        format: FORMAT.into(),
        scheduler: "kubernetes".into(),
        algorithms: set
            .placements()
            .iter()
            .map(|p| p.name().to_string())
            .collect(),
        mitigations: set.mitigations().iter().map(Mitigation::name).collect(),
        nodes,
        workload: None,
        kind: None,
        rate_scale: 1.0,
        seed: 7,
        settings: small(),
    }
}

#[test]
fn a_checkpoint_reads_back_and_a_one_algorithm_tuner_is_that_algorithm_fixed() {
    let (nodes, w) = problem();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("checkpoint.edgetuner");
    // One algorithm, two mitigations: in each scenario the tuner has one action left.
    let set = actions(&["MRP"]);
    let t = train_tuner(&nodes, &w, &set, &small(), 3, &mut |_| {}).unwrap();
    save(&path, &t, &meta(&set, nodes.len())).unwrap();
    let tuner = Tuner::load(dir.path()).unwrap();
    assert_eq!(tuner.actions.len(), 2);
    let ev = tuner.evaluate(&nodes, &w, &[1, 2], 600.0).unwrap();
    assert_eq!(ev.scenarios.len(), 2);
    for sc in &ev.scenarios {
        assert_eq!(sc.fixed.len(), 1);
        assert_eq!(sc.tuned.jtl_s, sc.fixed[0].jtl_s, "{}", sc.mitigation);
        assert_eq!(sc.mean_change_pct, 0.0);
        assert_eq!(sc.beaten, 0);
        assert_eq!(sc.tuned.chosen.len(), 1);
    }
    assert_eq!(ev.headline_pct, 0.0);
    // Another cluster size is refused with both sizes.
    let (more, _) = (
        Nodes::new(vec![
            Node {
                cluster: None,
                capacity: Res::new(8.0, 0.0, 32.0),
                speed: 1.0,
            };
            5
        ])
        .unwrap(),
        (),
    );
    let e = tuner
        .evaluate(&more, &w, &[1], 600.0)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("4 nodes") && e.contains("into 5"), "{e}");
}

#[test]
fn the_evaluation_figures_follow_from_its_rows() {
    let (nodes, w) = problem();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("checkpoint.edgetuner");
    let set = actions(&["LRP", "MRP", "EP"]);
    let t = train_tuner(&nodes, &w, &set, &small(), 5, &mut |_| {}).unwrap();
    save(&path, &t, &meta(&set, nodes.len())).unwrap();
    let ev = Tuner::load(&path)
        .unwrap()
        .evaluate(&nodes, &w, &[1, 2, 3], 600.0)
        .unwrap();
    let mut all = Vec::new();
    for sc in &ev.scenarios {
        let per: Vec<f64> = sc
            .fixed
            .iter()
            .map(|f| 100.0 * (sc.tuned.mean_s - f.mean_s) / f.mean_s)
            .collect();
        let mean = per.iter().sum::<f64>() / per.len() as f64;
        assert!((sc.mean_change_pct - mean).abs() < 1e-9);
        let best = sc
            .fixed
            .iter()
            .map(|f| f.mean_s)
            .fold(f64::INFINITY, f64::min);
        assert!((sc.vs_best_pct - 100.0 * (sc.tuned.mean_s - best) / best).abs() < 1e-9);
        assert_eq!(sc.beaten, per.iter().filter(|&&c| c < 0.0).count());
        let shares: f64 = sc.tuned.chosen.iter().map(|c| c.1).sum();
        assert!((shares - 1.0).abs() < 1e-9);
        assert!(
            sc.tuned
                .chosen
                .iter()
                .all(|c| c.0.ends_with(&sc.mitigation))
        );
        all.extend(per);
    }
    assert!((ev.headline_pct - all.iter().sum::<f64>() / all.len() as f64).abs() < 1e-9);
    assert_eq!(ev.free.jtl_s.len(), 3);
}
