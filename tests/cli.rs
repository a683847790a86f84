//! End-to-end tests of the `continuum` binary: `compare`, `simulate`, the output files,
//! determinism, and the error messages for bad input (`error: file:line:col: field: message`).

use serde_json::Value;
use std::process::{Command, Output};

const FIX: &str = "tests/fixtures";

const POLICIES: [&str; 8] = [
    "closest",
    "load-balancing",
    "farthest",
    "cheaper",
    "random-proportional-latency",
    "random-proportional-load",
    "least-impedance",
    "random",
];

/// The binary, run from the crate root so that the default `--profiles` / `--workload`
/// paths resolve.
fn continuum(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_continuum"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs and requires success; returns the standard output.
fn ok(args: &[&str]) -> String {
    let o = continuum(args);
    assert!(
        o.status.success(),
        "`continuum {}` failed ({}):\n{}",
        args.join(" "),
        o.status,
        stderr(&o)
    );
    stdout(&o)
}

/// Runs with `--format json` and returns the parsed report.
fn json(args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    let text = ok(&a);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

fn fixture(name: &str) -> String {
    format!("{FIX}/{name}")
}

/// Runs and requires a clean failure (exit 1, `error: …` on stderr, no panic); returns stderr.
fn fails(args: &[&str]) -> String {
    let o = continuum(args);
    let err = stderr(&o);
    assert!(
        !o.status.success(),
        "`continuum {}` must fail, but succeeded:\n{}",
        args.join(" "),
        stdout(&o)
    );
    assert_eq!(o.status.code(), Some(1), "exit status: {}\n{err}", o.status);
    assert!(!err.contains("panicked"), "panicked:\n{err}");
    assert!(err.contains("error: "), "no `error: ` line:\n{err}");
    err
}

/// A broken topology (loaded with the tiny profiles and workload): the error names
/// `file:line:col` followed by everything in `expect`.
fn bad_topology(file: &str, place: &str, expect: &[&str]) {
    let topo = fixture(file);
    let (p, w) = (fixture("tiny-profiles.yaml"), fixture("tiny-workload.yaml"));
    let err = fails(&[
        "simulate",
        &topo,
        "--profiles",
        &p,
        "--workload",
        &w,
        "--duration",
        "5",
    ]);
    assert_place(&err, file, place, expect);
}

fn assert_place(err: &str, file: &str, place: &str, expect: &[&str]) {
    let prefix = format!("{file}:{place}");
    assert!(err.contains(&prefix), "expected `{prefix}` in:\n{err}");
    for e in expect {
        assert!(err.contains(e), "expected `{e}` in:\n{err}");
    }
}

fn results(v: &Value) -> &Vec<Value> {
    v["results"].as_array().expect("results is an array")
}

/// Arguments for a run on the tiny fixtures, `--duration 20` unless `extra` sets one.
fn tiny(cmd: &str, extra: &[&str]) -> Vec<String> {
    let mut a = vec![
        cmd.to_string(),
        fixture("tiny-topology.yaml"),
        "--profiles".into(),
        fixture("tiny-profiles.yaml"),
        "--workload".into(),
        fixture("tiny-workload.yaml"),
    ];
    if !extra.contains(&"--duration") {
        a.extend(["--duration".into(), "20".into()]);
    }
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn refs(a: &[String]) -> Vec<&str> {
    a.iter().map(String::as_str).collect()
}

// ---- compare ---------------------------------------------------------------------------------

#[test]
fn compare_full_edge_reports_every_policy_in_order() {
    let v = json(&["compare", "topologies/full-edge.yaml", "--duration", "20"]);
    assert_eq!(v["topology"], "full-edge");
    assert_eq!(v["seed"], 1);
    assert_eq!(v["duration_s"], 20.0);
    assert!(v["sim"].is_object(), "{v}");
    let rs = results(&v);
    let names: Vec<_> = rs.iter().map(|r| r["policy"].as_str().unwrap()).collect();
    assert_eq!(names, POLICIES);
    let mut ratios = Vec::new();
    for r in rs {
        let n = |k: &str| r[k].as_u64().unwrap_or_else(|| panic!("{k} in {r}"));
        assert!(n("offered") > 0, "{r}");
        assert_eq!(
            n("offered"),
            n("success") + n("failure") + n("rejected"),
            "{}",
            r["policy"]
        );
        let s = r["success_ratio"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&s), "{}: {s}", r["policy"]);
        assert!((s - n("success") as f64 / n("offered") as f64).abs() < 1e-12);
        ratios.push(s);
        for k in ["p50", "p95", "p99"] {
            assert!(r["latency_ms"][k].is_number(), "{k} in {r}");
        }
        let apps = r["per_app"].as_array().unwrap();
        assert!(!apps.is_empty(), "{}", r["policy"]);
        for a in apps {
            let n = |k: &str| a[k].as_u64().unwrap();
            assert_eq!(n("offered"), n("success") + n("failure") + n("rejected"));
        }
        assert_eq!(
            apps.iter()
                .map(|a| a["offered"].as_u64().unwrap())
                .sum::<u64>(),
            n("offered")
        );
        let win = r["per_window"].as_array().unwrap();
        assert!(!win.is_empty(), "{}", r["policy"]);
        for w in win {
            assert!(w["t_s"].is_number());
            let s = w["success_ratio"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&s));
        }
    }
    assert!(
        ratios.iter().any(|&r| r != ratios[0]),
        "every policy has the same success ratio: {ratios:?}"
    );
}

#[test]
fn compare_subset_keeps_the_given_order() {
    let a = tiny("compare", &["--policies", "random,closest"]);
    let a = refs(&a);
    let v = json(&a);
    let names: Vec<_> = results(&v)
        .iter()
        .map(|r| r["policy"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["random", "closest"]);
}

// ---- determinism -----------------------------------------------------------------------------

const DET: [&str; 4] = ["compare", "topologies/full-edge.yaml", "--duration", "10"];

fn det(extra: &[&str]) -> Value {
    let mut a = DET.to_vec();
    a.extend(extra);
    json(&a)["results"].clone()
}

#[test]
fn same_arguments_give_identical_results() {
    let a = det(&["--seed", "7"]);
    let b = det(&["--seed", "7"]);
    assert_eq!(a, b);
}

#[test]
fn results_do_not_depend_on_the_number_of_threads() {
    let a = det(&["--seed", "3", "--threads", "1"]);
    let b = det(&["--seed", "3", "--threads", "2"]);
    assert_eq!(a, b);
}

#[test]
fn a_different_seed_gives_different_results() {
    let a = det(&["--seed", "1"]);
    let b = det(&["--seed", "2"]);
    assert_ne!(a, b);
}

// ---- simulate --------------------------------------------------------------------------------

#[test]
fn simulate_prints_a_table() {
    let out = ok(&[
        "simulate",
        "topologies/full-edge.yaml",
        "--policy",
        "closest",
        "--duration",
        "10",
    ]);
    assert!(out.contains("closest"), "{out}");
    assert!(out.contains("full-edge"), "{out}");
    assert!(out.contains('%'), "{out}");
}

#[test]
fn simulate_prints_json_for_one_policy() {
    let v = json(&[
        "simulate",
        "topologies/full-edge.yaml",
        "--policy",
        "closest",
        "--duration",
        "10",
    ]);
    let rs = results(&v);
    assert_eq!(rs.len(), 1);
    assert_eq!(rs[0]["policy"], "closest");
    assert!(rs[0]["offered"].as_u64().unwrap() > 0);
    assert_eq!(rs[0]["per_window"].as_array().unwrap().len(), 2);
}

#[test]
fn simulate_prints_csv() {
    let a = tiny("simulate", &["--policy", "closest", "--format", "csv"]);
    let a = refs(&a);
    let out = ok(&a);
    let first = out.lines().next().unwrap_or_default();
    assert!(first.starts_with("policy,"), "{out}");
    assert!(
        out.lines().skip(1).any(|l| l.starts_with("closest,")),
        "{out}"
    );
}

#[test]
fn simulate_writes_the_output_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("nested").join("out");
    let out_s = out.to_str().unwrap();
    let a = tiny("simulate", &["--policy", "closest", "--out", out_s]);
    let a = refs(&a);
    ok(&a);
    for f in [
        "results.json",
        "results.csv",
        "success_over_time.svg",
        "success_per_app.svg",
    ] {
        let text = std::fs::read_to_string(out.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(!text.trim().is_empty(), "{f} is empty");
        if f.ends_with(".svg") {
            let t = text.trim_start();
            assert!(
                t.starts_with("<svg") || t.starts_with("<?xml"),
                "{f}: {t:.80}"
            );
        }
    }
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(results(&v)[0]["policy"], "closest");
    assert_eq!(v["topology"], "tiny");
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(csv.lines().next().unwrap().starts_with("policy,"), "{csv}");
}

#[test]
fn simulate_on_full_edge_writes_the_output_files() {
    let dir = tempfile::tempdir().unwrap();
    let out_s = dir.path().to_str().unwrap();
    ok(&[
        "simulate",
        "topologies/full-edge.yaml",
        "--policy",
        "closest",
        "--duration",
        "10",
        "--out",
        out_s,
    ]);
    for f in [
        "results.json",
        "results.csv",
        "success_over_time.svg",
        "success_per_app.svg",
    ] {
        let len = std::fs::metadata(dir.path().join(f)).map(|m| m.len());
        assert!(matches!(len, Ok(n) if n > 0), "{f}: {len:?}");
    }
}

// ---- bad topologies --------------------------------------------------------------------------

#[test]
fn unknown_parent_is_refused() {
    bad_topology(
        "bad-unknown-parent.yaml",
        "3:36:",
        &["clusters[1].parent", "zz"],
    );
}

#[test]
fn cycle_is_refused() {
    bad_topology("bad-cycle.yaml", "2:36:", &["clusters[0].parent", "cycle"]);
}

#[test]
fn scheduler_on_a_non_access_cluster_is_refused() {
    bad_topology(
        "bad-scheduler-not-access.yaml",
        "4:17:",
        &["schedulers[1]", "access"],
    );
}

#[test]
fn negative_capacity_is_refused() {
    bad_topology(
        "bad-negative-capacity.yaml",
        "2:38:",
        &["clusters[0].capacity.cpu", "> 0"],
    );
}

#[test]
fn zero_capacity_is_refused() {
    bad_topology(
        "bad-zero-capacity.yaml",
        "2:38:",
        &["clusters[0].capacity.cpu", "> 0"],
    );
}

#[test]
fn deployment_exceeding_its_cluster_is_refused() {
    bad_topology(
        "bad-deploy-exceeds.yaml",
        "2:56:",
        &["clusters[0].deploy", "exceed"],
    );
}

#[test]
fn unknown_variant_in_deployment_is_refused() {
    bad_topology(
        "bad-unknown-variant.yaml",
        "2:56:",
        &["clusters[0].deploy", "huge"],
    );
}

#[test]
fn malformed_yaml_is_refused() {
    bad_topology("bad-malformed.yaml", "2:", &["bracket"]);
}

#[test]
fn unknown_field_is_refused() {
    bad_topology("bad-unknown-field.yaml", "2:28:", &["colour"]);
}

// ---- bad workloads and profiles --------------------------------------------------------------

fn bad_workload(file: &str, place: &str, expect: &[&str]) {
    let (t, p, w) = (
        fixture("tiny-topology.yaml"),
        fixture("tiny-profiles.yaml"),
        fixture(file),
    );
    let err = fails(&[
        "compare",
        &t,
        "--profiles",
        &p,
        "--workload",
        &w,
        "--duration",
        "5",
    ]);
    assert_place(&err, file, place, expect);
}

#[test]
fn workload_with_a_negative_duration_is_refused() {
    bad_workload(
        "bad-workload-negative-duration.yaml",
        "4:134:",
        &["apps[0].duration_s"],
    );
}

#[test]
fn workload_with_an_unknown_task_is_refused() {
    bad_workload(
        "bad-workload-unknown-task.yaml",
        "4:31:",
        &["apps[0].task", "dance"],
    );
}

#[test]
fn profile_with_a_task_no_model_serves_is_refused() {
    let file = "bad-profile-unserved-task.yaml";
    let (t, p, w) = (
        fixture("tiny-topology.yaml"),
        fixture(file),
        fixture("tiny-workload.yaml"),
    );
    let err = fails(&[
        "simulate",
        &t,
        "--profiles",
        &p,
        "--workload",
        &w,
        "--duration",
        "5",
    ]);
    assert_place(&err, file, "3:12:", &["tasks[1].name", "lonely"]);
}

// ---- bad command-line arguments --------------------------------------------------------------

#[test]
fn unknown_policy_is_named() {
    let a = tiny("compare", &["--policies", "closest,nearest"]);
    let a = refs(&a);
    let err = fails(&a);
    assert!(err.contains("nearest"), "{err}");
    let a = tiny("simulate", &["--policy", "nearest"]);
    let a = refs(&a);
    let err = fails(&a);
    assert!(err.contains("nearest"), "{err}");
}

#[test]
fn negative_duration_is_refused() {
    let a = tiny("compare", &["--duration", "-5"]);
    let a = refs(&a);
    let err = fails(&a);
    assert!(err.contains("duration"), "{err}");
}

#[test]
fn other_bad_numbers_are_refused() {
    for (flag, value, word) in [
        ("--window", "0", "window"),
        ("--lambda", "-1", "lambda"),
        ("--queue-bound", "lots", "queue-bound"),
        ("--staleness-ms", "-3", "staleness"),
    ] {
        let a = tiny("compare", &[flag, value]);
        let a = refs(&a);
        let err = fails(&a);
        assert!(err.contains(word), "{flag} {value}: {err}");
    }
}

#[test]
fn missing_topology_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-topology.yaml");
    let m = missing.to_str().unwrap();
    let err = fails(&["compare", m, "--duration", "5"]);
    assert!(err.contains(m), "{err}");
}

// ---- tail-latency mitigation -----------------------------------------------------------------

#[test]
fn compare_runs_configurations_and_the_grid() {
    let a = tiny(
        "compare",
        &[
            "--policies",
            "closest",
            "--configs",
            "closest+reissue@0.1,least-impedance+discard@0.9",
        ],
    );
    let v = json(&refs(&a));
    let names: Vec<&str> = results(&v)
        .iter()
        .map(|r| r["policy"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "closest",
            "closest+reissue@0.1",
            "least-impedance+discard@0.9"
        ]
    );
    // The plain row equals `closest` run alone: a mitigation touches only its own row.
    let alone = json(&refs(&tiny("compare", &["--policies", "closest"])));
    assert_eq!(results(&v)[0], results(&alone)[0]);
    for r in results(&v) {
        assert!(r["latency_ms"]["p99"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["stream_tail_ms"]["p99"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["per_window"][0]["p99_ms"].as_f64().is_some(), "{r}");
    }
    assert!(results(&v)[1]["mitigation"]["reissued"].as_u64().unwrap() > 0);
    // A discarded query counts as rejected: never more discarded than rejected.
    let count = |r: &Value, k: &str| r[k].as_u64().unwrap();
    let li = &results(&v)[2];
    assert!(
        count(&li["mitigation"], "discarded") <= count(li, "rejected"),
        "{li}"
    );
    // Discard at 0.05 of the tiny workload's 100 ms deadline drops what is predicted to answer
    // after 5 ms: every query, since processing alone takes 10 ms. So every offered query is
    // discarded on arrival and rejected, and none succeeds.
    let a = tiny("compare", &["--configs", "closest+discard@0.05"]);
    let v = json(&refs(&a));
    let r = &results(&v)[0];
    let offered = count(r, "offered");
    assert!(offered > 0, "{r}");
    assert_eq!(count(&r["mitigation"], "discarded"), offered, "{r}");
    assert_eq!(count(r, "rejected"), offered, "{r}");
    assert_eq!(count(r, "success"), 0, "{r}");
    let a = tiny(
        "compare",
        &["--grid", "--policies", "closest,cheaper", "--ratios", "0.8"],
    );
    let v = json(&refs(&a));
    assert_eq!(results(&v).len(), 2 * 3);
    assert_eq!(results(&v)[2]["policy"], "closest+discard@0.8");
}

#[test]
fn capacity_scale_slows_the_workers() {
    // The tiny workload's queries take 10 ms of processing on `closest`'s worker: ×0.25
    // capacity makes it 40 ms, and every answer 30 ms later.
    let p50 = |scale: &str| {
        let a = tiny(
            "compare",
            &["--policies", "closest", "--capacity-scale", scale],
        );
        let v = json(&refs(&a));
        results(&v)[0]["latency_ms"]["p50"].as_f64().unwrap()
    };
    let (full, quarter) = (p50("1"), p50("0.25"));
    assert!((quarter - full - 30.0).abs() < 1.0, "{full} → {quarter}");
    // `perturb:S` draws each cluster's multiple in [1 − S, 1 + S]. Spread 0 is the profile.
    assert_eq!(p50("perturb:0:3"), full);
    // Spread 0.5: every worker is between ×0.5 and ×1.5, so the 10 ms of processing take
    // between 6.7 and 20 ms and p50 lies between the uniform ×1.5 and ×0.5 runs (about 3.3 ms
    // below and 10 ms above the profile's); and a draw moves it off the profile's.
    let (fast, slow) = (p50("1.5"), p50("0.5"));
    assert!(
        (full - fast - 10.0 / 3.0).abs() < 1.0,
        "{full} → ×1.5 {fast}"
    );
    assert!((slow - full - 10.0).abs() < 1.0, "{full} → ×0.5 {slow}");
    for seed in [3, 4] {
        let p = p50(&format!("perturb:0.5:{seed}"));
        assert!(
            fast - 0.01 <= p && p <= slow + 0.01,
            "seed {seed}: {fast} ≤ {p} ≤ {slow}"
        );
        assert!(
            (p - full).abs() > 0.05,
            "seed {seed}: {p} vs the profile's {full}"
        );
    }
}

#[test]
fn bad_configurations_are_refused() {
    for (args, word) in [
        (
            vec!["--configs", "closest+restart@0.8"],
            "unknown kind `restart`",
        ),
        (vec!["--configs", "closest+reissue@1.5"], "(0, 1]"),
        (vec!["--configs", "nearest+none"], "nearest"),
        (vec!["--grid", "--ratios", "0.8,2"], "--ratios"),
        (vec!["--capacity-scale", "-1"], "--capacity-scale"),
        (vec!["--capacity-scale", "perturb:x"], "perturb"),
    ] {
        let a = tiny("compare", &args);
        let err = fails(&refs(&a));
        assert!(err.contains(word), "{args:?}: {err}");
    }
}

#[test]
fn loadgen_quic_options_are_checked_before_any_request() {
    let base = [
        "loadgen",
        "--profiles",
        "profiles/local.yaml",
        "--workload",
        "workloads/live.yaml",
    ];
    let with = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        fails(&a)
    };
    let e = with(&["--quic", "127.0.0.1:8082"]);
    assert!(e.contains("--quic-cert"), "{e}");
    let e = with(&["--quic-cert", "Cargo.toml"]);
    assert!(e.contains("only with --quic"), "{e}");
    let e = with(&["--quic", "127.0.0.1", "--quic-cert", "Cargo.toml"]);
    assert!(e.contains("host:port"), "{e}");
    let e = with(&["--quic", "h:1", "--quic-cert", "no/such.der"]);
    assert!(e.contains("no/such.der"), "{e}");
    let e = with(&[
        "--quic",
        "h:1",
        "--quic-cert",
        "Cargo.toml",
        "--body",
        "json",
    ]);
    assert!(e.contains("binary tensors"), "{e}");
}
