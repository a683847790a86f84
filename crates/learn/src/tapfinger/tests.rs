use super::batch::ObsBatch;
use super::checkpoint::{network, save};
use super::net::build;
use super::ppo::{PpoSettings, update};
use super::recorder::Recorder;
use crate::agent::weights_of;
use candle_nn::{AdamW, Optimizer, ParamsAdamW, VarMap};
use continuum_core::config::Source;
use continuum_core::feasibility::{Demand, Fleet};
use continuum_core::fixtures;
use continuum_core::load::LoadView;
use continuum_core::pull::{Pending, Resolution, Round, step};
use continuum_core::rng::{Purpose, stream_rng};
use continuum_core::topology::Topology;
use continuum_infer::tapfinger::features::TapFeatures;
use continuum_infer::tapfinger::{
    FastTapNet, Pick, TapCheckpoint, TapConfig, TapFinger, TapNetShape, observe,
};

/// `a` (an antenna with one small-b1, 100 qps) under `far` (eight small-b1, 20 ms away).
const TWO: &str = r#"
name: two
clusters:
  - {id: a, layer: access, parent: far, link: {mean_ms: 20}, capacity: {cpu: 1}, deploy: {fill: [small-b1]}}
  - {id: far, layer: cloud, capacity: {cpu: 8}, deploy: {fill: [small-b1]}}
"#;

fn two() -> (Topology, Fleet) {
    let p = fixtures::profiles();
    let t = Topology::from_source(&Source::inline("two.yaml", TWO), &p).unwrap();
    let f = Fleet::new(&t, &p);
    (t, f)
}

/// 60 qps of 10 KB: one fits on `a`. Latency bounds: on `a` 2·2 + 1 + 10 = 15 ms, on `far`
/// 2·(2 + 20) + 1 + 10 = 55 ms.
fn demand(max_delay_ms: f64) -> Demand {
    Demand {
        task: 0,
        rate_qps: 60.0,
        frame_kb: 10.0,
        tx_ms: 1.0,
        access_ms: 2.0,
        max_delay_ms,
        min_accuracy: 0.0,
        items: 1,
    }
}

/// A loose stream (200 ms, both clusters can serve it) and a tight one (30 ms, only `a` can),
/// both at scheduler 0.
fn loose_and_tight(t: &Topology) -> [Pending<'_>; 2] {
    let reach = &t.schedulers[0].reach;
    [200.0, 30.0].map(|max_delay_ms| Pending {
        demand: demand(max_delay_ms),
        reach,
        sched: 0,
        waited: 0,
    })
}

/// `run` on the first round of one loose stream (200 ms, both clusters can serve it) at
/// scheduler 0 of `two`, on an idle view.
fn loose_round<R>(t: &Topology, f: &Fleet, run: impl FnOnce(&Round) -> R) -> R {
    let pending = [Pending {
        demand: demand(200.0),
        reach: &t.schedulers[0].reach,
        sched: 0,
        waited: 0,
    }];
    let view = LoadView::idle(f.workers.len());
    let mut cands = vec![Vec::new()];
    continuum_core::feasibility::feasible(
        &pending[0].demand,
        pending[0].reach,
        f,
        &view,
        &mut cands[0],
    );
    let agents = continuum_core::pull::agents_of(&cands);
    run(&Round {
        pending: &pending,
        cands: &cands,
        agents: &agents,
        fleet: f,
        view: &view,
        round: 0,
    })
}

/// The plain-Rust network of the training variables `vars`.
fn fast(vars: &VarMap) -> FastTapNet {
    FastTapNet::read(shape(), &weights_of(vars).unwrap()).unwrap()
}

fn shape() -> TapNetShape {
    TapNetShape {
        hidden: 16,
        han: true,
        features: TapFeatures::Base,
    }
}

/// The right pick order is known by reasoning: a tight stream (30 ms, only `a` can serve it)
/// and a loose one (200 ms, both can) arrive together; `a` has room for one. If `a` takes the
/// loose one first (it wins conflicts: first claim, and `a` is cluster 0), the tight one is
/// refused. Trained on this case alone with the agents' own PPO, `a` learns to point at the
/// tight stream, and the greedy step binds both.
#[test]
fn the_agent_learns_to_take_the_stream_only_it_can_serve() {
    let (t, f) = two();
    let a = t.cluster_index("a").unwrap() as u32;
    assert_eq!(a, 0);
    let pending = loose_and_tight(&t);
    let (vars, net) = build(shape(), 3).unwrap();
    let mut opt = AdamW::new(
        vars.all_vars(),
        ParamsAdamW {
            lr: 3e-3,
            weight_decay: 0.0,
            ..ParamsAdamW::default()
        },
    )
    .unwrap();
    let settings = PpoSettings {
        gamma: 0.0,
        gae_lambda: 0.0,
        clip: 0.2,
        epochs: 2,
        minibatch: 64,
        entropy: 0.0,
        value_coef: 0.5,
        max_grad_norm: 1.0,
    };
    let mut rng = stream_rng(5, Purpose::Other, 0, 0);
    let mut view = LoadView::idle(f.workers.len());
    let greedy_binds_both = |vars: &VarMap, view: &LoadView| {
        let mut g = TapFinger::new(fast(vars), Pick::Greedy, true, Resolution::FirstClaim, 2);
        let mut r = stream_rng(1, Purpose::Other, 1, 0);
        step(&pending, &f, view, &mut g, &mut r).0.len() == 2
    };
    assert!(
        !greedy_binds_both(&vars, &view),
        "the untrained network already gets it right: the test would prove nothing"
    );
    for it in 0..200 {
        // Some load on `far`, so that the states vary a little.
        view.workers[1].load_qps = f64::from(it % 7) * 20.0;
        let mut agents = Recorder::new(net.clone(), Pick::Sample, true, Resolution::FirstClaim, 2);
        let (bound, _) = step(&pending, &f, &view, &mut agents, &mut rng);
        let mut decisions = std::mem::take(&mut agents.record);
        let tight_bound = bound.iter().any(|(j, _)| *j == 1);
        for d in decisions.iter_mut() {
            if d.won {
                d.reward += 1.0;
            }
        }
        if !tight_bound && let Some(d) = decisions.iter_mut().rev().find(|d| d.cluster == a) {
            d.reward -= 2.0;
        }
        update(&net, &vars, &mut opt, &decisions, &settings, &mut rng).unwrap();
    }
    view.workers[1].load_qps = 0.0;
    assert!(greedy_binds_both(&vars, &view));
}

#[test]
fn a_checkpoint_round_trips_with_equal_outputs() {
    let (t, f) = two();
    let (vars, net) = build(shape(), 11).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.tapfinger");
    save(&path, &vars, shape(), "two", &TapConfig::default()).unwrap();
    let ck = TapCheckpoint::load(&path).unwrap();
    assert_eq!(ck.meta.shape, shape());
    assert_eq!(ck.meta.config, TapConfig::default());
    let (_v2, net2) = network(&ck, &path).unwrap();
    let plain = ck.network(&path).unwrap();
    let obs = loose_round(&t, &f, |round| observe(round, 2, true));
    let refs: Vec<_> = obs.iter().collect();
    let b = ObsBatch::new(&refs, shape().features).unwrap();
    let out1 = net.forward(&b).unwrap();
    let out2 = net2.forward(&b).unwrap();
    assert_eq!(
        plain.pointer(&obs[0]).pointer,
        fast(&vars).pointer(&obs[0]).pointer,
        "the plain network read from the file is the one written"
    );
    assert_eq!(
        out1.pointer.to_vec2::<f32>().unwrap(),
        out2.pointer.to_vec2::<f32>().unwrap()
    );
    assert_eq!(
        out1.value.to_vec1::<f32>().unwrap(),
        out2.value.to_vec1::<f32>().unwrap()
    );
}

#[test]
fn other_files_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.tapfinger");
    std::fs::write(&junk, b"not a checkpoint").unwrap();
    let e = TapCheckpoint::load(&junk).unwrap_err().to_string();
    assert!(e.contains("junk.tapfinger"), "{e}");
    // A DQN checkpoint is a safetensors file too, of another format.
    let dqn = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/full-edge.dqn");
    let e = TapCheckpoint::load(&dqn).unwrap_err().to_string();
    assert!(
        e.contains("continuum-tapfinger/1") && e.contains("incompatible"),
        "{e}"
    );
    // A network of another width than its header says.
    let (vars, _) = build(shape(), 1).unwrap();
    let path = dir.path().join("wide.tapfinger");
    let wider = TapNetShape {
        hidden: 24,
        han: true,
        features: TapFeatures::Base,
    };
    save(&path, &vars, wider, "two", &TapConfig::default()).unwrap();
    let ck = TapCheckpoint::load(&path).unwrap();
    let e = network(&ck, &path).err().expect("refused").to_string();
    assert!(e.contains("the network expects"), "{e}");
    let e = ck.network(&path).expect_err("refused").to_string();
    assert!(e.contains("the network expects"), "{e}");
}

/// With a confidence fallback no choice can reach (probability 1), every agent claims as
/// `prior-pull` does: the step binds exactly what `prior-pull` binds from the same draws. With
/// none, the untrained network's own choice is not the prior's.
#[test]
fn an_unsure_agent_claims_as_prior_pull() {
    let (t, f) = two();
    let pending = loose_and_tight(&t);
    let view = LoadView::idle(f.workers.len());
    let (vars, _) = build(shape(), 3).unwrap();
    let bound = |p: &mut dyn continuum_core::pull::Puller| {
        let mut r = stream_rng(9, Purpose::Other, 1, 0);
        step(&pending, &f, &view, p, &mut r).0
    };
    let prior = bound(&mut continuum_core::pull::PriorPull);
    let mut unsure = TapFinger::new(fast(&vars), Pick::Greedy, true, Resolution::Bayes, 2)
        .with_fallback(Some(1.0));
    assert_eq!(bound(&mut unsure), prior);
    let mut own = TapFinger::new(fast(&vars), Pick::Greedy, true, Resolution::Bayes, 2);
    let mut sure = TapFinger::new(fast(&vars), Pick::Greedy, true, Resolution::Bayes, 2)
        .with_fallback(Some(1e-9));
    let own_bound = bound(&mut own);
    assert_ne!(own_bound, prior, "the network's own choice is the prior's");
    assert_eq!(
        bound(&mut sure),
        own_bound,
        "a fallback never taken changes nothing"
    );
}

/// The rules' features say what `headroom` and `worker-headroom` score, known by reasoning on
/// `two`: a 60 qps stream fits once on `a`'s 100 qps worker and ⌊800 / 60⌋ = 13 times on
/// `far`'s worker (its eight cores serve as one 800 qps worker), so `far` is the headroom
/// rule's cluster and `a` is not; each cluster's one worker is its least-e2e choice. A network
/// of the first feature set reads none of them.
#[test]
fn the_rules_features_are_the_copies_the_rules_score() {
    let (t, f) = two();
    let (obs, by_cluster) = loose_round(&t, &f, |round| {
        let clusters: Vec<u32> = round.agents.iter().map(|a| a.cluster).collect();
        (observe(round, 2, true), clusters)
    });
    let squash = |x: f64| ((1.0 + x).ln() / 4.0) as f32;
    for (a, o) in by_cluster.iter().zip(&obs) {
        // Cluster 0 is `a`, 1 is `far` (file order).
        let (own, other, most) = if *a == 0 {
            (1.0, 13.0, 0.0)
        } else {
            (13.0, 1.0, 1.0)
        };
        assert_eq!(
            o.pending[0][10..],
            [squash(own), squash(other), most],
            "agent {a}"
        );
        assert_eq!(o.workers[0].len(), 1);
        assert_eq!(o.workers[0][0][6..], [squash(own), 1.0], "agent {a}");
        assert_eq!(o.edges[0].len(), 1);
        assert_eq!(o.edges[0][0][7], squash(other), "agent {a}");
    }
    // Each feature set's batch holds its own widths.
    let refs: Vec<_> = obs.iter().collect();
    for features in [TapFeatures::Base, TapFeatures::Rules] {
        let b = ObsBatch::new(&refs, features).unwrap();
        let [_, fp, fw, fe] = features.widths();
        assert_eq!(b.pending.dims()[2], fp);
        assert_eq!(b.workers.dims()[3], fw);
        assert_eq!(b.edges.dims()[3], fe);
    }
}

/// A checkpoint of the rules' features is written and read back with them; its header states
/// their widths, so a build that encodes others refuses it by name.
#[test]
fn a_rules_checkpoint_round_trips() {
    let shape = TapNetShape {
        features: TapFeatures::Rules,
        ..shape()
    };
    let (vars, _) = build(shape, 3).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rules.tapfinger");
    let cfg = TapConfig {
        features: TapFeatures::Rules,
        ..TapConfig::default()
    };
    save(&path, &vars, shape, "two", &cfg).unwrap();
    let ck = TapCheckpoint::load(&path).unwrap();
    assert_eq!(ck.meta.shape, shape);
    assert_eq!(ck.meta.features, TapFeatures::Rules.widths());
    assert!(ck.network(&path).is_ok());
}
