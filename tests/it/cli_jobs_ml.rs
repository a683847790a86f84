//! `continuum jobs ml compare | train` from the command line at smoke size: the rules on the
//! same tasks, a trained variant compared beside them, and clear refusals.

use crate::cli_support::{fails, json, ok};

#[test]
fn the_rules_run_on_the_same_tasks_of_each_case_and_seed() {
    let v = json(&[
        "jobs",
        "ml",
        "compare",
        "--cases",
        "2:1,het:6",
        "--seeds",
        "1,2",
        "--tasks-per-cluster",
        "8",
    ]);
    let rows = v.as_array().unwrap();
    // 2 cases × 6 rules, in the order asked.
    assert_eq!(rows.len(), 12);
    assert_eq!(rows[0]["case"], "2 clusters, λ 1");
    assert_eq!(rows[6]["case"], "6 heterogeneous, λ 6");
    let methods: Vec<&str> = rows[..6]
        .iter()
        .map(|r| r["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        [
            "optimus",
            "tiresias",
            "random",
            "min",
            "prior-pull",
            "efficient"
        ]
    );
    for r in rows {
        for rep in r["reports"].as_array().unwrap() {
            assert_eq!(rep["unfinished"], 0, "{r}");
            assert_eq!(rep["completed"], rep["tasks"]);
        }
    }
    assert_eq!(rows[0]["reports"][0]["tasks"], 16);
    assert_eq!(rows[6]["reports"][0]["tasks"], 48);
    let table = ok(&[
        "jobs",
        "ml",
        "compare",
        "--seeds",
        "1",
        "--tasks-per-cluster",
        "8",
    ]);
    assert!(table.contains("vs best rule"), "{table}");
}

#[test]
fn a_trained_variant_is_compared_beside_the_rules() {
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join("s.yaml");
    std::fs::write(
        &settings,
        "tasks_per_cluster: 6\nhidden: 8\nminibatch: 32\n",
    )
    .unwrap();
    let out = dir.path().join("tf");
    ok(&[
        "jobs",
        "ml",
        "train",
        "--variant",
        "no-pointer",
        "--settings",
        settings.to_str().unwrap(),
        "--updates",
        "2",
        "--envs",
        "2",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    for f in ["checkpoint.tapfinger", "curve.csv", "learning_curve.svg"] {
        assert!(out.join(f).is_file(), "{f}");
    }
    let curve = std::fs::read_to_string(out.join("curve.csv")).unwrap();
    assert_eq!(curve.lines().count(), 3, "{curve}");
    let labelled = format!("mine={}", out.display());
    let v = json(&[
        "jobs",
        "ml",
        "compare",
        "--cases",
        "3:2",
        "--seeds",
        "1",
        "--methods",
        "min",
        "--tasks-per-cluster",
        "6",
        "--checkpoint",
        &labelled,
    ]);
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1]["method"], "mine");
    assert_eq!(rows[1]["reports"][0]["unfinished"], 0);
}

#[test]
fn bad_input_is_refused_by_name() {
    let err = fails(&["jobs", "ml", "compare", "--cases", "3"]);
    assert!(err.contains("--cases: `3`: expected `N:λ`"), "{err}");
    let err = fails(&["jobs", "ml", "compare", "--cases", "0:2"]);
    assert!(err.contains("--cases"), "{err}");
    let err = fails(&["jobs", "ml", "compare", "--methods", "fifo"]);
    assert!(err.contains("unknown method `fifo`"), "{err}");
    let err = fails(&["jobs", "ml", "compare", "--overhead", "1.5"]);
    assert!(err.contains("--overhead"), "{err}");
    let err = fails(&["jobs", "ml", "train", "--variant", "big"]);
    assert!(
        err.contains("unknown `big`") && err.contains("vanilla-marl"),
        "{err}"
    );
    // A TapFinger checkpoint of the streams problem is not one of ML tasks.
    let err = fails(&[
        "jobs",
        "ml",
        "compare",
        "--checkpoint",
        "models/full-edge-tapfinger.tapfinger",
    ]);
    assert!(
        err.contains("streams problem") && err.contains("jobs ml train"),
        "{err}"
    );
}
