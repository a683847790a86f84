//! Helpers shared by the tests of the `continuum` binary.
#![allow(dead_code)]

use serde_json::Value;
use std::process::{Command, Output};

pub const FIX: &str = "tests/fixtures";

/// The binary, run from the crate root so that the default `--profiles` / `--workload`
/// paths resolve.
pub fn continuum(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_continuum"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .expect("the binary runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs and requires success; returns the standard output.
pub fn ok(args: &[&str]) -> String {
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
pub fn json(args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    let text = ok(&a);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

pub fn fixture(name: &str) -> String {
    format!("{FIX}/{name}")
}

/// Runs and requires a clean failure (exit 1, `error: …` on stderr, no panic); returns stderr.
pub fn fails(args: &[&str]) -> String {
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
pub fn bad_topology(file: &str, place: &str, expect: &[&str]) {
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

pub fn assert_place(err: &str, file: &str, place: &str, expect: &[&str]) {
    let prefix = format!("{file}:{place}");
    assert!(err.contains(&prefix), "expected `{prefix}` in:\n{err}");
    for e in expect {
        assert!(err.contains(e), "expected `{e}` in:\n{err}");
    }
}

pub fn results(v: &Value) -> &Vec<Value> {
    v["results"].as_array().expect("results is an array")
}

/// Arguments for a run on the tiny fixtures, `--duration 20` unless `extra` sets one.
pub fn tiny(cmd: &str, extra: &[&str]) -> Vec<String> {
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

pub fn refs(a: &[String]) -> Vec<&str> {
    a.iter().map(String::as_str).collect()
}
