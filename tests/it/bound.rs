//! The offline upper bound from the command line (`compare --bound`, docs/model.md §16): every
//! row's share of it; no policy above it by more than its stated tolerance on a matrix of runs,
//! and the best one close to it where capacity binds (so the bound is neither too low nor
//! loose); the same bound whatever the thread count; bad options refused.

use crate::cli_support::{fails, json};
use serde_json::Value;

const TINY: [&str; 5] = [
    "tests/fixtures/tiny-topology.yaml",
    "--profiles",
    "tests/fixtures/tiny-profiles.yaml",
    "--workload",
    "tests/fixtures/tiny-workload.yaml",
];

/// Every registered policy (the rows of a plain `compare`).
const EVERY_POLICY: &str = "closest,load-balancing,farthest,cheaper,random-proportional-latency,\
random-proportional-load,least-impedance,random,tetris,least-allocated,most-allocated,\
worker-headroom,headroom,headroom-packing,two-choices,least-predicted,balanced-allocation";

/// How far a run's success ratio may exceed its bound: none. The bound is a dual-feasible value
/// of the run's LP, carried work included (docs/model.md §16): valid at whatever prices the
/// solver stops, so its accuracy moves how tight the bound is, never whether it holds. What is
/// left is floating-point rounding in the sums (fewer than 10⁷ terms of relative error 2⁻⁵³
/// each: below 10⁻⁹ of the offered queries).
const TOLERANCE: f64 = 1e-9;

fn run(extra: &[&str]) -> Value {
    let mut args = vec!["compare"];
    args.extend(TINY);
    args.extend(extra);
    json(&args)
}

fn bound(v: &Value) -> f64 {
    v["bound"]["success_ratio"]
        .as_f64()
        .unwrap_or_else(|| panic!("a bound in {v}"))
}

#[test]
fn every_row_gets_its_share_of_the_bound() {
    let v = run(&["--lambda", "60", "--duration", "60", "--bound"]);
    let b = bound(&v);
    // Two antennas offer about 600 qps where 300 fit within the deadline: the bound binds.
    assert!(b > 0.3 && b < 0.8, "bound {b}");
    assert_eq!(v["bound"]["offered"], v["results"][0]["offered"]);
    for r in v["results"].as_array().unwrap() {
        let s = r["success_ratio"].as_f64().unwrap();
        let share = r["share_of_bound"].as_f64().unwrap();
        assert!((share - s / b).abs() < 1e-12, "{r}");
    }
    // Without --bound there is neither.
    let v = run(&["--lambda", "60", "--duration", "20"]);
    assert!(v.get("bound").is_none());
    assert!(v["results"][0].get("share_of_bound").is_none());
}

#[test]
fn no_policy_exceeds_the_bound_and_the_best_comes_close_where_it_binds() {
    let mut worst: f64 = -1.0;
    for lambda in ["30", "60", "120", "240"] {
        for seed in ["1", "2", "3"] {
            let v = run(&[
                "--lambda",
                lambda,
                "--seed",
                seed,
                "--duration",
                "60",
                "--bound",
                "--policies",
                EVERY_POLICY,
                "--configs",
                "least-impedance+reissue@0.8,closest+discard@0.8,headroom+restart@0.8,\
                 least-allocated+tdp@0.8,greedy-pull,random-pull,prior-pull",
            ]);
            let b = bound(&v);
            let rows = v["results"].as_array().unwrap();
            assert_eq!(rows.len(), 17 + 7);
            let best = rows
                .iter()
                .map(|r| r["success_ratio"].as_f64().unwrap())
                .fold(0.0, f64::max);
            for r in rows {
                let s = r["success_ratio"].as_f64().unwrap();
                assert!(
                    s <= b + TOLERANCE,
                    "λ {lambda} seed {seed}: {} {s} above the bound {b}",
                    r["policy"]
                );
                worst = worst.max(s - b);
            }
            // Where capacity binds the bound is tight: the best rule serves most of it.
            if b < 0.9 {
                assert!(
                    best >= 0.9 * b,
                    "λ {lambda} seed {seed}: best {best}, bound {b}"
                );
            }
        }
    }
    println!("largest excess over the bound: {worst:+.4}");
}

/// The learned rows too: the shipped meta-policy, its tables alone and a pull row on full-edge
/// at λ 400 (the bound about 82 %: capacity binds), each at or below the run's bound.
#[test]
fn learned_rows_stay_below_the_bound_in_overload() {
    let v = json(&[
        "compare",
        "topologies/full-edge.yaml",
        "--lambda",
        "400",
        "--duration",
        "30",
        "--seed",
        "5",
        "--bound",
        "--policies",
        "greedy-pull",
        "--agent",
        "models/full-edge-heuristics.dqn",
        "--agent-tables",
        "models/full-edge-heuristics.dqn",
    ]);
    let b = bound(&v);
    assert!(b < 0.95, "overloaded: the bound binds ({b})");
    let rows = v["results"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    for r in rows {
        let s = r["success_ratio"].as_f64().unwrap();
        assert!(
            s <= b + TOLERANCE,
            "{} {s} above the bound {b}",
            r["policy"]
        );
    }
}

#[test]
fn the_bound_does_not_depend_on_the_thread_count() {
    let one = run(&[
        "--lambda",
        "90",
        "--duration",
        "40",
        "--bound",
        "--threads",
        "1",
        "--policies",
        "closest",
    ]);
    let two = run(&[
        "--lambda",
        "90",
        "--duration",
        "40",
        "--bound",
        "--threads",
        "2",
        "--policies",
        "closest",
    ]);
    let strip = |v: &Value| {
        let mut b = v["bound"].clone();
        b.as_object_mut().unwrap().remove("wall_s");
        b
    };
    assert_eq!(strip(&one), strip(&two));
}

#[test]
fn bad_bound_options_are_refused() {
    let mut args = vec!["compare"];
    args.extend(TINY);
    let with = |extra: &[&'static str]| {
        let mut a = args.clone();
        a.extend(extra);
        a
    };
    let e = fails(&with(&["--bound", "--bound-slice-ms", "0"]));
    assert!(
        e.contains("--bound-slice-ms: expected a slice in ms > 0"),
        "{e}"
    );
    let e = fails(&with(&[
        "--bound",
        "--policies",
        "closest",
        "--allocators",
        "static",
    ]));
    assert!(e.contains("--bound: not with --allocators"), "{e}");
    let e = fails(&with(&["--own-bindings", "sometimes"]));
    assert!(
        e.contains("--own-bindings: unknown own-binding accounting `sometimes`"),
        "{e}"
    );
}
