//! `continuum jobs train | evaluate` from the command line at smoke size: a checkpoint and its
//! learning curve, an evaluation with a row per configuration of the paper's comparison set in
//! every scenario, and clear refusals.

use crate::cli_support::{fails, json, ok};

fn train(out: &str) {
    ok(&[
        "jobs",
        "train",
        "topologies/full-edge.yaml",
        "--kind",
        "dag-batch",
        "--episodes",
        "2",
        "--actors",
        "2",
        "--episode-s",
        "60",
        "--drain",
        "120",
        "--quiet",
        "--out",
        out,
    ]);
}

#[test]
fn a_trained_tuner_is_evaluated_against_the_papers_comparison_set() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tuner");
    let out = out.to_str().unwrap();
    train(out);
    for f in [
        "checkpoint.edgetuner",
        "curve.csv",
        "learning_curve.svg",
        "rounds.json",
    ] {
        assert!(dir.path().join("tuner").join(f).is_file(), "{f}");
    }
    let curve = std::fs::read_to_string(dir.path().join("tuner/curve.csv")).unwrap();
    assert_eq!(curve.lines().count(), 3, "{curve}");
    let v = json(&[
        "jobs",
        "evaluate",
        "topologies/full-edge.yaml",
        "--checkpoint",
        out,
        "--seeds",
        "1,2",
        "--duration",
        "120",
    ]);
    let ev = &v["evaluation"];
    assert_eq!(v["schema"], 1);
    assert!(v["workload"].as_str().unwrap().contains("dag-batch alone"));
    let scenarios = ev["scenarios"].as_array().unwrap();
    // Kubernetes' six algorithms under none, Res_80% and Res_70% (the paper's DAG scenarios).
    assert_eq!(scenarios.len(), 3);
    for sc in scenarios {
        assert_eq!(sc["fixed"].as_array().unwrap().len(), 6);
        assert_eq!(sc["tuned"]["jtl_s"].as_array().unwrap().len(), 2);
    }
    assert!(ev["headline_pct"].is_number());
    // The text form names the paper's figure beside ours.
    let text = ok(&[
        "jobs",
        "evaluate",
        "topologies/full-edge.yaml",
        "--checkpoint",
        out,
        "--seeds",
        "1",
        "--duration",
        "60",
    ]);
    assert!(
        text.contains("-21.66 %") && text.contains("scenario restart@0.8"),
        "{text}"
    );
}

#[test]
fn bad_settings_are_refused_with_the_flag() {
    let base = ["jobs", "train", "topologies/full-edge.yaml", "--quiet"];
    let with = |extra: &[&str]| -> Vec<String> {
        base.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    for (extra, expect) in [
        (&["--mitigations", "sometimes"][..], "--mitigations"),
        (&["--kind", "nope"][..], "--kind"),
        (&["--rate-scale", "0"][..], "--rate-scale"),
        (&["--scheduler", "yarn"][..], "--scheduler"),
        (&["--episodes", "0"][..], "episodes"),
    ] {
        let args = with(extra);
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let err = fails(&a);
        assert!(err.contains(expect), "{extra:?}: {err}");
    }
    let err = fails(&[
        "jobs",
        "evaluate",
        "topologies/full-edge.yaml",
        "--checkpoint",
        "topologies/full-edge.yaml",
    ]);
    assert!(err.contains("full-edge.yaml"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t");
    train(out.to_str().unwrap());
    let err = fails(&[
        "jobs",
        "evaluate",
        "topologies/full-edge.yaml",
        "--checkpoint",
        out.to_str().unwrap(),
        "--seeds",
        "1,x",
    ]);
    assert!(err.contains("--seeds"), "{err}");
}
