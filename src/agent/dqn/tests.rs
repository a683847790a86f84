use super::*;
use crate::agent::{
    Agent, Checkpoint, DqnConfig, ReplayBuffer, StateEncoder, argmax, topology_fingerprint,
};
use crate::fixtures;
use crate::rng::{Purpose, stream_rng};
use rand::Rng;

fn settings() -> LearnSettings {
    LearnSettings {
        gamma: 0.0,
        learning_rate: 1e-2,
        max_grad_norm: 10.0,
        target_update_interval: 1_000_000,
    }
}

fn q_of(net: &QNet, states: &[f32], n: usize) -> Vec<Vec<f32>> {
    let s = net.shape();
    let x = Tensor::from_slice(states, (n, s.features, s.history), &Device::Cpu).unwrap();
    net.forward(&x).unwrap().to_vec2::<f32>().unwrap()
}

fn bandit_shape() -> NetShape {
    NetShape {
        features: 2,
        history: 1,
        conv_channels: 8,
        conv_kernel: 1,
        hidden: 16,
        actions: 3,
    }
}

#[test]
fn huber_is_quadratic_then_linear() {
    let e = Tensor::new(&[0.5f32, -2.0, 1.0], &Device::Cpu).unwrap();
    // (0.125 + 1.5 + 0.5) / 3
    let l = huber(&e).unwrap().to_scalar::<f32>().unwrap();
    assert!((l - 2.125 / 3.0).abs() < 1e-6, "{l}");
}

#[test]
fn target_network_follows_only_on_sync() {
    let mut l = Learner::new(bandit_shape(), settings(), 3).unwrap();
    let states = [1.0f32, 0.0, 0.0, 1.0];
    assert_eq!(q_of(l.online(), &states, 2), q_of(l.target(), &states, 2));
    let b = Batch {
        states: vec![1.0, 0.0],
        next_states: vec![0.0, 1.0],
        actions: vec![1],
        rewards: vec![1.0],
        dones: vec![1.0],
    };
    l.train_step(&b).unwrap();
    assert_ne!(q_of(l.online(), &states, 2), q_of(l.target(), &states, 2));
    l.sync_target().unwrap();
    assert_eq!(q_of(l.online(), &states, 2), q_of(l.target(), &states, 2));
}

#[test]
fn gradient_clipping_bounds_the_global_norm() {
    let (vm, net) = crate::agent::build(bandit_shape(), 5).unwrap();
    let x = Tensor::from_slice(&[100.0f32, -50.0], (1, 2, 1), &Device::Cpu).unwrap();
    let loss = net.forward(&x).unwrap().sqr().unwrap().sum_all().unwrap();
    let mut g = loss.backward().unwrap();
    let before = clip_grad_norm(&vm, &mut g, 1.0).unwrap();
    assert!(before > 1.0, "{before}");
    let after = clip_grad_norm(&vm, &mut g, 1e9).unwrap();
    assert!((after - 1.0).abs() < 1e-3, "{after}");
}

/// A contextual bandit: the context is one-hot in two features; the best action is the
/// context's index (reward 1, else 0). At a fixed seed and budget the greedy policy learns it.
#[test]
fn learns_a_contextual_bandit() {
    let mut l = Learner::new(bandit_shape(), settings(), 11).unwrap();
    let mut rng = stream_rng(11, Purpose::Other, 1, 0);
    let mut buf = ReplayBuffer::new(2000, 2);
    for _ in 0..2000 {
        let c = rng.random_range(0..2usize);
        let a = rng.random_range(0..3u32);
        let mut s = [0.0f32; 2];
        s[c] = 1.0;
        buf.push(&s, a, if a as usize == c { 1.0 } else { 0.0 }, &s, true);
    }
    let mut b = Batch::default();
    for _ in 0..300 {
        buf.sample(64, &mut rng, &mut b);
        l.train_step(&b).unwrap();
    }
    let q = q_of(l.online(), &[1.0, 0.0, 0.0, 1.0], 2);
    assert_eq!((argmax(&q[0]), argmax(&q[1])), (0, 1), "{q:?}");
    assert!(
        (q[0][0] - 1.0).abs() < 0.15 && q[0][2].abs() < 0.15,
        "{q:?}"
    );
}

#[test]
fn checkpoint_round_trip_gives_the_same_q_values() {
    let sc = fixtures::scenario(
        fixtures::TOPOLOGY,
        &fixtures::workload(10.0, "periodic", 100.0, 0.0),
    );
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
    };
    let l = Learner::new(shape, settings(), 9).unwrap();
    let names = sc.profiles.variant_names();
    let fp = topology_fingerprint(&sc.topology, &names);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiny.dqn");
    Checkpoint::save(&path, l.online_vars(), shape, &cfg, "tiny", &fp).unwrap();
    let ck = Checkpoint::load(&path).unwrap();
    assert_eq!(
        (ck.shape, ck.config.clone(), ck.actions.clone()),
        (shape, cfg.clone(), cfg.actions.clone())
    );
    let mut agent = Agent::new(&ck, &path, &sc.topology, &sc.fleet, &names).unwrap();
    // Zero history: both schedulers see zeros.
    let zeros = vec![0.0f32; enc.state_len() * 2];
    assert_eq!(agent.q_values().unwrap(), q_of(l.online(), &zeros, 2));
    // Another topology (one cluster fewer) is refused with a clear message.
    let other = crate::topology::Topology::from_source(
        &crate::config::Source::inline("o.yaml", "clusters:\n  - {id: a0, layer: access, capacity: {cpu: 1}, deploy: {fill: [small-b1]}}\n"),
        &sc.profiles,
    )
    .unwrap();
    let fleet = crate::feasibility::Fleet::new(&other, &sc.profiles);
    let err = Agent::new(&ck, &path, &other, &fleet, &names)
        .err()
        .expect("incompatible");
    assert!(err.to_string().contains("incompatible checkpoint"), "{err}");
    // A file that is not a checkpoint is refused too.
    std::fs::write(dir.path().join("junk.dqn"), b"not safetensors").unwrap();
    let err = Checkpoint::load(&dir.path().join("junk.dqn")).unwrap_err();
    assert!(
        err.to_string().contains("not a continuum DQN checkpoint"),
        "{err}"
    );
}
