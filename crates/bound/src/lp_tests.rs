//! Tests of the slice LP and its column generation.

use super::*;

/// A stream of `qps` over whole slices [from, to) of 1 s, served by `workers`.
fn stream(from: u32, to: u32, qps: u32, workers: &[(u32, f64)]) -> BoundStream {
    BoundStream {
        queries: u64::from(qps * (to - from)),
        per_slice: (from..to).map(|k| (k, qps)).collect(),
        workers: workers.to_vec(),
        deadline_ms: 0.0,
    }
}

fn served(streams: &[BoundStream], caps: &[f64]) -> f64 {
    solve(streams, caps, 1000.0).unwrap().served
}

#[test]
fn two_workers_by_hand() {
    // Two workers of one replica; a query takes 10 ms on either, so each serves 100 qps
    // (1000 ms of processing per 1 s slice). Over 10 s: stream A (150 qps) can use both,
    // stream B (80 qps) only worker 1. Best: B all on worker 1 (80 qps), A 20 qps on
    // worker 1 and 100 qps on worker 0: 200 of 230 qps, 2000 of 2300 queries.
    let a = stream(0, 10, 150, &[(0, 10.0), (1, 10.0)]);
    let b = stream(0, 10, 80, &[(1, 10.0)]);
    let got = served(&[a, b], &[1000.0, 1000.0]);
    assert!((got - 2000.0).abs() < 1e-3, "{got}");
}

#[test]
fn capacity_holds_in_every_slice() {
    // One worker, 100 qps. C (200 qps) in slices 0–4 then D (200 qps) in 5–9: half of
    // each, 1000 of 2000. E (50 qps, slices 0–9) beside C: 100 per slice while C runs,
    // then E's 50: 500 + 250 = 750.
    let c = stream(0, 5, 200, &[(0, 10.0)]);
    let d = stream(5, 10, 200, &[(0, 10.0)]);
    let e = stream(0, 10, 50, &[(0, 10.0)]);
    assert!((served(&[c.clone(), d], &[1000.0]) - 1000.0).abs() < 1e-3);
    assert!((served(&[c, e], &[1000.0]) - 750.0).abs() < 1e-3);
}

#[test]
fn streams_may_move_between_slices() {
    // Workers 0 and 1 of 100 qps. A (100 qps, slices 0–9) can use both; B (100 qps,
    // slices 0–4) only worker 0; C (100 qps, slices 5–9) only worker 1. Slice by slice A
    // takes the worker the other stream leaves free: all 2000 queries. A binding could not
    // move A at 5 s; the best fixed split serves 1500 (A on 0 from the start, B refused).
    // The bound relaxes that (docs/model.md §16).
    let a = stream(0, 10, 100, &[(0, 10.0), (1, 10.0)]);
    let b = stream(0, 5, 100, &[(0, 10.0)]);
    let c = stream(5, 10, 100, &[(1, 10.0)]);
    assert!((served(&[a, b, c], &[1000.0, 1000.0]) - 2000.0).abs() < 1e-3);
}

#[test]
fn processing_time_per_query_differs_by_worker() {
    // One stream of 100 qps, 1 s: a slow worker (20 ms a query: 50 qps) and a fast one
    // (5 ms: 200 qps) of one replica each; the fast one alone serves it all. With the fast
    // one at half a replica's time (500 ms per slice: 100 qps) still all; at 250 ms, 50 on
    // it and 50 on the slow one.
    let s = stream(0, 1, 100, &[(0, 20.0), (1, 5.0)]);
    assert!((served(std::slice::from_ref(&s), &[1000.0, 1000.0]) - 100.0).abs() < 1e-3);
    assert!((served(std::slice::from_ref(&s), &[1000.0, 500.0]) - 100.0).abs() < 1e-3);
    assert!((served(std::slice::from_ref(&s), &[0.0, 250.0]) - 50.0).abs() < 1e-3);
    assert!((served(&[s], &[1000.0, 250.0]) - 100.0).abs() < 1e-3);
}

/// `stream` with a deadline.
fn due(mut s: BoundStream, deadline_ms: f64) -> BoundStream {
    s.deadline_ms = deadline_ms;
    s
}

#[test]
fn a_burst_carries_into_the_next_slice_up_to_its_deadline() {
    // One worker of 100 qps (10 ms a query); 150 queries in slice 0, none in slice 1.
    // Slice by slice, 100. A queue finishes the other 50 in slice 1, but only those whose
    // deadline reaches it: with 200 ms, at most 200 ms of slice 1 (20 queries) → 120; with
    // 1 s, all 150; with 0, none carried.
    let burst = stream(0, 1, 150, &[(0, 10.0)]);
    let quiet = stream(1, 2, 10, &[(0, 10.0)]);
    for (deadline, want) in [(0.0, 110.0), (200.0, 130.0), (1000.0, 160.0)] {
        let s = [due(burst.clone(), deadline), due(quiet.clone(), deadline)];
        let sol = solve(&s, &[1000.0], 1000.0).unwrap();
        assert!((sol.served - want).abs() < 1e-6, "{deadline}: {sol:?}");
        assert!(
            (sol.carried - (want - 110.0)).abs() < 1e-6,
            "{deadline}: {sol:?}"
        );
    }
}

#[test]
fn steady_overload_carries_only_past_the_run() {
    // 200 qps on one worker of 100 qps for 10 s, deadline 500 ms: each slice serves its
    // 100; nothing can move between equally loaded slices, and the last slice's work can
    // run 500 ms past the run: 1000 + 50.
    let s = due(stream(0, 10, 200, &[(0, 10.0)]), 500.0);
    let sol = solve(&[s], &[1000.0], 1000.0).unwrap();
    assert!((sol.served - 1050.0).abs() < 1e-6, "{sol:?}");
    assert!((sol.carried - 50.0).abs() < 1e-6, "{sol:?}");
}

#[test]
fn a_deadline_longer_than_a_slice_reaches_several() {
    // Slices of 100 ms (10 queries each on the worker); 30 queries in slice 0, deadline
    // 250 ms: slices 1 and 2 whole and half of slice 3 take 25 more, capped by the 30
    // offered: all 30.  With 150 ms: slice 1 and half of 2: 10 + 15 = 25.
    let burst = stream(0, 1, 30, &[(0, 10.0)]);
    for (deadline, want) in [(250.0, 30.0), (150.0, 25.0)] {
        let sol = solve(&[due(burst.clone(), deadline)], &[100.0], 100.0).unwrap();
        assert!((sol.served - want).abs() < 1e-6, "{deadline}: {sol:?}");
    }
}

#[test]
fn unservable_streams_and_an_empty_run() {
    let none = stream(0, 1, 10, &[]);
    assert_eq!(served(&[none], &[1000.0]), 0.0);
    assert_eq!(served(&[], &[]), 0.0);
}

#[test]
fn column_generation_finds_the_full_lps_optimum() {
    // Random slices of 40 streams on 6 workers (deterministic draws): the bound equals the
    // optimum of the LP with every column, and is never below it.
    use rand::{Rng, SeedableRng};
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
    for case in 0..20 {
        let streams: Vec<BoundStream> = (0..40)
            .map(|_| {
                let mut ws: Vec<(u32, f64)> = Vec::new();
                for w in 0..6u32 {
                    if rng.random::<f64>() < 0.5 {
                        ws.push((w, rng.random_range(2.0..20.0)));
                    }
                }
                if ws.is_empty() {
                    ws.push((rng.random_range(0..6), 5.0));
                }
                stream(0, 1, rng.random_range(5..60), &ws)
            })
            .collect();
        let caps: Vec<f64> = (0..6).map(|_| rng.random_range(100.0..1500.0)).collect();
        let active: Vec<(u32, u32)> = streams
            .iter()
            .enumerate()
            .map(|(i, s)| (i as u32, s.per_slice[0].1))
            .collect();
        let all: Vec<Vec<u16>> = streams
            .iter()
            .map(|s| (0..s.workers.len() as u16).collect())
            .collect();
        let dense: Vec<usize> = (0..6).collect();
        let workers: Vec<u32> = (0..6).collect();
        let full =
            crate::solver::maximise(&master(&streams, &active, &all, &dense, &workers, &caps))
                .unwrap()
                .value;
        let got = served(&streams, &caps);
        assert!(got >= full - 1e-6 * full, "case {case}: {got} < {full}");
        assert!(
            got <= full * (1.0 + 2.0 * GAP),
            "case {case}: {got} > {full}"
        );
    }
}
