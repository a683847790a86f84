//! `compare --allocators`: an allocator above dispatch on the shipped topologies under the
//! shifting-mix workload.

use serde_json::Value;
use std::process::{Command, Output};

fn continuum(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_continuum"))
        .args(args)
        .output()
        .expect("the binary runs")
}

const BASE: [&str; 9] = [
    "compare",
    "topologies/full-edge.yaml",
    "--workload",
    "workloads/shifting-mix.yaml",
    "--duration",
    "90",
    "--seed",
    "5",
    "--format=json",
];

fn json(extra: &[&str]) -> Value {
    let mut a = BASE.to_vec();
    a.extend(extra);
    let o = continuum(&a);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("JSON report")
}

fn rows(v: &Value) -> &Vec<Value> {
    v["results"].as_array().expect("results")
}

#[test]
fn every_allocator_runs_and_static_is_the_file_deployment() {
    let v = json(&[
        "--policies",
        "least-impedance",
        "--allocators",
        "static,oga,drf,fairness,binpacking,spreading",
    ]);
    let names: Vec<&str> = rows(&v)
        .iter()
        .map(|r| r["policy"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "least-impedance@static",
            "least-impedance@oga",
            "least-impedance@drf",
            "least-impedance@fairness",
            "least-impedance@binpacking",
            "least-impedance@spreading"
        ]
    );
    // The static row on the candidate workers is the plain run.
    let plain = json(&["--policies", "least-impedance"]);
    let (a, b) = (&rows(&v)[0], &rows(&plain)[0]);
    for k in [
        "offered",
        "success",
        "failure",
        "rejected",
        "per_app",
        "per_window",
    ] {
        assert_eq!(a[k], b[k], "{k}");
    }
    assert!(a["allocation"]["mean_reward"].is_null());
    assert_eq!(a["allocation"]["replica_changes"], 0);
    // Every other allocator redeployed (90 s: two slot boundaries) and was scored.
    for r in &rows(&v)[1..] {
        let al = &r["allocation"];
        assert!(al["mean_reward"].as_f64().unwrap().is_finite(), "{r}");
        assert!(al["replica_changes"].as_u64().unwrap() > 0, "{r}");
        let off = r["offered"].as_u64().unwrap();
        let sum = ["success", "failure", "rejected"]
            .iter()
            .map(|k| r[k].as_u64().unwrap())
            .sum::<u64>();
        assert_eq!(off, sum, "every offered query has one outcome");
    }
}

#[test]
fn allocated_runs_do_not_depend_on_the_number_of_threads() {
    let args = [
        "--policies",
        "closest,least-impedance",
        "--allocators",
        "oga,fairness",
    ];
    let mut one = args.to_vec();
    one.extend(["--threads", "1"]);
    let mut two = args.to_vec();
    two.extend(["--threads", "2"]);
    assert_eq!(json(&one)["results"], json(&two)["results"]);
}

#[test]
fn bad_allocator_arguments_are_refused_with_what_was_expected() {
    for (extra, want) in [
        (vec!["--allocators", "greedy"], "unknown allocator `greedy`"),
        (
            vec!["--allocators", "oga", "--alloc-slot-s", "0"],
            "--alloc-slot-s",
        ),
        (
            vec!["--allocators", "oga", "--alloc-units", "parsecs"],
            "instance, replica or natural",
        ),
        (
            vec!["--allocators", "oga", "--alloc-eta0=-1"],
            "--alloc-eta0",
        ),
        (
            vec!["--allocators", "oga", "--oracle"],
            "not a configuration",
        ),
    ] {
        let mut a = BASE.to_vec();
        a.extend(&extra);
        let o = continuum(&a);
        assert!(!o.status.success(), "{extra:?} was accepted");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(want), "{extra:?}: {err}");
    }
}
