use super::*;
use crate::agent::{ReplayBuffer, Transition, flat};
use continuum_core::fixtures;
use continuum_core::policy::StreamClasses;
use continuum_core::rng::{Purpose, stream_rng};
use continuum_infer::agent::{
    Agent, Checkpoint, CheckpointMeta, DqnConfig, StateEncoder, argmax, topology_fingerprint,
};
use rand::Rng;

fn settings() -> LearnSettings {
    LearnSettings {
        gamma: 0.0,
        learning_rate: 1e-2,
        max_grad_norm: 10.0,
        target_update_interval: 1_000_000,
        quantiles: 0,
    }
}

/// Q-values `[state][class][action]`.
fn q_of(net: &QNet, states: &[f32], n: usize) -> Vec<Vec<Vec<f32>>> {
    let s = net.shape();
    let x = Tensor::from_slice(states, (n, s.features, s.history), &Device::Cpu).unwrap();
    net.forward(&x).unwrap().to_vec3::<f32>().unwrap()
}

fn bandit_shape(classes: usize) -> NetShape {
    NetShape {
        features: 2,
        history: 1,
        conv_channels: 8,
        conv_kernel: 1,
        hidden: 16,
        actions: 3,
        classes,
    }
}

#[test]
fn huber_is_quadratic_then_linear() {
    let e = Tensor::new(&[0.5f32, -2.0, 1.0], &Device::Cpu).unwrap();
    // (0.125 + 1.5 + 0.5) / 3
    let l = huber(&e).unwrap().to_scalar::<f32>().unwrap();
    assert!((l - 2.125 / 3.0).abs() < 1e-6, "{l}");
    // Weighted: only the first two count, the second twice: (0.125 + 2 · 1.5) / 3.
    let w = Tensor::new(&[1.0f32, 2.0, 0.0], &Device::Cpu).unwrap();
    let l = weighted_huber(&e, &w).unwrap().to_scalar::<f32>().unwrap();
    assert!((l - 3.125 / 3.0).abs() < 1e-6, "{l}");
}

/// Trains `l` for `steps` batches of 64 from `buf`; its Q-values in the two bandit contexts.
fn train_on(
    l: &mut Learner,
    buf: &ReplayBuffer,
    rng: &mut continuum_core::rng::SimRng,
    steps: usize,
) -> Vec<Vec<Vec<f32>>> {
    let mut b = Batch::default();
    for _ in 0..steps {
        buf.sample(64, rng, &mut b);
        l.train_step(&b).unwrap();
    }
    q_of(l.online(), &[1.0, 0.0, 0.0, 1.0], 2)
}

#[test]
fn target_network_follows_only_on_sync() {
    let mut l = Learner::new(bandit_shape(2), settings(), 3).unwrap();
    let states = [1.0f32, 0.0, 0.0, 1.0];
    assert_eq!(q_of(l.online(), &states, 2), q_of(l.target(), &states, 2));
    let mut b = Batch::default();
    b.push(&Transition::taken(
        vec![1.0, 0.0],
        vec![1, 2],
        &[1.0, 0.5],
        &[1.0, 1.0],
        3,
        vec![0.0, 1.0],
        true,
    ));
    l.train_step(&b).unwrap();
    assert_ne!(q_of(l.online(), &states, 2), q_of(l.target(), &states, 2));
    l.sync_target().unwrap();
    assert_eq!(q_of(l.online(), &states, 2), q_of(l.target(), &states, 2));
}

#[test]
fn gradient_clipping_bounds_the_global_norm() {
    let (vm, net) = crate::agent::build(bandit_shape(1), 5).unwrap();
    let x = Tensor::from_slice(&[100.0f32, -50.0], (1, 2, 1), &Device::Cpu).unwrap();
    let loss = net.forward(&x).unwrap().sqr().unwrap().sum_all().unwrap();
    let mut g = loss.backward().unwrap();
    let before = clip_grad_norm(&vm, &mut g, 1.0).unwrap();
    assert!(before > 1.0, "{before}");
    let after = clip_grad_norm(&vm, &mut g, 1e9).unwrap();
    assert!((after - 1.0).abs() < 1e-3, "{after}");
}

/// The best action of class `c` in context `x`: class 0 wants the context's index, class 1 the
/// action two away from it — the classes disagree in every context.
fn best(c: usize, x: usize) -> usize {
    if c == 0 { x } else { 2 - x }
}

/// A per-class contextual bandit learned from taken actions only (temporal-difference credit,
/// γ = 0): ε-random actions per class, reward 1 for the class's best action, else 0. At a fixed
/// seed and budget every head's greedy action is its class's best in both contexts.
#[test]
fn learns_a_per_class_bandit_from_taken_actions() {
    let mut l = Learner::new(bandit_shape(2), settings(), 11).unwrap();
    let mut rng = stream_rng(11, Purpose::Other, 1, 0);
    let mut buf = ReplayBuffer::new(3000, 2, 2, 3);
    for _ in 0..3000 {
        let x = rng.random_range(0..2usize);
        let a: Vec<u32> = (0..2).map(|_| rng.random_range(0..3u32)).collect();
        let r: Vec<f32> = (0..2)
            .map(|c| {
                if a[c] as usize == best(c, x) {
                    1.0
                } else {
                    0.0
                }
            })
            .collect();
        let mut s = vec![0.0f32; 2];
        s[x] = 1.0;
        buf.push(&Transition::taken(
            s.clone(),
            a,
            &r,
            &[1.0, 1.0],
            3,
            s,
            true,
        ));
    }
    let q = train_on(&mut l, &buf, &mut rng, 400);
    for (x, per_class) in q.iter().enumerate() {
        for (c, qc) in per_class.iter().enumerate() {
            assert_eq!(argmax(qc), best(c, x), "context {x} class {c}: {q:?}");
            assert!((qc[best(c, x)] - 1.0).abs() < 0.2, "{q:?}");
        }
    }
}

/// The bandit of [`learns_a_per_class_bandit_from_taken_actions`] with one class whose best
/// action pays 1 or 0 at random (mean ½) and the others 0: filled into a buffer.
fn noisy_bandit(rng: &mut continuum_core::rng::SimRng) -> ReplayBuffer {
    let mut buf = ReplayBuffer::new(3000, 2, 1, 3);
    for _ in 0..3000 {
        let x = rng.random_range(0..2usize);
        let a = rng.random_range(0..3u32);
        let r = if a as usize == x && rng.random::<bool>() {
            1.0
        } else {
            0.0
        };
        let mut s = vec![0.0f32; 2];
        s[x] = 1.0;
        buf.push(&Transition::taken(
            s.clone(),
            vec![a],
            &[r],
            &[1.0],
            3,
            s,
            true,
        ));
    }
    buf
}

/// An implicit quantile network on the noisy bandit, with γ = 0 and with γ = 0.9 on terminal
/// transitions (the target network's quantiles then gathered and zeroed): the greedy action is
/// the paying one in both contexts, valued near its mean ½, and its low quantiles sit below its
/// high ones (the network has learnt the 0-or-1 spread, not only the mean).
#[test]
fn an_implicit_quantile_network_learns_the_mean_and_the_spread() {
    for gamma in [0.0, 0.9] {
        let iqn = LearnSettings {
            quantiles: 16,
            gamma,
            ..settings()
        };
        let mut l = Learner::new(bandit_shape(1), iqn, 21).unwrap();
        assert!(l.online().is_quantile());
        let mut rng = stream_rng(21, Purpose::Other, 1, 0);
        let buf = noisy_bandit(&mut rng);
        let q = train_on(&mut l, &buf, &mut rng, 600);
        for (x, per_class) in q.iter().enumerate() {
            assert_eq!(argmax(&per_class[0]), x, "γ {gamma}, context {x}: {q:?}");
            assert!((per_class[0][x] - 0.5).abs() < 0.15, "γ {gamma}: {q:?}");
        }
        let (lo, hi) = (z_at(&l, 0.1), z_at(&l, 0.9));
        assert!(hi - lo > 0.4, "γ {gamma}: τ 0.1 → {lo}, τ 0.9 → {hi}");
    }
}

/// The online network's quantile `tau` of action 0 in context 0.
fn z_at(l: &Learner, tau: f32) -> f32 {
    let s = Tensor::from_slice(&[1.0f32, 0.0], (1, 2, 1), &Device::Cpu).unwrap();
    let t = Tensor::from_slice(&[tau], (1, 1), &Device::Cpu).unwrap();
    l.online()
        .quantiles(&s, &t)
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1::<f32>()
        .unwrap()[0]
}

/// The same bandit from full-information values (counterfactual credit): every action of one
/// class per transition carries its centred value, the other class has no weight.
#[test]
fn learns_a_per_class_bandit_from_counterfactual_values() {
    let mut l = Learner::new(bandit_shape(2), settings(), 12).unwrap();
    let mut rng = stream_rng(12, Purpose::Other, 1, 0);
    let mut buf = ReplayBuffer::new(1000, 2, 2, 3);
    for i in 0..1000 {
        let x = rng.random_range(0..2usize);
        let c = i % 2;
        let mut values = vec![0.0f32; 6];
        let mut weights = vec![0.0f32; 6];
        for a in 0..3 {
            values[c * 3 + a] = if a == best(c, x) {
                2.0 / 3.0
            } else {
                -1.0 / 3.0
            };
            weights[c * 3 + a] = 1.0;
        }
        let mut s = vec![0.0f32; 2];
        s[x] = 1.0;
        buf.push(&Transition {
            state: s.clone(),
            actions: vec![0, 0],
            values,
            weights,
            next_state: s,
            done: true,
        });
    }
    let q = train_on(&mut l, &buf, &mut rng, 300);
    for (x, per_class) in q.iter().enumerate() {
        for (c, qc) in per_class.iter().enumerate() {
            assert_eq!(argmax(qc), best(c, x), "context {x} class {c}: {q:?}");
        }
    }
}

fn tiny_meta(sc: &continuum_sim::Scenario, classes: StreamClasses) -> (CheckpointMeta, DqnConfig) {
    let cfg = DqnConfig {
        history: 2,
        conv_kernel: 2,
        hidden: 16,
        conv_channels: 4,
        ..DqnConfig::default()
    };
    let enc = StateEncoder::new(&sc.topology, &sc.fleet, &cfg);
    let shape = NetShape {
        features: enc.features(),
        history: 2,
        conv_channels: 4,
        conv_kernel: 2,
        hidden: 16,
        actions: cfg.actions.len(),
        classes: classes.len(),
    };
    let names = sc.profiles.variant_names();
    let meta = CheckpointMeta {
        actions: cfg.actions.clone(),
        fallback: continuum_infer::agent::Fallback::single(vec![1; classes.len()]),
        classes,
        topology: "tiny".into(),
        fingerprint: topology_fingerprint(&sc.topology, &names),
        shape,
        config: cfg.clone(),
        margin: 0.25,
    };
    (meta, cfg)
}

#[test]
fn branching_checkpoint_round_trip_gives_the_same_q_values() {
    let sc = fixtures::scenario(
        fixtures::TOPOLOGY,
        &fixtures::workload(10.0, "periodic", 100.0, 0.0),
    );
    let classes = StreamClasses::new(
        vec!["a".into(), "b".into(), "c".into()],
        continuum_core::observe::DemandBuckets::default(),
        vec![2; 12],
    )
    .unwrap();
    let (meta, _) = tiny_meta(&sc, classes);
    let l = Learner::new(meta.shape, settings(), 9).unwrap();
    let names = sc.profiles.variant_names();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiny.dqn");
    crate::agent::save(&path, l.online_vars(), &meta).unwrap();
    let ck = Checkpoint::load(&path).unwrap();
    assert_eq!(ck.meta, meta);
    let mut agent = Agent::new(&ck, &path, &sc.topology, &sc.fleet, &names).unwrap();
    // Zero history: both schedulers see zeros; three heads of five actions.
    let zeros = vec![0.0f32; meta.shape.features * 2 * 2];
    let q = agent.q_values();
    assert_eq!(q, q_of(l.online(), &zeros, 2));
    assert_eq!((q.len(), q[0].len(), q[0][0].len()), (2, 3, 5));
    // decide(), against choices worked out by hand. Zero states give zero hidden activations,
    // so each head's Q-values are its output biases: set them to known values. The fallback
    // (every table) is action 1 and the checkpoint's margin 0.25.
    //   class a: 0, .1, .5, .2, .5  greedy 2 (first of the tie with 4), 0.4 above the fallback
    //   class b: .3, .2, .1, .4, 0  greedy 3, 0.2 above the fallback
    //   class c: 0, .9, .1, .3, .2  greedy is the fallback
    let bias: [f32; 15] = [
        0.0, 0.1, 0.5, 0.2, 0.5, 0.3, 0.2, 0.1, 0.4, 0.0, 0.0, 0.9, 0.1, 0.3, 0.2,
    ];
    {
        let vars = l.online_vars().data().lock().unwrap();
        let out_bias = vars.get("out.bias").expect("the heads' bias");
        out_bias
            .set(&Tensor::from_slice(&bias, 15, &Device::Cpu).unwrap())
            .unwrap();
    }
    crate::agent::save(&path, l.online_vars(), &meta).unwrap();
    let ck = Checkpoint::load(&path).unwrap();
    let mut agent = Agent::new(&ck, &path, &sc.topology, &sc.fleet, &names).unwrap();
    let q = agent.q_values();
    let heads: Vec<Vec<f32>> = bias.chunks(5).map(<[f32]>::to_vec).collect();
    assert_eq!(q, vec![heads.clone(), heads]);
    assert_eq!(agent.margin(), 0.25);
    for (margin, per_class) in [(0.25, [2, 1, 1]), (0.0, [2, 3, 1]), (1e9, [1, 1, 1])] {
        agent.set_margin(margin);
        let d = agent.decide();
        assert_eq!(d, vec![per_class.to_vec(); 2], "margin {margin}");
    }
    // One agent for the system: the greedy actions of the system's state (zeros too), the
    // network alone, for every scheduler.
    let mut system = ck.clone();
    system.meta.config.granularity = continuum_infer::agent::Granularity::System;
    let mut agent = Agent::new(&system, &path, &sc.topology, &sc.fleet, &names).unwrap();
    assert_eq!(agent.decide(), vec![vec![2, 3, 1]; 2]);
    // Another topology (one cluster fewer) is refused with a clear message.
    let other = continuum_core::topology::Topology::from_source(
        &continuum_core::config::Source::inline("o.yaml", "clusters:\n  - {id: a0, layer: access, capacity: {cpu: 1}, deploy: {fill: [small-b1]}}\n"),
        &sc.profiles,
    )
    .unwrap();
    let fleet = continuum_core::feasibility::Fleet::new(&other, &sc.profiles);
    let err = Agent::new(&ck, &path, &other, &fleet, &names)
        .err()
        .expect("incompatible");
    assert!(err.to_string().contains("incompatible checkpoint"), "{err}");
    // A class list that does not match the network's heads is refused.
    let two = StreamClasses::new(
        vec!["a".into(), "b".into()],
        continuum_core::observe::DemandBuckets::default(),
        vec![0; 12],
    )
    .unwrap();
    let mut wrong = ck.clone();
    wrong.meta.classes = two;
    wrong.meta.shape.classes = 2;
    wrong.meta.fallback = continuum_infer::agent::Fallback::single(vec![0, 0]);
    let err = Agent::new(&wrong, &path, &sc.topology, &sc.fleet, &names)
        .err()
        .expect("incompatible classes");
    assert!(err.to_string().contains("2 classes × 5 actions"), "{err}");
    // A file that is not a checkpoint is refused too.
    std::fs::write(dir.path().join("junk.dqn"), b"not safetensors").unwrap();
    let err = Checkpoint::load(&dir.path().join("junk.dqn")).unwrap_err();
    assert!(
        err.to_string().contains("not a continuum checkpoint"),
        "{err}"
    );
}

/// A prioritised step: with every importance weight 1 it is the plain step (same loss, same
/// weights after it); its priorities are each transition's |Q − v| (γ = 0), so the transition
/// whose value the network is furthest from has the highest; a Double-DQN and an implicit
/// quantile network both give one priority per transition.
#[test]
fn a_prioritised_step_weighs_by_importance_and_reports_each_error() {
    let mut rng = stream_rng(5, Purpose::Other, 1, 0);
    let buf = noisy_bandit(&mut rng);
    let mut b = Batch::default();
    buf.sample(32, &mut rng, &mut b);
    let mut plain = Learner::new(bandit_shape(1), settings(), 9).unwrap();
    let mut prio = Learner::new(bandit_shape(1), settings(), 9).unwrap();
    let before = q_of(prio.online(), &b.states, b.len());
    let l0 = plain.train_step(&b).unwrap();
    let mut ones = b.clone();
    ones.importance = vec![1.0; b.len()];
    let (l1, p) = prio.train_step_prioritised(&ones).unwrap();
    assert_eq!(l0, l1);
    assert_eq!(
        flat(plain.online_vars()).unwrap(),
        flat(prio.online_vars()).unwrap()
    );
    assert_eq!(p.len(), b.len());
    for (j, &pj) in p.iter().enumerate() {
        let a = b.actions[j] as usize;
        let want = (before[j][0][a] - b.values[3 * j + a]).abs();
        assert!(
            (pj - want).abs() < 1e-5,
            "transition {j}: {pj} against {want}"
        );
    }
    // Down-weighting every transition but one changes the step.
    let mut skew = b.clone();
    skew.importance = (0..b.len())
        .map(|j| if j == 0 { 1.0 } else { 0.1 })
        .collect();
    let mut third = Learner::new(bandit_shape(1), settings(), 9).unwrap();
    let l2 = third.train_step_prioritised(&skew).unwrap().0;
    assert!(l2 < l1, "{l2} against {l1}");
    let iqn = LearnSettings {
        quantiles: 8,
        gamma: 0.9,
        ..settings()
    };
    let mut q = Learner::new(bandit_shape(1), iqn, 9).unwrap();
    let (_, p) = q.train_step_prioritised(&ones).unwrap();
    assert_eq!(p.len(), b.len());
    assert!(p.iter().all(|x| x.is_finite() && *x >= 0.0), "{p:?}");
}
