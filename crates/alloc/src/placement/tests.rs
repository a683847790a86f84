use super::*;
use continuum_core::fixtures;

/// The tiny topology's candidates (cloud big-b4; co small-b1, other-b1; a0 small-b1,
/// other-b1) under one application of task `detect` with a loose deadline.
fn scenario() -> Scenario {
    fixtures::candidate_scenario(
        fixtures::TOPOLOGY,
        &fixtures::workload(60.0, "poisson", 400.0, 0.0),
    )
}

fn placement(sc: &Scenario, allocator: &str) -> Placement {
    let a = crate::alloc::by_name(allocator, crate::alloc::StepSize::PAPER).expect("registered");
    Placement::build(sc, a, Units::Replica)
}

/// Whether `replicas` fit every cluster's capacity.
fn fits_everywhere(sc: &Scenario, replicas: &[u32]) -> bool {
    let t = &sc.topology;
    t.clusters.iter().enumerate().all(|(c, cl)| {
        let mut used: BTreeMap<String, f64> = BTreeMap::new();
        for (w, wk) in t.workers.iter().enumerate().filter(|(_, w)| w.cluster == c) {
            for (k, x) in &sc.profiles.variants[wk.variant].resources {
                *used.entry(k.clone()).or_default() += x * f64::from(replicas[w]);
            }
        }
        used.iter()
            .all(|(k, u)| *u <= cl.capacity.get(k).copied().unwrap_or(0.0) + 1e-9)
    })
}

use std::collections::BTreeMap;

#[test]
fn links_serve_each_port_with_a_variant_of_its_task() {
    let sc = scenario();
    let p = placement(&sc, "oga");
    // Two schedulers × one app; three instances (cloud, co, a0), each with a detect variant.
    assert_eq!(p.spec.requests.len(), 2);
    assert_eq!(p.instances.len(), 3);
    assert_eq!(p.links.len(), 6);
    let other = sc.profiles.variant_id("other-b1").unwrap();
    for l in &p.links {
        assert_ne!(sc.topology.workers[l.worker].variant, other);
    }
    // Resources in units of the smallest replica: one cpu, one gpu.
    assert_eq!(p.resources(), [("cpu".into(), 1.0), ("gpu".into(), 1.0)]);
    // In instance units, the largest cluster (cpu 2, gpu 2) holds α/β − 1 units.
    let a = crate::alloc::by_name("oga", crate::alloc::StepSize::PAPER).unwrap();
    let q = Placement::build(&sc, a, Units::Instance);
    let per = ALPHA / BETA - 1.0;
    assert!((q.resources()[0].1 - 2.0 / per).abs() < 1e-12);
}

#[test]
fn every_allocator_deploys_within_capacity_and_only_where_it_allocates() {
    let sc = scenario();
    for &name in crate::alloc::NAMES.iter().chain(&crate::alloc::ABLATIONS) {
        let mut p = placement(&sc, name);
        for demand in [[0.0, 0.0], [300.0, 0.0], [300.0, 500.0], [50.0, 50.0]] {
            let r = p.step(&sc, &demand);
            assert!(fits_everywhere(&sc, &r), "{name} {demand:?}: {r:?}");
            assert_eq!(
                r[fixtures::worker(&sc, "co", "other-b1")],
                0,
                "{name}: wrong task"
            );
            if demand == [0.0, 0.0] && name != "oga" {
                assert!(r.iter().all(|x| *x == 0), "{name}: no demand, {r:?}");
            }
            assert!(p.rewards.last().unwrap().is_finite());
        }
        assert_eq!(p.rewards.len(), 4);
    }
}

#[test]
fn rounding_keeps_whole_parts_then_remainders_then_fills_in_proportion() {
    let sc = scenario();
    let (co, a0, cloud) = (
        fixtures::worker(&sc, "co", "small-b1"),
        fixtures::worker(&sc, "a0", "small-b1"),
        fixtures::worker(&sc, "cloud", "big-b4"),
    );
    let mut frac = vec![0.0; sc.topology.workers.len()];
    // co (cpu 2): 0.4 → 1 by remainder, then 2 by the fill. cloud (gpu 2): 1.0 → 1, then the
    // fill adds the second. a0: nothing allocated, nothing deployed.
    frac[co] = 0.4;
    frac[cloud] = 1.0;
    let inst: Vec<usize> = (0..sc.topology.clusters.len()).collect();
    let r = round::to_replicas(&sc, &inst, &frac);
    assert_eq!((r[co], r[cloud], r[a0]), (2, 2, 0));
    // Whole parts beyond the capacity are cut to it.
    frac[co] = 7.0;
    assert_eq!(round::to_replicas(&sc, &inst, &frac)[co], 2);
}

#[test]
fn the_step_follows_the_regret_bound() {
    let sc = scenario();
    let p = Placement::new(&sc, "oga", ModelOptions::default(), 16, None).unwrap();
    // D = √(2² + 2² + 1²) = 3 (cloud gpu 2, co cpu 2, a0 cpu 1); G = 1.3 · √(6 links · 2
    // resources); T = 16.
    let want = 3.0 / (1.3 * 12f64.sqrt() * 4.0);
    match p.step_size(16) {
        crate::alloc::StepSize::Geometric { eta0, decay } => {
            assert!((eta0 - want).abs() < 1e-12, "{eta0} vs {want}");
            assert_eq!(decay, 0.9999);
        }
        s => panic!("{s:?}"),
    }
    assert!(Placement::new(&sc, "greedy", ModelOptions::default(), 16, None).is_err());
}
