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

/// `restart@r` fires once ⌈r · 10⌉ tasks of a job are done, not before, and acts on the tasks
/// unfinished then. At 2 qps a0 answers each task (204 ms) before the next is emitted, so
/// whatever r (0.7: ⌈7⌉, not the ⌈7.000000000000001⌉ of binary arithmetic) no task is
/// unfinished when a trigger fires: nothing is restarted, every answer is late.
#[test]
fn a_trigger_with_nothing_unfinished_restarts_nothing() {
    for r in [0.5, 0.7, 1.0] {
        for m in [
            Mitigation::Restart { ratio: r },
            Mitigation::Tdp { ratio: r },
        ] {
            let sim = one_stream(m, QueueBound::Unbounded, 20.0, 2.0);
            let t = sim.metrics().sum(|_, _, _| true);
            assert_eq!((t.offered, t.failure), (40, 40), "{m:?}: {t:?}");
            let c = sim.metrics().mitigation;
            assert_eq!(c.jobs_triggered, 4, "{m:?}: {c:?}");
            assert_eq!(
                (c.restarted, c.degraded, c.wasted),
                (0, 0, 0),
                "{m:?}: {c:?}"
            );
        }
    }
}

/// One 5 s stream at 2 qps from a0, a0 really 600 ms a query, deadline `max_delay_ms`: a queue
/// builds. Task k is emitted at 500k ms and reaches a0 2 ms later; a0 serves them in turn, 600
/// ms each: task 0 from 2 to 602 ms, task k until 602 + 600k while the queue lasts. A task is
/// done when its batch ends (its answer 2 ms later), so a trigger at ⌈0.5 · 10⌉ = 5 done tasks
/// fires at 3 002 ms, the end of task 4's batch, before a0 takes the next: task 5 waits in the
/// queue, task 6 (emitted at 3 000) is on its way, task 7 is not emitted yet.
fn queued_job(m: Mitigation, max_delay_ms: f64) -> Simulation {
    let sc = Arc::new(fixtures::scenario(
        super::mitigation_tests::TWO_LEVELS,
        &fixtures::workload(0.0, "periodic", max_delay_ms, 0.0),
    ));
    let cfg = SimConfig {
        duration_s: 5.0,
        queue_bound: QueueBound::Unbounded,
        mitigation: m,
        seed: 4,
        ..SimConfig::default()
    };
    let mut sim = Simulation::new(sc, cfg, by_name("closest").unwrap());
    slow_a0(&mut sim, 60.0);
    sim.open_stream(0, 0, &stream_params(0, 2.0, max_delay_ms, 5.0));
    sim.finish();
    assert_eq!(sim.in_flight(), 0);
    sim
}

/// `restart@0.5` on [`queued_job`]: task 5 is past its deadline (2 650 ms), so no binding can
/// answer it in time and its restart finds no target; it runs on a0. Task 6's copy leaves the
/// scheduler at 3 002 ms for co (the only other binding): 1 ms there, 10 ms of processing, 1 +
/// 2 ms back, answered in 16 ms — in time — and the original is cancelled from a0's queue.
/// Tasks 7…9 run their course on a0. Every other answer is late (deadline 150 ms).
#[test]
fn restart_copies_the_tasks_unfinished_at_the_trigger() {
    let sim = queued_job(Mitigation::Restart { ratio: 0.5 }, 150.0);
    let m = sim.metrics();
    let t = m.sum(|_, _, _| true);
    assert_eq!((t.offered, t.success, t.failure), (10, 1, 9), "{t:?}");
    let c = m.mitigation;
    assert_eq!(
        (c.jobs_triggered, c.restarted, c.restart_won),
        (1, 1, 1),
        "{c:?}"
    );
    assert_eq!(c.restart_no_target, 1, "{c:?}");
    assert_eq!((c.cancelled, c.wasted, c.reissued), (1, 0, 0), "{c:?}");
    // The histogram's quantiles are within 1.6 %.
    assert!((m.latency_quantile_ms(0.0) / 16.0 - 1.0).abs() < 0.02);
}

/// `tdp@0.5` on [`queued_job`]: task 5 (queued) and task 6 (on its way) are degraded — task 5
/// leaves the queue, task 6 is dropped when it arrives — and tasks 7…9 run their course. Degraded tasks
/// are offered, not rejected: offered = success + failure + rejected + degraded.
#[test]
fn tdp_degrades_the_tasks_unfinished_at_the_trigger() {
    let sim = queued_job(Mitigation::Tdp { ratio: 0.5 }, 150.0);
    let m = sim.metrics();
    let t = m.sum(|_, _, _| true);
    assert_eq!(
        (t.offered, t.success, t.failure, t.rejected, t.degraded),
        (10, 0, 8, 0, 2),
        "{t:?}"
    );
    let c = m.mitigation;
    assert_eq!((c.jobs_triggered, c.degraded), (1, 2), "{c:?}");
    assert_eq!((c.cancelled, c.wasted, c.discarded), (0, 0, 0), "{c:?}");
    let j = sim.jobs();
    assert_eq!((j.jobs, j.on_time, j.answered), (1, 0, 1), "{j:?}");
}

/// With a 2 s deadline every answer of [`queued_job`] is in time; under `tdp@0.5` tasks 5 and 6
/// are degraded and the job is still complete on time — degraded tasks do not count against
/// it. Its tail is its slowest answer, task 4's 1 004 ms (a0 is idle from 3 002 ms, so tasks
/// 7…9 take 604, 704 and 804 ms).
#[test]
fn a_job_with_degraded_tasks_is_on_time() {
    let sim = queued_job(Mitigation::Tdp { ratio: 0.5 }, 2000.0);
    let t = sim.metrics().sum(|_, _, _| true);
    assert_eq!((t.success, t.degraded), (8, 2), "{t:?}");
    let j = sim.jobs();
    assert_eq!((j.jobs, j.on_time), (1, 1), "{j:?}");
    assert!((j.mean_tail_ms() - 1004.0).abs() < 0.01, "{j:?}");
}

/// n_j counts what a stream emits in the window: a stream opened at 2.5 s for 10 s at 2 qps
/// has jobs of 5, 10 and 5 tasks (2 500 … 4 500, 5 000 … 9 500, 10 000 … 12 000 ms). With a0 at
/// 600 ms a query (task i at a0 at 2 502 + 500i) under `tdp@0.5` they trigger at ⌈2.5⌉ = 3, 5
/// and 3 done tasks: at 4 302 ms (task 3 queued: 1 degraded; a0 then idle until task 4 comes),
/// 8 102 ms (tasks 10 and 11 queued: 2) and 12 102 ms (tasks 18 and 19 queued: 2). Every answer
/// is late.
#[test]
fn a_job_knows_its_tasks_from_the_stream() {
    let sc = Arc::new(fixtures::scenario(
        super::mitigation_tests::TWO_LEVELS,
        &fixtures::workload(0.0, "periodic", 150.0, 0.0),
    ));
    let cfg = SimConfig {
        duration_s: 20.0,
        queue_bound: QueueBound::Unbounded,
        mitigation: Mitigation::Tdp { ratio: 0.5 },
        seed: 4,
        ..SimConfig::default()
    };
    let mut sim = Simulation::new(sc, cfg, by_name("closest").unwrap());
    slow_a0(&mut sim, 60.0);
    sim.run_until(2_500.0);
    sim.open_stream(0, 0, &stream_params(0, 2.0, 150.0, 10.0));
    sim.finish();
    let t = sim.metrics().sum(|_, _, _| true);
    let c = sim.metrics().mitigation;
    assert_eq!(t.offered, 20, "{t:?}");
    assert_eq!((c.jobs_triggered, c.degraded), (3, 5), "{c:?}");
    assert_eq!((t.success, t.failure, t.degraded), (0, 15, 5), "{t:?}");
    for (w, d) in [(0, 1), (1, 2), (2, 2)] {
        assert_eq!(
            sim.metrics().sum(|x, _, _| x == w).degraded,
            d,
            "window {w}"
        );
    }
    assert_eq!(sim.jobs().jobs, 3);
    assert_eq!(sim.in_flight(), 0);
}

/// A job keeps the mitigation it started with: switching to `tdp@0.5` at 7.5 s, mid-window,
/// leaves window 1's job alone; the jobs of windows 2 and 3 trigger (with nothing unfinished at
/// 2 qps, nothing is degraded).
#[test]
fn a_job_keeps_its_mitigation() {
    let mut sim = one_stream_opened(Mitigation::None, QueueBound::Unbounded, 20.0, 2.0);
    sim.run_until(7_500.0);
    sim.set_mitigation(0, Mitigation::Tdp { ratio: 0.5 });
    sim.finish();
    let m = sim.metrics();
    assert_eq!(m.sum(|_, _, _| true).failure, 40);
    assert_eq!(m.mitigation.jobs_triggered, 2);
    assert_eq!(m.mitigation.degraded, 0);
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

/// What EdgeTuner's reward reads. Without mitigation each window's one job is complete (every
/// task answered, late), its JTL 204 ms, and 40 tasks went through a batch. Under a queue bound
/// of 0 at 10 qps (a0 busy 200 ms a query) most tasks are dropped: no job completes.
#[test]
fn window_jobs_count_complete_jobs_and_their_tails() {
    let mut sim = one_stream(Mitigation::None, QueueBound::Unbounded, 20.0, 2.0);
    for w in 0..4 {
        let j = sim.window_jobs(w);
        assert_eq!(
            (j.jobs, j.complete, j.answered),
            (1, 1, 1),
            "window {w}: {j:?}"
        );
        assert!((j.tail_sum_ms - 204.0).abs() < 0.01, "{j:?}");
    }
    assert_eq!(sim.window_jobs(4), WindowJobs::default());
    assert_eq!(
        sim.task_flow(),
        TaskFlow {
            batched: 40,
            processed: 40
        }
    );
    let mut dropped = one_stream(Mitigation::None, QueueBound::MaxQueries(0), 20.0, 10.0);
    for w in 0..4 {
        let j = dropped.window_jobs(w);
        assert_eq!((j.jobs, j.complete), (1, 0), "window {w}: {j:?}");
    }
}

/// At 10 qps on a0 (200 ms a query, unbounded queue) a queue builds: at 1 s the query emitted
/// at 400 ms is in its batch (802–1002 ms: age 600 ms) and the one emitted at 500 ms is the
/// oldest waiting (age 500 ms).
#[test]
fn task_ages_are_the_oldest_running_and_waiting_tasks() {
    let mut sim = one_stream_opened(Mitigation::None, QueueBound::Unbounded, 20.0, 10.0);
    assert_eq!(sim.task_ages(), TaskAges::default());
    sim.run_until(1000.0);
    let a = sim.task_ages();
    assert!((a.running_ms - 600.0).abs() < 1e-6, "{a:?}");
    assert!((a.waiting_ms - 500.0).abs() < 1e-6, "{a:?}");
}
