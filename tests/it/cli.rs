//! End-to-end tests of the `continuum` binary: `compare`, `simulate`, the output files,
//! determinism, and the error messages for bad input (`error: file:line:col: field: message`).

use crate::cli_support::*;
use serde_json::Value;

const POLICIES: [&str; 17] = [
    "closest",
    "load-balancing",
    "farthest",
    "cheaper",
    "random-proportional-latency",
    "random-proportional-load",
    "least-impedance",
    "random",
    "tetris",
    "least-allocated",
    "most-allocated",
    "worker-headroom",
    "headroom",
    "headroom-packing",
    "two-choices",
    "least-predicted",
    "balanced-allocation",
];

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
fn a_workload_with_the_old_rate_key_runs_the_same_with_a_warning_that_points_at_it() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("tiny-workload.yaml")).unwrap();
    assert!(text.contains("rate_qps: 10"));
    let old = dir.path().join("old.yaml");
    std::fs::write(&old, text.replace("rate_qps: 10", "rate_fps: 10")).unwrap();
    let new = tiny("simulate", &["--policy", "closest", "--format", "json"]);
    let o = continuum(&refs(&new));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("deprecated"), "{}", stderr(&o));
    let mut with_old = new.clone();
    let at = with_old.iter().position(|a| a == "--workload").unwrap() + 1;
    with_old[at] = old.display().to_string();
    let p = continuum(&refs(&with_old));
    assert!(p.status.success(), "{}", stderr(&p));
    let warning = format!("{}:5:", old.display());
    let err = stderr(&p);
    assert!(
        err.contains(&warning)
            && err.contains("apps[0].rate_fps: deprecated name")
            && err.contains("`apps[0].rate_qps`"),
        "{err}"
    );
    let report = |o: &std::process::Output| -> Value {
        serde_json::from_str::<Value>(&stdout(o)).unwrap()["results"].clone()
    };
    assert_eq!(report(&p), report(&o));
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

// ---- capacity scale and loadgen options ------------------------------------------------------

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

/// The binary checks the TLS flags towards the gateway before any request, naming the flag.
#[test]
fn loadgen_gateway_tls_options_are_checked_before_any_request() {
    let with = |extra: &[&str]| {
        let mut a = vec![
            "loadgen",
            "--profiles",
            "profiles/local.yaml",
            "--workload",
            "workloads/live.yaml",
        ];
        a.extend_from_slice(extra);
        fails(&a)
    };
    let e = with(&["--gateway", "https://127.0.0.1:8443"]);
    assert!(e.contains("https needs --gateway-ca"), "{e}");
    let e = with(&["--gateway-ca", "Cargo.toml"]);
    assert!(e.contains("--gateway-ca: only with an https://"), "{e}");
    let e = with(&["--gateway-cert", "a.pem"]);
    assert!(e.contains("--gateway-cert: expected --gateway-key"), "{e}");
    let e = with(&[
        "--gateway",
        "https://127.0.0.1:8443",
        "--gateway-ca",
        "no/such.pem",
    ]);
    assert!(
        e.contains("--gateway-ca no/such.pem: cannot read it"),
        "{e}"
    );
}

/// `continuum compare … | head -1`: the reader goes away after one line; the command stops
/// quietly (status 0, no panic message) instead of panicking on the broken pipe.
#[test]
fn a_closed_pipe_ends_the_command_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_continuum"))
        .args([
            "compare",
            "topologies/full-edge.yaml",
            // Every policy over 120 s: a report of about 100 KB, more than a pipe holds, so
            // the command is still writing when the reader goes away.
            "--duration",
            "120",
            "--format",
            "json",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(!first.is_empty());
    // The reader is dropped here: the rest of the report goes to a closed pipe.
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}
