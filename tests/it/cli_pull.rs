//! Pull dispatch from the command line (docs/model.md §15): the pull rows of `compare`, their
//! determinism whatever the thread count, TapFinger's training, and bad input refused clearly.

use crate::cli_support::*;

const ROWS: &str = "greedy-pull,random-pull,tapfinger:models/full-edge-tapfinger.tapfinger";

fn pulled(threads: &str) -> serde_json::Value {
    pulled_rows(threads, ROWS)
}

fn pulled_rows(threads: &str, rows: &str) -> serde_json::Value {
    json(&[
        "compare",
        "topologies/full-edge.yaml",
        "--duration",
        "10",
        "--seed",
        "4",
        "--threads",
        threads,
        "--policies",
        rows,
    ])["results"]
        .clone()
}

#[test]
fn pull_rows_do_not_depend_on_the_number_of_threads() {
    let a = pulled("1");
    let b = pulled("2");
    assert_eq!(a, b);
    let names: Vec<_> = a
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["policy"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ROWS.split(',').collect::<Vec<_>>());
    for r in a.as_array().unwrap() {
        let n = |k: &str| r[k].as_u64().unwrap();
        assert!(n("success") > 0, "{r}");
        assert_eq!(n("offered"), n("success") + n("failure") + n("rejected"));
        assert!(r["latency_mean_ms"].as_f64().unwrap() > 0.0);
    }
    // Each row alone on one thread is the same as beside the others on two: nothing a row
    // computes carries over from the rows run before it on its thread, or from another row.
    for (i, row) in ROWS.split(',').enumerate() {
        let alone = pulled_rows("1", row);
        assert_eq!(
            alone[0], b[i],
            "{row} alone differs from {row} among the rows"
        );
    }
}

#[test]
fn bad_pull_arguments_are_refused_with_what_was_expected() {
    let base = ["compare", "topologies/full-edge.yaml", "--duration", "5"];
    let with = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend(extra);
        fails(&a)
    };
    let e = with(&["--policies", "tapfinger:no/such.tapfinger"]);
    assert!(e.contains("no/such.tapfinger"), "{e}");
    let e = with(&["--policies", "tapfinger:models/full-edge.dqn"]);
    assert!(e.contains("continuum-tapfinger/1"), "{e}");
    let e = with(&[
        "--policies",
        "tapfinger[coin]:models/full-edge-tapfinger.tapfinger",
    ]);
    assert!(
        e.contains("uniform-prior") && e.contains("first-claim"),
        "{e}"
    );
    let e = with(&["--policies", "greedy-pull", "--patience", "0"]);
    assert!(e.contains("--patience") && e.contains("at least 1"), "{e}");
    let e = with(&["--policies", "greedy-pull", "--pull-step-ms", "-3"]);
    assert!(e.contains("--pull-step-ms"), "{e}");
}

#[test]
fn tapfinger_trains_and_its_checkpoint_runs() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("tf.yaml");
    std::fs::write(
        &cfg,
        "method: tapfinger\nepisodes: 2\nepisode_s: 5\nhidden: 8\nlambda_range: [40, 40]\n",
    )
    .unwrap();
    let ck = dir.path().join("small.tapfinger");
    let (c, k) = (cfg.to_str().unwrap(), ck.to_str().unwrap());
    ok(&[
        "train",
        "topologies/full-edge.yaml",
        "--config",
        c,
        "--out",
        k,
    ]);
    for f in [
        "small.tapfinger",
        "small.training.csv",
        "small.training_curve.svg",
    ] {
        assert!(dir.path().join(f).exists(), "{f}");
    }
    let csv = std::fs::read_to_string(dir.path().join("small.training.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
    // Training moves the weights: the same run stopped after one episode has others.
    let cfg1 = dir.path().join("tf1.yaml");
    std::fs::write(
        &cfg1,
        "method: tapfinger\nepisodes: 1\nepisode_s: 5\nhidden: 8\nlambda_range: [40, 40]\n",
    )
    .unwrap();
    let ck1 = dir.path().join("one.tapfinger");
    ok(&[
        "train",
        "topologies/full-edge.yaml",
        "--config",
        cfg1.to_str().unwrap(),
        "--out",
        ck1.to_str().unwrap(),
    ]);
    let weights = |p: &std::path::Path| {
        let c = continuum_infer::tapfinger::TapCheckpoint::load(p).unwrap();
        c.weights
            .iter()
            .flat_map(|(_, w)| w.data.clone())
            .collect::<Vec<f32>>()
    };
    assert!(
        weights(&ck) != weights(&ck1),
        "2 episodes left the weights of 1: training did not change the network"
    );
    let row = format!("tapfinger:{k}");
    let v = json(&[
        "compare",
        "topologies/co-dc-cloud.yaml",
        "--duration",
        "5",
        "--policies",
        &format!("{row},greedy-pull"),
    ]);
    let rows = results(&v);
    assert_eq!(rows[0]["policy"], row.as_str());
    // The checkpoint's agents claimed the streams: their row is not greedy-pull's.
    let greedy = &rows[1];
    assert_eq!(greedy["policy"], "greedy-pull");
    let n = |r: &serde_json::Value, k: &str| r[k].as_u64().unwrap();
    assert_eq!(n(&rows[0], "offered"), n(greedy, "offered"));
    let figures = |r: &serde_json::Value| {
        (
            n(r, "success"),
            n(r, "failure"),
            n(r, "rejected"),
            r["latency_mean_ms"].as_f64().unwrap(),
        )
    };
    assert_ne!(
        figures(&rows[0]),
        figures(greedy),
        "the trained agents did what greedy-pull does"
    );
    // A config field out of range names the field and the file.
    std::fs::write(&cfg, "method: tapfinger\nclip: 2\n").unwrap();
    let e = fails(&[
        "train",
        "topologies/full-edge.yaml",
        "--config",
        c,
        "--out",
        k,
    ]);
    assert!(e.contains("tf.yaml") && e.contains("clip"), "{e}");
}

/// A checkpoint of the rules' features trains and runs, as its most probable choices and drawn
/// from its policy (`sample`), which decide otherwise; every report splits its rejections into
/// those at binding and those at a worker.
#[test]
fn a_rules_checkpoint_runs_most_probable_and_sampled() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("rules.yaml");
    std::fs::write(
        &cfg,
        "method: tapfinger\nfeatures: rules\nepisodes: 1\nepisode_s: 5\nhidden: 8\n\
         lambda_range: [40, 40]\n",
    )
    .unwrap();
    let ck = dir.path().join("rules.tapfinger");
    let k = ck.to_str().unwrap();
    ok(&[
        "train",
        "topologies/full-edge.yaml",
        "--config",
        cfg.to_str().unwrap(),
        "--out",
        k,
    ]);
    let meta = continuum_infer::tapfinger::TapCheckpoint::load(&ck)
        .unwrap()
        .meta;
    assert_eq!(
        meta.shape.features,
        continuum_infer::tapfinger::features::TapFeatures::Rules
    );
    let v = json(&[
        "compare",
        "topologies/co-dc-cloud.yaml",
        "--lambda",
        "80",
        "--duration",
        "10",
        "--policies",
        &format!("tapfinger:{k},tapfinger[sample]:{k}"),
    ]);
    let rows = results(&v);
    let n = |r: &serde_json::Value, k: &str| r[k].as_u64().unwrap();
    for r in rows {
        assert_eq!(
            n(r, "rejected"),
            n(r, "rejected_at_binding") + n(r, "rejected_at_worker"),
            "{r}"
        );
    }
    assert_eq!(n(&rows[0], "offered"), n(&rows[1], "offered"));
    assert_ne!(
        (n(&rows[0], "success"), n(&rows[0], "rejected")),
        (n(&rows[1], "success"), n(&rows[1], "rejected")),
        "drawing from the policy decided as the most probable choices do"
    );
}
