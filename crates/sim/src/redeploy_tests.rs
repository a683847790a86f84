//! Deployment changes during a run, on the tiny topology (candidate workers: cloud big-b4 ×2;
//! co small-b1 ×2 and other-b1 ×0; a0 small-b1 ×1 and other-b1 ×0).

use super::*;
use continuum_core::fixtures;
use continuum_core::policy::by_name;

fn scenarios(lambda: f64) -> (Arc<Scenario>, Arc<Scenario>) {
    let wl = fixtures::workload(lambda, "{uniform_ms: 3}", 150.0, 0.0);
    (
        Arc::new(fixtures::scenario(fixtures::TOPOLOGY, &wl)),
        Arc::new(fixtures::candidate_scenario(fixtures::TOPOLOGY, &wl)),
    )
}

fn cfg(duration_s: f64, queue_bound: QueueBound) -> SimConfig {
    SimConfig {
        duration_s,
        seed: 4,
        queue_bound,
        ..SimConfig::default()
    }
}

fn per_window(sim: &Simulation) -> Vec<continuum_core::metrics::Counts> {
    (0..sim.metrics().windows())
        .map(|w| sim.metrics().sum(|x, _, _| x == w))
        .collect()
}

#[test]
fn candidate_workers_with_the_file_deployment_change_nothing() {
    let (plain, cand) = scenarios(90.0);
    assert_eq!(plain.topology.workers.len(), 3);
    assert_eq!(cand.topology.workers.len(), 5);
    for policy in continuum_core::policy::names() {
        let p = by_name(policy).expect("registered");
        let mut a = Simulation::new(plain.clone(), cfg(60.0, QueueBound::Deadline), p);
        let mut b = Simulation::new(cand.clone(), cfg(60.0, QueueBound::Deadline), p);
        a.finish();
        b.finish();
        assert_eq!(per_window(&a), per_window(&b), "{policy}");
    }
}

#[test]
fn an_addition_serves_after_the_load_delay_and_a_removal_binds_no_more_at_once() {
    let (_, sc) = scenarios(60.0);
    let other = fixtures::worker(&sc, "co", "other-b1");
    let small = fixtures::worker(&sc, "co", "small-b1");
    let load_ms = sc.profiles.variants[sc.fleet.workers[other].variant as usize].load_s * 1000.0;
    let p = by_name("least-impedance").expect("registered");
    let mut sim = Simulation::new(sc.clone(), cfg(60.0, QueueBound::Deadline), p);
    sim.run_until(10_000.0);
    let mut want: Vec<u32> = sc.fleet.workers.iter().map(|w| w.replicas).collect();
    want[other] = 1;
    want[small] = 1;
    sim.set_deployment(&want);
    let fleet = |s: &Simulation, w: usize| s.scenario().fleet.workers[w].replicas;
    // The removal leaves binding at once; the addition only once loaded.
    assert_eq!(fleet(&sim, small), 1);
    assert_eq!(fleet(&sim, other), 0);
    sim.run_until(10_000.0 + load_ms - 1.0);
    assert_eq!(fleet(&sim, other), 0);
    assert_eq!(sim.loaded_replicas()[other], 0);
    sim.run_until(10_000.0 + load_ms + 1.0);
    assert_eq!(fleet(&sim, other), 1);
    assert_eq!(sim.loaded_replicas()[other], 1);
    assert_eq!(
        sim.loaded_replicas()[small],
        1,
        "the surplus replica unloaded"
    );
    assert!(sim.scenario().fleet.workers[other].capacity_qps > 0.0);
}

/// Every worker near the clients is withdrawn mid-run: their streams re-bind (to the cloud or
/// nowhere), their queued queries are still served, and none is lost or dropped by the unload.
#[test]
fn a_withdrawal_moves_no_admitted_query_into_loss() {
    for bound in [
        QueueBound::Deadline,
        QueueBound::Unbounded,
        QueueBound::MaxQueries(4),
    ] {
        let (_, sc) = scenarios(30.0);
        let p = by_name("closest").expect("registered");
        let mut sim = Simulation::new(sc.clone(), cfg(60.0, bound), p);
        sim.run_until(30_000.0);
        let mut want: Vec<u32> = sc.fleet.workers.iter().map(|w| w.replicas).collect();
        for (w, info) in sc.fleet.workers.iter().enumerate() {
            if sc.topology.clusters[info.cluster as usize].id != "cloud" {
                want[w] = 0;
            }
        }
        let queued: usize = sim.workers.iter().map(|w| w.queue.len()).sum();
        sim.set_deployment(&want);
        sim.finish();
        let total = sim.metrics().sum(|_, _, _| true);
        assert!(total.conserved(), "{bound:?}: {total:?}");
        assert_eq!(total.offered, sim.stats().queries, "{bound:?}");
        assert_eq!(sim.in_flight(), 0, "{bound:?}");
        assert_eq!(sim.stats().unloaded_rejected, 0, "{bound:?}");
        assert!(
            sim.stats().rebound > 0,
            "{bound:?}: no stream re-bound: {:?}",
            sim.stats()
        );
        assert!(queued > 0 || bound == QueueBound::Deadline, "{bound:?}");
        for (w, n) in sim.loaded_replicas().iter().enumerate() {
            assert_eq!(*n, want[w], "{bound:?}: worker {w}");
        }
        // After the change only the cloud answers.
        let late = sim.metrics().sum(|w, _, _| w as f64 * 5.0 >= 33.0);
        assert!(late.success > 0, "{bound:?}: {late:?}");
    }
}

/// A query that reaches a worker whose every replica is gone is rejected there, not queued
/// for ever: a worker withdrawn at once, with queries still on their way.
#[test]
fn a_query_reaching_an_unloaded_worker_is_rejected() {
    let (_, sc) = scenarios(120.0);
    let a0 = fixtures::worker(&sc, "a0", "small-b1");
    let p = by_name("closest").expect("registered");
    let mut sim = Simulation::new(sc.clone(), cfg(20.0, QueueBound::Unbounded), p);
    sim.run_until(10_000.0);
    let mut want: Vec<u32> = sc.fleet.workers.iter().map(|w| w.replicas).collect();
    want[a0] = 0;
    sim.set_deployment(&want);
    // Unload it for good now, past the grace a real change would give.
    sim.workers[a0].keep = 0;
    sim.workers[a0].retire_idle_surplus();
    sim.finish();
    let total = sim.metrics().sum(|_, _, _| true);
    assert!(total.conserved());
    assert_eq!(sim.in_flight(), 0);
    assert_eq!(sim.loaded_replicas()[a0], 0);
}
