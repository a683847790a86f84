//! The topology-free network end to end on hand-built topologies: one checkpoint runs on
//! networks of different sizes, collection labels only buckets that brought queries, and a
//! round of training writes a checkpoint whose choice is one the selection scored.

use super::*;
use crate::agent::save;
use continuum_core::fixtures;
use continuum_infer::agent::Agent;
use continuum_sim::SimConfig;
use std::path::Path;
use std::sync::Arc;

/// The tiny topology with two more antennas: other sizes, other worker counts.
const WIDER: &str = r#"
name: wider
clusters:
  - {id: cloud, layer: cloud, capacity: {gpu: 2}, deploy: {fill: [big-b4]}}
  - {id: co, layer: central-office, parent: cloud, link: {mean_ms: 20, jitter_ms: 5}, capacity: {cpu: 2}, deploy: {replicas: {small-b1: 2}}}
  - {id: a0, layer: access, parent: co, link: {mean_ms: 1}, capacity: {cpu: 1}, deploy: {fill: [small-b1]}}
  - {id: a1, layer: access, parent: co, link: {mean_ms: 2}}
  - {id: a2, layer: access, parent: co, link: {mean_ms: 3}, capacity: {cpu: 1}, deploy: {fill: [small-b1]}}
  - {id: a3, layer: access, parent: co, link: {mean_ms: 1}}
"#;

fn config() -> DqnConfig {
    DqnConfig {
        state: StateKind::Situation,
        classes: continuum_infer::agent::ClassMode::Demand,
        history: 1,
        conv_kernel: 1,
        conv_channels: 8,
        hidden: 8,
        actions: vec!["least-impedance".into(), "closest".into()],
        horizon_s: 40.0,
        warmup_windows: 2,
        cf_horizon_windows: 2,
        cf_persist_windows: 1,
        lambda_range: [30.0, 30.0],
        ..DqnConfig::default()
    }
}

#[test]
fn one_checkpoint_runs_on_topologies_of_any_size() {
    let cfg = config();
    assert!(cfg.validate().is_ok());
    let meta = meta_for(&cfg, "test".into());
    let (vars, _) = crate::agent::build(meta.shape, 3).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("u.dqn");
    save(&path, &vars, &meta).unwrap();
    let ck = Checkpoint::load(&path).unwrap();
    assert_eq!(ck.meta, meta);
    let wl = fixtures::workload(30.0, "periodic", 100.0, 0.0);
    for topo in [fixtures::TOPOLOGY, WIDER] {
        let sc = Arc::new(fixtures::scenario(topo, &wl));
        let names = sc.profiles.variant_names();
        let mut agent = Agent::new(&ck, &path, &sc.topology, &sc.fleet, &names).unwrap();
        let n = sc.topology.schedulers.len();
        let sim_cfg = SimConfig {
            duration_s: 30.0,
            window_s: cfg.window_s,
            seed: 1,
            ..SimConfig::default()
        };
        let (sim, shares) = crate::meta::run_agent(
            sc.clone(),
            sim_cfg,
            &mut agent,
            cfg.window_s,
            cfg.buckets.clone(),
        )
        .unwrap();
        assert!(sim.metrics().sum(|_, _, _| true).offered > 0);
        assert_eq!(shares.classes.len(), 12);
        let d = agent.decide();
        assert_eq!((d.len(), d[0].len()), (n, 12));
        assert!(d.iter().flatten().all(|a| *a < 2));
    }
    // A slots checkpoint still refuses another topology (the fingerprint check stays).
    assert_eq!(meta.fingerprint, ANY_TOPOLOGY);
}

#[test]
fn collection_labels_buckets_that_brought_queries_and_repeats() {
    let cfg = config();
    let sc = fixtures::scenario(
        fixtures::TOPOLOGY,
        &fixtures::workload(30.0, "periodic", 100.0, 0.0),
    );
    let spec = EpisodeSpec::new(Lambda::Constant(30.0), 5);
    let b = Behaviour {
        checkpoint: None,
        default: 0,
        explore: 0.3,
    };
    let a = collect::episode(&sc, &cfg, &spec, &b).unwrap();
    assert!(!a.samples.is_empty());
    let features = SituationEncoder::features_for(&cfg);
    for s in &a.samples {
        assert_eq!((s.state.len(), s.values.len()), (features, 2));
        // Values are centred over the actions.
        assert!((s.values[0] + s.values[1]).abs() < 1e-3, "{:?}", s.values);
        // Deadline 100 ms, rate 10 qps: bucket 0 of the default edges is the one labelled.
        assert_eq!(s.state[STATE_ONE_HOT], 1.0);
    }
    assert!(a.queries > 0.0);
    let again = collect::episode(&sc, &cfg, &spec, &b).unwrap();
    assert_eq!(a.samples, again.samples);
}

/// Where the bucket one-hot starts in a state (the static and dynamic features come first).
const STATE_ONE_HOT: usize = 17;

#[test]
fn a_small_training_run_selects_a_scored_candidate() {
    let cfg = config();
    let profiles = crate::universal::tests::repo_profiles();
    let Some(profiles) = profiles else { return };
    let s = UniversalSettings {
        networks: 1,
        rounds: 1,
        epochs: 2,
        validation_networks: 1,
        validation_lambdas: vec![30.0],
        margins: vec![0.0],
        antennas: [4, 4],
        workloads: vec![repo().join("workloads/default.yaml")],
        ..UniversalSettings::default()
    };
    let u = train(&profiles, &cfg, &s, 1, &|_| {}).unwrap();
    assert_eq!(u.log.len(), 1);
    assert_eq!(u.selected.scores.len(), 3);
    assert!(
        u.selected
            .scores
            .iter()
            .any(|(c, _)| *c == u.selected.chosen)
    );
    assert_eq!(u.checkpoint.meta.margin, u.selected.chosen.margin);
}

/// The repository's root (two levels above this crate).
fn repo() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The repository's profiles (the generator names their variants).
fn repo_profiles() -> Option<Profiles> {
    Profiles::load(&repo().join("profiles/object-detection.yaml")).ok()
}
