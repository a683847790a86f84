//! The `current` load view (docs/model.md §8) on the tiny fixture topology, where every stream
//! brings the same demand (10 qps of 10 KB frames), so each worker's present load is its stream
//! count times that demand.

use super::*;
use continuum_core::fixtures;
use continuum_core::load::{LoadViewMode, OwnBindings};
use continuum_core::policy::by_name;

fn scenario(lambda: f64) -> Arc<Scenario> {
    Arc::new(fixtures::scenario(
        fixtures::TOPOLOGY,
        &fixtures::workload(lambda, "periodic", 1000.0, 0.0),
    ))
}

fn cfg(view: LoadViewMode, staleness_ms: f64) -> SimConfig {
    SimConfig {
        duration_s: 40.0,
        staleness_ms,
        load_window_ms: staleness_ms.max(1000.0),
        seed: 3,
        load_view: view,
        ..SimConfig::default()
    }
}

#[test]
fn current_view_is_every_bound_streams_demand_at_every_moment() {
    let sc = scenario(120.0);
    let mut sim = Simulation::new(
        sc.clone(),
        cfg(LoadViewMode::Current, 100.0),
        by_name("random").unwrap(),
    );
    let mut seen_load = false;
    // Between publications too (137 ms is not a multiple of Δ), while streams open and end.
    for k in 1..=400 {
        sim.run_until(f64::from(k) * 137.0);
        for (w, seen) in sim.load_view().workers.iter().enumerate() {
            let fw = &sc.fleet.workers[w];
            let streams = sim.workers[w].streams;
            assert_eq!(seen.streams, streams, "worker {w} at step {k}");
            let expected = f64::from(streams) * 10.0 * 10.0 / fw.ref_kb;
            assert!(
                (seen.load_qps - expected).abs() < 1e-9,
                "worker {w} at step {k}: {} against {expected}",
                seen.load_qps
            );
            seen_load |= streams > 0;
        }
    }
    assert!(seen_load, "no stream was ever bound");
    // Once every stream has ended, every worker is idle again, exactly.
    sim.finish();
    for seen in &sim.load_view().workers {
        assert_eq!((seen.streams, seen.load_qps), (0, 0.0));
    }
}

#[test]
fn current_view_spreads_what_one_stale_published_view_herds() {
    // One publication every 5 s: on the published view every stream bound in those 5 s goes
    // where it shows the least load; on the current view each binding sees the ones before it.
    let sc = scenario(120.0);
    let streams_per_worker = |view: LoadViewMode| {
        let mut sim = Simulation::new(
            sc.clone(),
            cfg(view, 5000.0),
            by_name("load-balancing").unwrap(),
        );
        sim.run_until(5001.0);
        sim.workers.iter().map(|w| w.streams).collect::<Vec<_>>()
    };
    let herd = streams_per_worker(LoadViewMode::Published);
    let spread = streams_per_worker(LoadViewMode::Current);
    let (h_total, h_most) = (herd.iter().sum::<u32>(), *herd.iter().max().unwrap());
    let (s_total, s_most) = (spread.iter().sum::<u32>(), *spread.iter().max().unwrap());
    assert!(h_total >= 10 && s_total >= 10, "{herd:?} {spread:?}");
    assert!(h_most * 10 >= h_total * 8, "herding expected: {herd:?}");
    assert!(s_most * 2 <= s_total, "spreading expected: {spread:?}");
}

#[test]
fn published_is_the_default_and_current_refuses_own_binding_accounting() {
    let sc = scenario(60.0);
    let total = |c: SimConfig| {
        let mut sim = Simulation::new(sc.clone(), c, by_name("closest").unwrap());
        sim.finish();
        sim.metrics().sum(|_, _, _| true)
    };
    let plain = SimConfig {
        duration_s: 40.0,
        seed: 3,
        ..SimConfig::default()
    };
    assert_eq!(plain.load_view, LoadViewMode::Published);
    assert_eq!(
        total(plain),
        total(SimConfig {
            load_view: LoadViewMode::Published,
            ..plain
        })
    );
    let both = SimConfig {
        load_view: LoadViewMode::Current,
        own_bindings: OwnBindings::Publication,
        ..plain
    };
    let e = both.validate().unwrap_err();
    assert!(e.contains("--own-bindings off"), "{e}");
}
