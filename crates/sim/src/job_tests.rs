//! Jobs and the per-job mitigations (`restart@r`, `tdp@r`, docs/model.md §12) on hand-built
//! topologies where the right outcome follows by reasoning.
//!
//! The hand cases use [`super::mitigation_tests`]' two-level topology: one stream at 2 qps from
//! a0, deadline 150 ms, access delay 2 ms, a0's worker really 200 ms a query (20 × its
//! profile), co 1 ms away at 10 ms a query. Every query a0 answers takes 2 + 200 + 2 = 204 ms
//! (late; a0 is never queued, 200 ms < 500 ms between frames). A stream opened at 0 for 20 s
//! has 4 jobs (windows of 5 s) of n = 10 tasks, emitted at 0, 500, …, 4 500 ms of the window;
//! task k of a window is done at 500k + 204 ms.

use super::mitigation_tests::{one_stream, one_stream_opened, slow_a0, stream_params};
use super::*;
use continuum_core::fixtures;
use continuum_core::policy::by_name;

/// With no mitigation, 4 jobs of 10 late tasks: none on time, each one's tail 204 ms.
#[test]
fn a_stream_window_is_a_job() {
    let sim = one_stream(Mitigation::None, QueueBound::Unbounded, 20.0, 2.0);
    let j = sim.jobs();
    assert_eq!((j.jobs, j.on_time, j.answered), (4, 0, 4), "{j:?}");
    assert!((j.mean_tail_ms() - 204.0).abs() < 0.01, "{j:?}");
    assert!((j.tail_quantile_ms(0.99) / 204.0 - 1.0).abs() < 0.02);
    // At 10 ms a query (slow 1) every task answers in 2 + 10 + 2 ms: every job on time.
    let fast = one_stream(Mitigation::None, QueueBound::Unbounded, 1.0, 2.0);
    let j = fast.jobs();
    assert_eq!((j.jobs, j.on_time), (4, 4), "{j:?}");
    assert!((j.mean_tail_ms() - 14.0).abs() < 0.01, "{j:?}");
}

/// `restart@r` fires once ⌈r · 10⌉ tasks of a job are done, not before: at r = 0.5 the 5th
/// task's answer (2 204 ms into the window) triggers it, and tasks 5…9 each get a copy on co,
/// leaving the scheduler when the task reaches it (emission + 2 ms): 1 ms there, 10 ms of
/// processing, 2 + 1 ms back, answered in 16 ms — in time, while a0 processes the original
/// (wasted). At r = 0.7 (⌈7⌉, not the ⌈7.000000000000001⌉ of binary arithmetic) tasks 7…9.
#[test]
fn restart_fires_after_its_share_of_tasks_is_done() {
    for (r, first) in [(0.5, 5u64), (0.7, 7), (1.0, 10)] {
        let sim = one_stream(
            Mitigation::Restart { ratio: r },
            QueueBound::Unbounded,
            20.0,
            2.0,
        );
        let m = sim.metrics();
        let t = m.sum(|_, _, _| true);
        let later = 4 * (10 - first);
        assert_eq!(t.offered, 40);
        assert_eq!((t.success, t.failure), (later, 40 - later), "r {r}: {t:?}");
        let c = m.mitigation;
        assert_eq!(c.jobs_triggered, 4, "r {r}: {c:?}");
        assert_eq!((c.restarted, c.restart_won), (later, later), "r {r}: {c:?}");
        assert_eq!((c.wasted, c.cancelled, c.reissued), (later, 0, 0), "r {r}");
        if later > 0 {
            assert!((m.latency_quantile_ms(0.0) - 16.0).abs() < 0.1, "r {r}");
        }
        // Every job still has a late task: none on time, its tail the late 204 ms.
        let j = sim.jobs();
        assert_eq!((j.jobs, j.on_time), (4, 0), "r {r}: {j:?}");
        assert!((j.mean_tail_ms() - 204.0).abs() < 0.01, "r {r}: {j:?}");
    }
}

/// `tdp@0.5`: the 5th done task triggers it; task 5, already on its way, is degraded (its
/// record is dropped when it reaches a0, neither cancelled nor wasted) and tasks 6…9 are not
/// sent. Degraded tasks are offered, not rejected: offered = success + failure + rejected +
/// degraded.
#[test]
fn tdp_degrades_the_rest_of_a_triggered_job() {
    let sim = one_stream(
        Mitigation::Tdp { ratio: 0.5 },
        QueueBound::Unbounded,
        20.0,
        2.0,
    );
    let m = sim.metrics();
    let t = m.sum(|_, _, _| true);
    assert_eq!(
        (t.offered, t.success, t.failure, t.rejected, t.degraded),
        (40, 0, 20, 0, 20),
        "{t:?}"
    );
    assert_eq!(t.offered, t.success + t.failure + t.rejected + t.degraded);
    let c = m.mitigation;
    assert_eq!((c.jobs_triggered, c.degraded), (4, 20), "{c:?}");
    assert_eq!((c.cancelled, c.wasted, c.discarded), (0, 0, 0), "{c:?}");
    assert_eq!(sim.stats().queries, 40);
    // Degraded tasks do not make a job late; the answered ones (204 ms) do.
    let j = sim.jobs();
    assert_eq!((j.jobs, j.on_time, j.answered), (4, 0, 4), "{j:?}");
    // Each window counts its own: 5 late, 5 degraded.
    for w in 0..4 {
        let c = m.sum(|x, _, _| x == w);
        assert_eq!((c.failure, c.degraded), (5, 5), "window {w}: {c:?}");
    }
}

/// At 10 ms a query every task answers in time (14 ms): under `tdp@0.5` half of each job is
/// degraded and every job is complete on time — degraded tasks do not count against it.
#[test]
fn a_job_with_degraded_tasks_is_on_time() {
    let sim = one_stream(
        Mitigation::Tdp { ratio: 0.5 },
        QueueBound::Unbounded,
        1.0,
        2.0,
    );
    let t = sim.metrics().sum(|_, _, _| true);
    assert_eq!((t.success, t.degraded), (20, 20), "{t:?}");
    let j = sim.jobs();
    assert_eq!((j.jobs, j.on_time), (4, 4), "{j:?}");
    assert!((j.mean_tail_ms() - 14.0).abs() < 0.01);
}

/// n_j counts what a stream emits in the window: a stream opened at 2.5 s for 10 s at 2 qps
/// has jobs of 5, 10 and 5 tasks (2 500 … 4 500, 5 000 … 9 500, 10 000 … 12 000 ms). Under
/// `restart@0.5` they trigger at ⌈2.5⌉ = 3, 5 and 3 done tasks, so 2 + 5 + 2 tasks are
/// restarted.
#[test]
fn a_job_knows_its_tasks_from_the_stream() {
    let sc = Arc::new(fixtures::scenario(
        super::mitigation_tests::TWO_LEVELS,
        &fixtures::workload(0.0, "periodic", 150.0, 0.0),
    ));
    let cfg = SimConfig {
        duration_s: 20.0,
        queue_bound: QueueBound::Unbounded,
        mitigation: Mitigation::Restart { ratio: 0.5 },
        seed: 4,
        ..SimConfig::default()
    };
    let mut sim = Simulation::new(sc, cfg, by_name("closest").unwrap());
    slow_a0(&mut sim, 20.0);
    sim.run_until(2_500.0);
    sim.open_stream(0, 0, &stream_params(0, 2.0, 150.0, 10.0));
    sim.finish();
    let t = sim.metrics().sum(|_, _, _| true);
    let c = sim.metrics().mitigation;
    assert_eq!(t.offered, 20, "{t:?}");
    assert_eq!((c.jobs_triggered, c.restarted), (3, 9), "{c:?}");
    assert_eq!((t.success, t.failure), (9, 11), "{t:?}");
    assert_eq!(sim.jobs().jobs, 3);
    assert_eq!(sim.in_flight(), 0);
}

/// A job keeps the mitigation it started with: switching to `tdp@0.5` at 7.5 s, mid-window,
/// leaves window 1's job alone; windows 2 and 3 are degraded by half.
#[test]
fn a_job_keeps_its_mitigation() {
    let mut sim = one_stream_opened(Mitigation::None, QueueBound::Unbounded, 20.0, 2.0);
    sim.run_until(7_500.0);
    sim.set_mitigation(0, Mitigation::Tdp { ratio: 0.5 });
    sim.finish();
    let m = sim.metrics();
    let early = m.sum(|w, _, _| w < 2);
    let late = m.sum(|w, _, _| w >= 2);
    assert_eq!((early.failure, early.degraded), (20, 0), "{early:?}");
    assert_eq!((late.failure, late.degraded), (10, 10), "{late:?}");
    assert_eq!(m.mitigation.jobs_triggered, 2);
}

/// A queue that grows through each window (a0 at 30 ms a query, 40 qps): under `tdp@0.5` the
/// queued half of each job leaves the queue once half is done, so the next job starts on an
/// empty queue, and the jobs' tail shrinks. Outcomes stay conserved and nothing is rejected
/// (the queue is unbounded).
#[test]
fn tdp_cuts_the_job_tail_of_a_growing_queue() {
    let none = one_stream(Mitigation::None, QueueBound::Unbounded, 3.0, 40.0);
    let tdp = one_stream(
        Mitigation::Tdp { ratio: 0.5 },
        QueueBound::Unbounded,
        3.0,
        40.0,
    );
    let t = tdp.metrics().sum(|_, _, _| true);
    assert!(t.conserved() && t.rejected == 0 && t.degraded > 0, "{t:?}");
    assert_eq!(t.degraded, tdp.metrics().mitigation.degraded);
    let (a, b) = (none.jobs().mean_tail_ms(), tdp.jobs().mean_tail_ms());
    assert!(b * 2.0 < a, "job tail: none {a:.1} ms, tdp {b:.1} ms");
}

/// Heavy random load on the tiny topology under the per-job kinds: one outcome per query, no
/// record left, same seed same result, forks finish alike, and as many jobs as without
/// mitigation (jobs are the streams' windows, whatever happens to their tasks).
#[test]
fn per_job_kinds_keep_outcomes_conserved_and_runs_reproducible() {
    let sc = Arc::new(fixtures::scenario(
        fixtures::TOPOLOGY,
        &fixtures::workload(150.0, "poisson", 120.0, 0.0),
    ));
    let cfg = |m: &str| SimConfig {
        duration_s: 60.0,
        seed: 17,
        mitigation: Mitigation::parse(m).unwrap(),
        ..SimConfig::default()
    };
    let p = by_name("closest").unwrap();
    let mut plain = Simulation::new(sc.clone(), cfg("none"), p);
    plain.finish();
    let jobs = plain.jobs().jobs;
    assert!(
        jobs > 100 && plain.jobs().on_time < jobs,
        "{:?}",
        plain.jobs()
    );
    for m in ["restart@0.7", "tdp@0.8", "restart@0.9", "tdp@0.7"] {
        let mut a = Simulation::new(sc.clone(), cfg(m), p);
        a.run_until(30_000.0);
        let mut fork = a.clone();
        a.finish();
        fork.finish();
        let mut b = Simulation::new(sc.clone(), cfg(m), p);
        b.finish();
        let t = a.metrics().sum(|_, _, _| true);
        assert!(t.conserved() && t.offered > 5000, "{m}: {t:?}");
        assert_eq!(a.in_flight(), 0, "{m}");
        for other in [&fork, &b] {
            assert_eq!(other.metrics().sum(|_, _, _| true), t, "{m}");
            assert_eq!(other.metrics().mitigation, a.metrics().mitigation, "{m}");
            assert_eq!(other.jobs(), a.jobs(), "{m}");
        }
        assert_eq!(a.jobs().jobs, jobs, "{m}");
        let c = a.metrics().mitigation;
        assert!(c.jobs_triggered > 0, "{m}: {c:?}");
        if m.starts_with("restart") {
            assert!(
                c.restarted > 0 && t.degraded == 0 && c.reissued == 0,
                "{m}: {c:?}"
            );
        } else {
            assert!(t.degraded > 0 && c.restarted == 0, "{m}: {c:?} {t:?}");
            assert_eq!(t.degraded, c.degraded, "{m}");
        }
    }
}
