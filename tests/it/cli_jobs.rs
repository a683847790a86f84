//! `continuum jobs compare | simulate` from the command line: a row per configuration on the
//! same jobs, the same output whatever the thread count, clear refusals of unknown or
//! unmodelled names and of bad workload files.

use crate::cli_support::{fails, ok};

const BASE: [&str; 6] = [
    "jobs",
    "compare",
    "topologies/full-edge.yaml",
    "--duration",
    "600",
    "--seed",
];

fn compare(extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = BASE.iter().map(|s| s.to_string()).collect();
    a.push("3".into());
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn run(args: &[String]) -> String {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&a)
}

#[test]
fn compare_gives_a_row_per_configuration_on_the_same_jobs_whatever_the_threads() {
    let one = run(&compare(&[
        "--placements",
        "LRP,GANG_LRP",
        "--mitigations",
        "none,Res_80%",
        "--format",
        "json",
        "--threads",
        "1",
    ]));
    let two = run(&compare(&[
        "--placements",
        "LRP,GANG_LRP",
        "--mitigations",
        "none,Res_80%",
        "--format",
        "json",
        "--threads",
        "2",
    ]));
    assert_eq!(one, two, "the thread count changed the results");
    let v: serde_json::Value = serde_json::from_str(&one).unwrap();
    assert_eq!(v["schema"], 1);
    let rows = v["rows"].as_array().unwrap();
    let names: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "{}/{}",
                r["placement"].as_str().unwrap(),
                r["mitigation"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            "LRP/none",
            "LRP/restart@0.8",
            "GANG_LRP/none",
            "GANG_LRP/restart@0.8"
        ]
    );
    // The same jobs in every row; restarts only where asked.
    assert!(
        rows.iter()
            .all(|r| r["jobs_arrived"] == rows[0]["jobs_arrived"]),
        "{v}"
    );
    assert!(rows[0]["jobs_arrived"].as_u64().unwrap() > 10, "{v}");
    assert_eq!(rows[0]["tasks"]["restarted"], 0);
    assert!(rows[1]["tasks"]["restarted"].as_u64().unwrap() > 0, "{v}");

    // --out: the rows as JSON and their latency CDFs, a line per row.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    run(&compare(&[
        "--placements",
        "LRP,MRP",
        "--out",
        out.to_str().unwrap(),
    ]));
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(saved["rows"].as_array().unwrap().len(), 2);
    let svg = std::fs::read_to_string(out.join("jtl_cdf.svg")).unwrap();
    assert!(
        svg.contains("LRP none") && svg.contains("MRP none"),
        "a legend entry per row"
    );

    let table = run(&compare(&["--placements", "LRP", "--mitigations", "grid"]));
    assert_eq!(
        table.lines().filter(|l| l.starts_with("LRP ")).count(),
        1 + 2 * 11,
        "none and both mitigations at 0.70 … 0.90:\n{table}"
    );
}

#[test]
fn simulate_prints_one_run_and_its_queue() {
    let out = ok(&[
        "jobs",
        "simulate",
        "topologies/full-edge.yaml",
        "--duration",
        "120",
        "--placement",
        "MRP",
    ]);
    assert!(out.contains("MRP") && out.contains("window end s"), "{out}");
}

#[test]
fn unknown_and_unmodelled_names_and_bad_files_are_refused() {
    let e = fails(&[
        "jobs",
        "compare",
        "topologies/full-edge.yaml",
        "--placements",
        "LRPP",
    ]);
    assert!(e.contains("--placements"), "{e}");
    let e = fails(&[
        "jobs",
        "compare",
        "topologies/full-edge.yaml",
        "--placements",
        "TTP",
    ]);
    assert!(e.contains("not modelled"), "{e}");
    let e = fails(&[
        "jobs",
        "compare",
        "topologies/full-edge.yaml",
        "--mitigations",
        "Res_200%",
    ]);
    assert!(e.contains("--mitigations"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("w.yaml");
    let text = std::fs::read_to_string("workloads/jobs/night.yaml").unwrap();
    std::fs::write(&bad, text.replacen("per_min: 7.10848", "per_min: -1", 1)).unwrap();
    let e = fails(&[
        "jobs",
        "compare",
        "topologies/full-edge.yaml",
        "--workload",
        bad.to_str().unwrap(),
    ]);
    assert!(e.contains("w.yaml:") && e.contains("per_min"), "{e}");
    let e = fails(&[
        "jobs",
        "compare",
        "topologies/full-edge.yaml",
        "--threads",
        "0",
    ]);
    assert!(e.contains("--threads"), "{e}");
    // Flags named as typed; a run too long to draw is refused before any job is drawn.
    let jobs = |extra: &[&str]| {
        let mut a = vec!["jobs", "compare", "topologies/full-edge.yaml"];
        a.extend(extra);
        fails(&a)
    };
    let e = jobs(&["--duration", "-5"]);
    assert!(e.contains("--duration: "), "{e}");
    let e = jobs(&["--step-s", "0"]);
    assert!(e.contains("--step-s: "), "{e}");
    let t = std::time::Instant::now();
    let e = jobs(&["--duration", "1e12"]);
    assert!(
        e.contains("--duration: ") && e.contains("at most 200000"),
        "{e}"
    );
    assert!(
        t.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        t.elapsed()
    );
}

#[test]
fn load_gives_each_configuration_at_each_rate_factor() {
    let v: serde_json::Value = serde_json::from_str(&ok(&[
        "jobs",
        "load",
        "topologies/full-edge.yaml",
        "--kind",
        "dag-batch",
        "--duration",
        "300",
        "--placements",
        "LRP,EP",
        "--factors",
        "1,2",
        "--format",
        "json",
    ]))
    .unwrap();
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    assert!(v["workload"].as_str().unwrap().contains("dag-batch alone"));
    let jobs = |p: &serde_json::Value| p["rows"][0]["jobs_arrived"].as_u64().unwrap();
    assert_eq!(points[0]["rows"].as_array().unwrap().len(), 2);
    // Twice the rates, about twice the jobs.
    let (a, b) = (jobs(&points[0]), jobs(&points[1]));
    assert!(b as f64 > 1.5 * a as f64, "{a} then {b}");
    let err = fails(&[
        "jobs",
        "load",
        "topologies/full-edge.yaml",
        "--factors",
        "1,0",
    ]);
    assert!(err.contains("--factors"), "{err}");
    let err = fails(&[
        "jobs",
        "compare",
        "topologies/full-edge.yaml",
        "--rate-scale",
        "-1",
    ]);
    assert!(err.contains("--rate-scale"), "{err}");
}
