//! Tail-latency mitigation and capacity scaling in the simulator, on hand-built topologies
//! where the right outcome follows by reasoning.

use super::*;
use continuum_core::feasibility::Demand;
use continuum_core::fixtures;
use continuum_core::observe::DemandBuckets;
use continuum_core::policy::StreamClasses;
use continuum_core::policy::by_name;
use continuum_core::workload::StreamParams;

/// An antenna a0 and, 1 ms above it, a central office co, each with one `small-b1` (batch 1,
/// 10 ms per query by its profile).
pub(super) const TWO_LEVELS: &str = r#"
clusters:
  - {id: co, layer: central-office, capacity: {cpu: 1}, deploy: {fill: [small-b1]}}
  - {id: a0, layer: access, parent: co, link: {mean_ms: 1}, capacity: {cpu: 1}, deploy: {fill: [small-b1]}}
"#;

/// One periodic stream at `rate_qps` from a0's scheduler, deadline 150 ms, access delay 2 ms,
/// for `seconds`; a0's worker really `slow` times slower than its profile.
pub(super) fn one_stream(
    mitigation: Mitigation,
    bound: QueueBound,
    slow: f64,
    rate_qps: f64,
) -> Simulation {
    let mut sim = one_stream_opened(mitigation, bound, slow, rate_qps);
    sim.finish();
    assert_eq!(sim.in_flight(), 0, "records left in flight");
    let t = sim.metrics().sum(|_, _, _| true);
    assert!(t.conserved(), "{t:?}");
    sim
}

/// [`one_stream`]'s run with its stream opened, before any event.
pub(super) fn one_stream_opened(
    mitigation: Mitigation,
    bound: QueueBound,
    slow: f64,
    rate_qps: f64,
) -> Simulation {
    let sc = Arc::new(fixtures::scenario(
        TWO_LEVELS,
        &fixtures::workload(0.0, "periodic", 150.0, 0.0),
    ));
    let seconds = 20.0;
    let cfg = SimConfig {
        duration_s: seconds,
        queue_bound: bound,
        mitigation,
        seed: 4,
        ..SimConfig::default()
    };
    let mut sim = Simulation::new(sc.clone(), cfg, by_name("closest").unwrap());
    slow_a0(&mut sim, slow);
    sim.open_stream(0, 0, &stream_params(0, rate_qps, 150.0, seconds));
    sim
}

/// Makes a0's worker really `slow` times slower than its profile.
pub(super) fn slow_a0(sim: &mut Simulation, slow: f64) {
    let topology = &sim.sc.topology;
    let a0 = topology
        .workers
        .iter()
        .position(|w| topology.clusters[w.cluster].id == "a0")
        .unwrap();
    let mut slowdown = vec![1.0; topology.workers.len()];
    slowdown[a0] = slow;
    sim.slowdown = slowdown.into();
}

/// A 10 KB-per-frame stream of workload app `app` at `rate_qps`, access delay 2 ms.
pub(super) fn stream_params(
    app: u16,
    rate_qps: f64,
    max_delay_ms: f64,
    seconds: f64,
) -> StreamParams {
    StreamParams {
        app,
        demand: Demand {
            task: 0,
            rate_qps,
            frame_kb: 10.0,
            tx_ms: 0.0,
            access_ms: 2.0,
            max_delay_ms,
            min_accuracy: 0.0,
            items: 1,
        },
        duration_ms: seconds * 1000.0,
    }
}

/// a0 really takes 200 ms a query; `closest` binds there (the profile says 10 ms). Without
/// mitigation every answer is late (2 + 200 + 2 ms). With reissue at 0.5 × 150 = 75 ms, the copy
/// goes to co: 1 ms there, 10 ms of processing, 2 + 1 ms back: answered at 75 + 14 = 89 ms.
/// At 2 qps a0 is never queued, so each original is mid-batch when its copy wins: waste.
#[test]
fn a_reissued_query_is_answered_by_the_faster_worker() {
    let none = one_stream(Mitigation::None, QueueBound::Unbounded, 20.0, 2.0);
    let t = none.metrics().sum(|_, _, _| true);
    assert_eq!((t.success, t.failure), (0, t.offered), "{t:?}");
    assert!((none.metrics().latency_quantile_ms(0.5) - 204.0).abs() < 0.5);

    let hedged = one_stream(
        Mitigation::Reissue { ratio: 0.5 },
        QueueBound::Unbounded,
        20.0,
        2.0,
    );
    let m = hedged.metrics();
    let t = m.sum(|_, _, _| true);
    assert_eq!(t.success, t.offered, "{t:?}");
    let c = m.mitigation;
    assert_eq!((c.reissued, c.reissue_won), (t.offered, t.offered), "{c:?}");
    assert_eq!((c.wasted, c.cancelled), (t.offered, 0), "{c:?}");
    for q in [0.01, 0.5, 1.0] {
        assert!((m.latency_quantile_ms(q) - 89.0).abs() < 0.1, "q {q}");
    }
    assert_eq!(hedged.stats().queries, t.offered);
}

/// At 10 qps a0 (200 ms a query) falls behind and its queue grows; each query's copy answers
/// from co at 89 ms while the original still waits, so the original is cancelled from the
/// queue: the tie is broken without work.
#[test]
fn the_loser_of_a_tie_is_cancelled_while_queued() {
    let sim = one_stream(
        Mitigation::Reissue { ratio: 0.5 },
        QueueBound::Unbounded,
        20.0,
        10.0,
    );
    let t = sim.metrics().sum(|_, _, _| true);
    let c = sim.metrics().mitigation;
    assert_eq!(t.success, t.offered, "{t:?}");
    assert_eq!(c.reissue_won, t.offered, "{c:?}");
    // a0 starts a query every 200 ms while they come every 100: about half are processed
    // (each wasted), the rest cancelled in the queue.
    assert_eq!(c.wasted + c.cancelled, t.offered, "{c:?}");
    assert!(c.cancelled * 10 > t.offered * 4, "{c:?}");
    assert!(c.wasted * 10 > t.offered * 4, "{c:?}");
}

/// A scheduler's mitigation switched mid-run (as a tuner would between windows) applies to
/// the queries it emits from then on: late before the switch, hedged and in time after. A
/// stream's next emission may be processed up to one frame period early (it rides on the
/// previous query's arrival), so one query at the boundary may still go out unmitigated.
#[test]
fn a_scheduler_switches_its_mitigation_between_windows() {
    let mut sim = one_stream_opened(Mitigation::None, QueueBound::Unbounded, 20.0, 2.0);
    sim.run_until(10_000.0);
    assert_eq!(sim.mitigation(0, 0), Mitigation::None);
    sim.set_mitigation(0, Mitigation::Reissue { ratio: 0.5 });
    sim.finish();
    let m = sim.metrics();
    let before = m.sum(|w, _, _| w < 2); // windows of 5 s
    let after = m.sum(|w, _, _| w >= 2);
    assert_eq!(
        (before.success, before.failure),
        (0, before.offered),
        "{before:?}"
    );
    assert!(
        after.success + 1 >= after.offered && after.offered > 15,
        "{after:?}"
    );
    assert_eq!(m.mitigation.reissued, after.success);
    assert_eq!(
        m.sum(|w, _, _| w >= 3).success,
        m.sum(|w, _, _| w >= 3).offered
    );
    assert_eq!(sim.in_flight(), 0);
}

/// No other worker can make it: the copy is not sent.
#[test]
fn no_feasible_other_binding_means_no_copy() {
    // With reissue at 0.95 × 150 ms, 7.5 ms remain: co needs 2 + 2 + 10 = 14.
    let sim = one_stream(
        Mitigation::Reissue { ratio: 0.95 },
        QueueBound::Unbounded,
        20.0,
        2.0,
    );
    let c = sim.metrics().mitigation;
    let t = sim.metrics().sum(|_, _, _| true);
    assert_eq!((c.reissued, c.reissue_no_target), (0, t.offered), "{c:?}");
    assert_eq!(t.failure, t.offered);
}

/// a0 really takes 100 ms: answered at 2 + 100 + 2 = 104 ms, inside the 150 ms deadline. Under
/// discard at 0.5 the worker predicts 104 > 75 ms on arrival and drops each query at once:
/// rejected when it reaches the worker (2 ms after emission), long before its deadline.
#[test]
fn a_discarded_query_is_rejected_on_arrival() {
    let kept = one_stream(Mitigation::None, QueueBound::Deadline, 10.0, 2.0);
    let t = kept.metrics().sum(|_, _, _| true);
    assert_eq!(t.success, t.offered, "{t:?}");
    let sim = one_stream(
        Mitigation::Discard { ratio: 0.5 },
        QueueBound::Deadline,
        10.0,
        2.0,
    );
    let t = sim.metrics().sum(|_, _, _| true);
    assert_eq!(t.rejected, t.offered, "{t:?}");
    assert_eq!(sim.metrics().mitigation.discarded, t.offered);
    // Discard at 0.75 (112.5 ms) keeps them all.
    let sim = one_stream(
        Mitigation::Discard { ratio: 0.75 },
        QueueBound::Deadline,
        10.0,
        2.0,
    );
    assert_eq!(sim.metrics().sum(|_, _, _| true).success, t.offered);
}

/// Unbounded queue, a0 at 30 ms a query and 40 qps: it falls behind, and the queue would grow
/// for the whole run. Discard at 0.9 (135 ms) drops, when its batch would start, every query
/// that could no longer answer in time; what is processed answers in time.
#[test]
fn discard_drops_what_has_waited_too_long() {
    let none = one_stream(Mitigation::None, QueueBound::Unbounded, 3.0, 40.0);
    let t = none.metrics().sum(|_, _, _| true);
    assert!(t.failure * 2 > t.offered, "{t:?}");
    let sim = one_stream(
        Mitigation::Discard { ratio: 0.9 },
        QueueBound::Unbounded,
        3.0,
        40.0,
    );
    let t = sim.metrics().sum(|_, _, _| true);
    assert_eq!(t.failure, 0, "{t:?}");
    assert!(t.success * 10 > t.offered * 7, "{t:?}");
    assert_eq!(sim.metrics().mitigation.discarded, t.rejected);
    assert!(sim.metrics().latency_quantile_ms(1.0) <= 135.0 + 0.2);
}

/// Heavy random load on the tiny topology under every mitigation: one outcome per query, no
/// record left, same seed same result, forks finish alike.
#[test]
fn mitigation_keeps_outcomes_conserved_and_runs_reproducible() {
    let sc = Arc::new(fixtures::scenario(
        fixtures::TOPOLOGY,
        &fixtures::workload(150.0, "poisson", 120.0, 0.0),
    ));
    for m in ["reissue@0.7", "discard@0.8", "reissue@0.3"] {
        let cfg = SimConfig {
            duration_s: 60.0,
            seed: 17,
            mitigation: Mitigation::parse(m).unwrap(),
            ..SimConfig::default()
        };
        for policy in ["closest", "random-proportional-load"] {
            let p = by_name(policy).unwrap();
            let mut a = Simulation::new(sc.clone(), cfg, p);
            a.run_until(30_000.0);
            let mut fork = a.clone();
            a.finish();
            fork.finish();
            let mut b = Simulation::new(sc.clone(), cfg, p);
            b.finish();
            let t = a.metrics().sum(|_, _, _| true);
            assert!(t.conserved() && t.offered > 5000, "{m} {policy}: {t:?}");
            assert_eq!(a.in_flight(), 0, "{m} {policy}");
            for other in [&fork, &b] {
                assert_eq!(other.metrics().sum(|_, _, _| true), t, "{m} {policy}");
                assert_eq!(other.metrics().mitigation, a.metrics().mitigation);
            }
            let c = a.metrics().mitigation;
            if m.starts_with("reissue") {
                assert!(c.reissued > 0 && c.discarded == 0, "{m} {policy}: {c:?}");
            } else {
                assert!(c.discarded > 0 && c.reissued == 0, "{m} {policy}: {c:?}");
            }
        }
    }
}

/// Capacity ×0.5 doubles the service time: the M/D/1 queue of `queueing_matches_md1` at half
/// the rate has the same utilisation and twice the mean wait (0.7 / (2 · 0.05 · 0.3) = 23.3 ms).
#[test]
fn capacity_scale_slows_processing() {
    let expected = 0.7 / (2.0 * 0.05 * 0.3);
    let got = super::tests::md1_mean_wait(35.0, CapacityScale::Uniform(0.5));
    assert!(
        (got / expected - 1.0).abs() < 0.05,
        "mean wait {got:.3} ms vs M/D/1 {expected:.3} ms"
    );
}

/// Mitigation is per scheduler *and class* (a tuner's configuration per class): two streams
/// from a0, class `tight` (deadline 150 ms) under reissue@0.5 and class `loose` (600 ms) under
/// none. Every tight query is hedged to co and answered in time (89 ms, as in
/// [`a_reissued_query_is_answered_by_the_faster_worker`]); no loose query is reissued.
#[test]
fn mitigation_follows_the_stream_class() {
    let text = r#"
lambda_per_min: 0
jitter: periodic
access_delay_ms: 2
apps:
  - {name: tight, share: 1, task: detect, rate_qps: 2, frame_kb: 10, uplink_mbps: 80, max_delay_ms: 150, min_accuracy: 0, duration_s: 20}
  - {name: loose, share: 1, task: detect, rate_qps: 2, frame_kb: 10, uplink_mbps: 80, max_delay_ms: 600, min_accuracy: 0, duration_s: 20}
"#;
    let sc = Arc::new(fixtures::scenario(TWO_LEVELS, text));
    let cfg = SimConfig {
        duration_s: 20.0,
        queue_bound: QueueBound::Unbounded,
        seed: 4,
        ..SimConfig::default()
    };
    let mut sim = Simulation::new(sc.clone(), cfg, by_name("closest").unwrap());
    let classes = StreamClasses::from_workload(&sc.workload, &DemandBuckets::default());
    sim.set_classes(Arc::new(classes));
    let closest = by_name("closest").unwrap();
    let hedge = Configuration {
        policy: closest,
        mitigation: Mitigation::Reissue { ratio: 0.5 },
    };
    sim.set_class_configuration(0, 0, &hedge);
    sim.set_class_configuration(0, 1, &Configuration::plain(closest));
    assert_eq!(sim.mitigation(0, 0), hedge.mitigation);
    assert_eq!(sim.mitigation(0, 1), Mitigation::None);
    slow_a0(&mut sim, 20.0);
    for (client, (app, deadline)) in [(0u16, 150.0), (1, 600.0)].into_iter().enumerate() {
        sim.open_stream(0, client as u64, &stream_params(app, 2.0, deadline, 20.0));
    }
    sim.finish();
    let m = sim.metrics();
    let tight = m.sum(|_, _, a| a == 0);
    let loose = m.sum(|_, _, a| a == 1);
    assert!(
        tight.offered >= 38 && loose.offered >= 38,
        "{tight:?} {loose:?}"
    );
    assert_eq!(tight.success, tight.offered, "{tight:?}");
    assert_eq!(m.mitigation.reissued, tight.offered, "{:?}", m.mitigation);
    assert!((m.app_latency_quantile_ms(0, 1.0) - 89.0).abs() < 1.5);
    assert!(m.sum(|_, _, _| true).conserved());
}

/// A restart goes to the binding that would answer first, not to the nearest one: from a0 of
/// the tiny topology the central office (1 ms away, 10 ms a query) is nearest after a0 itself,
/// but both its replicas are busy for another second with a queue behind them; the cloud (20 ms
/// ± 5 away, 40 + 0.5 · 10 ms a batch) answers in ≈ 2 · 30 + 45 ms. A reissue still picks the
/// central office (lowest e2e).
#[test]
fn a_restart_goes_where_it_would_finish_first() {
    let sc = Arc::new(fixtures::scenario(
        fixtures::TOPOLOGY,
        &fixtures::workload(0.0, "periodic", 1000.0, 0.0),
    ));
    let mut sim = Simulation::new(
        sc.clone(),
        SimConfig::default(),
        by_name("closest").unwrap(),
    );
    let w = |c: &str, v: &str| fixtures::worker(&sc, c, v) as u32;
    let (cloud, co, a0) = (
        w("cloud", "big-b4"),
        w("co", "small-b1"),
        w("a0", "small-b1"),
    );
    let busy = &mut sim.workers[co as usize];
    busy.idle.clear();
    for s in 0..2 {
        busy.set_free_at(s, 1000.0);
    }
    for qid in 0..4 {
        busy.queue.push_back(worker::Waiting {
            qid,
            frame_kb: 10.0,
            t_arrive: 0.0,
        });
    }
    let d = stream_params(0, 1.0, 1000.0, 1.0).demand;
    let reach = &sc.topology.schedulers[0].reach;
    continuum_core::feasibility::feasible(&d, reach, &sc.fleet, &sim.view, &mut sim.scratch);
    assert_eq!(sim.scratch.len(), 3, "{:?}", sim.scratch);
    let restart = sim.fastest_target(a0, 10.0, 0.0).expect("a target");
    assert_eq!(restart.worker, cloud);
    let reissue = continuum_core::mitigation::reissue_target(&sim.scratch, a0).expect("a target");
    assert_eq!(reissue.worker, co);
    // Once the central office is idle again it is the fastest too.
    let idle = &mut sim.workers[co as usize];
    idle.queue.clear();
    idle.idle = vec![1, 0];
    assert_eq!(sim.fastest_target(a0, 10.0, 0.0).unwrap().worker, co);
}
