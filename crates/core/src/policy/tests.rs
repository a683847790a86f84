use super::*;
use crate::rng::{Purpose, stream_rng};

fn cand(
    worker: u32,
    cluster: u32,
    variant: u32,
    net: f64,
    proc_ms: f64,
    load: f64,
    cap: f64,
) -> Candidate {
    Candidate {
        worker,
        cluster,
        variant,
        net_ms: net,
        e2e_ms: 2.0 * net + proc_ms,
        load_qps: load,
        capacity_qps: cap,
        demand_qps: 1.0,
        cluster_shares: [0.0; 2],
    }
}

/// Three bindings as seen from an antenna: its own small CPU worker, a central office one and
/// a cloud GPU one.
fn three() -> Vec<Candidate> {
    vec![
        cand(0, 2, 0, 0.0, 30.0, 40.0, 50.0), // antenna: near, slow, busy (e2e 30)
        cand(1, 1, 0, 3.0, 10.0, 20.0, 200.0), // central office (e2e 16)
        cand(2, 0, 1, 25.0, 8.0, 5.0, 400.0), // cloud: far, fast, idle-ish (e2e 58)
    ]
}

fn pick(name: &str, c: &[Candidate]) -> usize {
    by_name(name)
        .expect("registered")
        .choose(c, &mut stream_rng(1, Purpose::Other, 0, 0))
}

#[test]
fn deterministic_policies_pick_the_known_binding() {
    let c = three();
    assert_eq!(pick("closest", &c), 0);
    assert_eq!(pick("farthest", &c), 2);
    assert_eq!(pick("load-balancing", &c), 2);
    assert_eq!(pick("cheaper", &c), 2);
    assert_eq!(pick("least-impedance", &c), 1);
    // Same demand (1 qps): (1/C)·((C − L)/C) is 0.004, 0.0045 and about 0.0025.
    assert_eq!(pick("tetris", &c), 1);
}

#[test]
fn ties_break_by_load_then_cluster_then_variant() {
    let c = vec![
        cand(0, 3, 1, 5.0, 10.0, 7.0, 100.0),
        cand(1, 3, 0, 5.0, 10.0, 7.0, 100.0),
        cand(2, 4, 0, 5.0, 10.0, 7.0, 100.0),
        cand(3, 9, 9, 5.0, 10.0, 6.0, 100.0),
    ];
    // Same distance and e2e everywhere: the least loaded wins.
    for p in [
        "closest",
        "farthest",
        "cheaper",
        "least-impedance",
        "load-balancing",
        "tetris",
    ] {
        assert_eq!(pick(p, &c), 3, "{p}");
    }
    // Without it: lower cluster, then lower variant.
    let c = &c[..3];
    for p in [
        "closest",
        "farthest",
        "cheaper",
        "least-impedance",
        "load-balancing",
        "tetris",
    ] {
        assert_eq!(pick(p, c), 1, "{p}");
    }
}

fn frequencies(name: &str, c: &[Candidate], n: usize) -> Vec<f64> {
    let p = by_name(name).unwrap();
    let mut rng = stream_rng(42, Purpose::Other, 0, 0);
    let mut counts = vec![0usize; c.len()];
    for _ in 0..n {
        counts[p.choose(c, &mut rng)] += 1;
    }
    counts.into_iter().map(|k| k as f64 / n as f64).collect()
}

fn assert_close(got: &[f64], want: &[f64]) {
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 0.01, "got {got:?}, want {want:?}");
    }
}

#[test]
fn random_proportional_latency_draws_by_inverse_e2e() {
    let c = three();
    let w: Vec<f64> = c.iter().map(|x| 1.0 / x.e2e_ms).collect();
    let total: f64 = w.iter().sum();
    assert_close(
        &frequencies("random-proportional-latency", &c, 200_000),
        &w.iter().map(|x| x / total).collect::<Vec<_>>(),
    );
}

#[test]
fn random_proportional_load_weighs_idle_as_the_largest_finite_weight() {
    let mut c = three();
    c[1].load_qps = 0.0; // idle
    // Finite weights: 50/40 = 1.25 and 400/5 = 80; the idle one weighs 80 too.
    let w = [1.25, 80.0, 80.0];
    let total: f64 = w.iter().sum();
    assert_close(
        &frequencies("random-proportional-load", &c, 200_000),
        &w.map(|x| x / total),
    );
    // All idle: uniform.
    for x in &mut c {
        x.load_qps = 0.0;
    }
    assert_close(
        &frequencies("random-proportional-load", &c, 200_000),
        &[1.0 / 3.0; 3],
    );
}

#[test]
fn random_is_uniform() {
    assert_close(&frequencies("random", &three(), 200_000), &[1.0 / 3.0; 3]);
}

#[test]
fn registry_has_the_seventeen_policies_and_parses_lists() {
    assert_eq!(
        names(),
        [
            "closest",
            "load-balancing",
            "farthest",
            "cheaper",
            "random-proportional-latency",
            "random-proportional-load",
            "least-impedance",
            "random",
            "tetris",
            "least-allocated",
            "most-allocated",
            "worker-headroom",
            "headroom",
            "headroom-packing",
            "two-choices",
            "least-predicted",
            "balanced-allocation"
        ]
    );
    assert_eq!(
        by_name("choices:3").expect("a family member").name(),
        "choices:3"
    );
    assert_eq!(parse_list("two-choices,choices:4").unwrap().len(), 2);
    assert_eq!(parse_list("closest, random").unwrap().len(), 2);
    let e = parse_list("closest,nearest").err().unwrap();
    assert!(e.contains("unknown policy `nearest`"), "{e}");
    assert!(!e.contains("did you mean"), "{e}");
    let e = parse_list("headrom").err().unwrap();
    assert!(
        e.starts_with("unknown policy `headrom` (did you mean `headroom`?); known policies:"),
        "{e}"
    );
    let e = parse_list("greedy_pull").err().unwrap();
    assert!(e.contains("(did you mean `greedy-pull`?)"), "{e}");
}

#[test]
fn a_single_candidate_is_always_chosen() {
    let c = &three()[..1];
    for p in REGISTRY {
        assert_eq!(
            p.choose(c, &mut stream_rng(3, Purpose::Other, 0, 0)),
            0,
            "{}",
            p.name()
        );
    }
}

#[test]
fn every_nameable_policy_once_registry_first() {
    let all = every();
    assert_eq!(
        &all[..REGISTRY.len()]
            .iter()
            .map(|p| p.name())
            .collect::<Vec<_>>(),
        &names()
    );
    assert_eq!(all.len(), REGISTRY.len() + choices::MAX_D - 1);
    for p in all {
        assert_eq!(by_name(p.name()).map(|q| q.name()), Some(p.name()));
    }
}
