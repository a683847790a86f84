//! Sweeps from the command line: a grid's cells merged into the reports `compare` writes (every
//! field but timings), whatever the thread count; a training job before the cells; resuming;
//! refusing bad grids before any cell runs and cells of another grid at merge.

use crate::cli_support::{continuum, fails, ok};
use serde_json::Value;
use std::path::Path;

/// A report without what measures the machine (wall-clock time, speed, threads).
fn results_only(mut v: Value) -> Value {
    let sim = v["sim"].as_object_mut().expect("a report has `sim`");
    for k in [
        "wall_s",
        "queries_per_core_s",
        "x_real_time_per_core",
        "threads",
    ] {
        sim.remove(k).expect("a timing field");
    }
    if let Some(b) = v.get_mut("bound").and_then(Value::as_object_mut) {
        b.remove("wall_s").expect("the bound's timing");
    }
    v
}

fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap()
}

/// The merged report of `key` equals `compare` run with that report's command line.
fn assert_equals_compare(dir: &Path, key: &str, compare: &[&str]) {
    let merged = read_json(&dir.join("reports").join(key).join("results.json"));
    let mut args = compare.to_vec();
    args.extend(["--format", "json"]);
    let direct: Value = serde_json::from_str(&ok(&args)).unwrap();
    assert_eq!(results_only(merged), results_only(direct), "report {key}");
    let csv = std::fs::read_to_string(dir.join("reports").join(key).join("results.csv")).unwrap();
    let mut args = compare.to_vec();
    args.extend(["--format", "csv"]);
    assert_eq!(csv.trim_end(), ok(&args).trim_end(), "report {key} (CSV)");
}

const TINY: &str = "tests/fixtures/tiny-topology.yaml";

fn write_grid(dir: &Path, text: &str) -> String {
    let p = dir.join("grid.yaml");
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn a_training_job_then_cells_merge_into_the_compare_reports_whatever_the_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let ck = tmp.path().join("tiny.dqn");
    let grid = write_grid(
        tmp.path(),
        &format!(
            "name: t\n\
             compare: {{profiles: tests/fixtures/tiny-profiles.yaml, workload: tests/fixtures/tiny-workload.yaml,\n\
             \x20 duration: 30, policies: 'closest,random', agent: ['{ck}'], oracle: true, bound: true}}\n\
             axes:\n  - topology: [{TINY}]\n  - load: [{{name: l20, lambda: 20}}, {{name: l60, lambda: 60}}]\n  - seed: [4, 5]\n\
             jobs:\n  - {{command: train, topology: {TINY}, profiles: tests/fixtures/tiny-profiles.yaml,\n\
             \x20   workload: tests/fixtures/tiny-workload.yaml, config: tests/fixtures/tiny-dqn.yaml, episodes: 3, out: '{ck}'}}\n",
            ck = ck.display()
        ),
    );
    // Before the job has run, the plan lists it and no cells (the reports read its output).
    let plan: Value = serde_json::from_str(&ok(&["sweep", "plan", &grid])).unwrap();
    assert_eq!(plan["jobs"][0]["done"], false);
    assert!(plan["cells"].is_null());
    let one = tmp.path().join("one");
    let two = tmp.path().join("two");
    ok(&[
        "sweep",
        "run",
        &grid,
        "--dir",
        one.to_str().unwrap(),
        "--threads",
        "1",
    ]);
    assert!(ck.exists());
    ok(&[
        "sweep",
        "run",
        &grid,
        "--dir",
        two.to_str().unwrap(),
        "--threads",
        "2",
    ]);
    let index = read_json(&one.join("sweep.json"));
    // Per report: two policies, the agent, the oracle and the bound.
    assert_eq!(index["cells"], 4 * 5);
    let keys: Vec<&str> = index["reports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        [
            "tiny-topology.l20.4",
            "tiny-topology.l20.5",
            "tiny-topology.l60.4",
            "tiny-topology.l60.5"
        ]
    );
    for (key, lambda, seed) in [
        ("tiny-topology.l20.5", "20", "5"),
        ("tiny-topology.l60.4", "60", "4"),
    ] {
        let compare = [
            "compare",
            TINY,
            "--profiles",
            "tests/fixtures/tiny-profiles.yaml",
            "--workload",
            "tests/fixtures/tiny-workload.yaml",
            "--duration",
            "30",
            "--policies",
            "closest,random",
            "--agent",
            ck.to_str().unwrap(),
            "--oracle",
            "--bound",
            "--lambda",
            lambda,
            "--seed",
            seed,
        ];
        assert_equals_compare(&one, key, &compare);
        assert_equals_compare(&two, key, &compare);
    }
    let r = read_json(&one.join("reports/tiny-topology.l20.4/results.json"));
    let names: Vec<&str> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["policy"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["closest", "random", "dqn", "oracle"]);
}

#[test]
fn an_interrupted_sweep_resumes_and_cells_run_one_at_a_time_merge_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    let grid = write_grid(
        tmp.path(),
        &format!(
            "name: r\ncompare: {{profiles: tests/fixtures/tiny-profiles.yaml, workload: tests/fixtures/tiny-workload.yaml, duration: 20, policies: 'closest,random,least-impedance'}}\naxes: [{{topology: [{TINY}]}}, {{seed: [1, 2]}}]\n"
        ),
    );
    let dir = tmp.path().join("s");
    let d = dir.to_str().unwrap();
    ok(&["sweep", "run", &grid, "--dir", d]);
    let full = read_json(&dir.join("reports/tiny-topology.2/results.json"));
    // One cell lost (an interrupted sweep): the run writes it alone and merges the same.
    std::fs::remove_file(dir.join("cells/tiny-topology.2/1.json")).unwrap();
    std::fs::remove_dir_all(dir.join("reports")).unwrap();
    let o = continuum(&["sweep", "run", &grid, "--dir", d]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("1 run now, 5 already written"), "{err}");
    let again = read_json(&dir.join("reports/tiny-topology.2/results.json"));
    assert_eq!(results_only(full.clone()), results_only(again));
    // The same cells one by one (as a distributed driver runs them), then the merge.
    let other = tmp.path().join("o");
    let plan: Value = serde_json::from_str(&ok(&["sweep", "plan", &grid])).unwrap();
    let cells = plan["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 6);
    for c in cells {
        ok(&[
            "sweep",
            "cell",
            &grid,
            c["id"].as_str().unwrap(),
            "--dir",
            other.to_str().unwrap(),
        ]);
    }
    // A merge with a cell missing says which.
    std::fs::rename(
        other.join("cells/tiny-topology.1/0.json"),
        tmp.path().join("kept.json"),
    )
    .unwrap();
    let e = fails(&["sweep", "merge", &grid, "--dir", other.to_str().unwrap()]);
    assert!(
        e.contains("1 of 6 cells") && e.contains("tiny-topology.1/0"),
        "{e}"
    );
    std::fs::rename(
        tmp.path().join("kept.json"),
        other.join("cells/tiny-topology.1/0.json"),
    )
    .unwrap();
    ok(&["sweep", "merge", &grid, "--dir", other.to_str().unwrap()]);
    let merged = read_json(&other.join("reports/tiny-topology.2/results.json"));
    assert_eq!(results_only(full), results_only(merged));
}

#[test]
fn bad_grids_are_refused_before_any_cell_runs_and_foreign_cells_at_merge() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s");
    let d = dir.to_str().unwrap();
    let base = "compare: {profiles: tests/fixtures/tiny-profiles.yaml, workload: tests/fixtures/tiny-workload.yaml, duration: 20, policies: closest}\n";
    for (axes, expect) in [
        (
            "[{topology: [tests/fixtures/tiny-topology.yaml, no-such-topology]}]",
            "no-such-topology",
        ),
        (
            "[{topology: [tests/fixtures/tiny-topology.yaml]}, {policies: [closest, fastest-ever]}]",
            "fastest-ever",
        ),
        (
            "[{topology: [tests/fixtures/tiny-topology.yaml]}, {lambdaa: [1]}]",
            "--lambdaa",
        ),
    ] {
        let grid = write_grid(tmp.path(), &format!("name: b\n{base}axes: {axes}\n"));
        let e = fails(&["sweep", "run", &grid, "--dir", d]);
        assert!(e.contains(expect), "{axes}: {e}");
        assert!(!dir.exists(), "{axes}: no cell may run");
    }
    // Cells of one grid are not merged into another's reports, even under the same keys.
    let a = write_grid(
        tmp.path(),
        &format!("name: a\n{base}axes: [{{topology: [{TINY}]}}, {{seed: [1]}}]\n"),
    );
    ok(&["sweep", "run", &a, "--dir", d]);
    let b = write_grid(
        tmp.path(),
        &format!(
            "name: a\n{}axes: [{{topology: [{TINY}]}}, {{seed: [1]}}]\n",
            base.replace("20", "25")
        ),
    );
    let e = fails(&["sweep", "merge", &b, "--dir", d]);
    assert!(e.contains("not of `a`") && e.contains("digest"), "{e}");
}
