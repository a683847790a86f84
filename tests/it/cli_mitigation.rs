//! End-to-end tests of the `continuum` binary's tail-latency mitigations: configurations, the
//! grid and its kinds, the per-job kinds' report, and bad mitigation arguments.

use crate::cli_support::*;
use serde_json::Value;

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
    let a = tiny(
        "compare",
        &[
            "--grid",
            "--policies",
            "closest",
            "--ratios",
            "0.8",
            "--kinds",
            "tdp,restart",
        ],
    );
    let v = json(&refs(&a));
    let names: Vec<&str> = results(&v)
        .iter()
        .map(|r| r["policy"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["closest", "closest+tdp@0.8", "closest+restart@0.8"]);
}

#[test]
fn per_job_mitigations_report_jobs_and_degraded_tasks() {
    // λ 80 overloads the tiny topology and an unbounded queue keeps what it cannot serve in
    // time: queues build, so tasks are unfinished when jobs trigger.
    let a = tiny(
        "compare",
        &[
            "--configs",
            "closest,closest+restart@0.7,closest+tdp@0.7",
            "--lambda",
            "80",
            "--queue-bound",
            "unbounded",
        ],
    );
    let v = json(&refs(&a));
    let count = |r: &Value, k: &str| r[k].as_u64().unwrap_or_else(|| panic!("{k} in {r}"));
    let rs = results(&v);
    let jobs = count(&rs[0]["jobs"], "jobs");
    assert!(jobs > 0, "{}", rs[0]);
    for r in rs {
        assert_eq!(
            count(r, "offered"),
            count(r, "success") + count(r, "failure") + count(r, "rejected") + count(r, "degraded"),
            "{r}"
        );
        // The jobs are the streams' windows, whatever happens to their tasks.
        assert_eq!(count(&r["jobs"], "jobs"), jobs, "{r}");
        assert!(count(&r["jobs"], "on_time") <= jobs, "{r}");
        for k in ["mean", "p50", "p95", "p99"] {
            assert!(r["job_tail_ms"][k].as_f64().unwrap() > 0.0, "{k} in {r}");
        }
        for a in r["per_app"].as_array().unwrap() {
            assert!(a["degraded"].as_u64().is_some(), "{a}");
        }
    }
    assert_eq!(count(&rs[0], "degraded"), 0);
    assert!(count(&rs[1]["jobs"], "triggered") > 0, "{}", rs[1]);
    let tdp = &rs[2];
    assert!(count(tdp, "degraded") > 0, "{tdp}");
    assert_eq!(
        count(tdp, "degraded"),
        count(&tdp["mitigation"], "degraded")
    );
}

#[test]
fn bad_configurations_are_refused() {
    for (args, word) in [
        (
            vec!["--configs", "closest+restrat@0.8"],
            "unknown mitigation kind `restrat`",
        ),
        (
            vec!["--configs", "closest+tdp@0"],
            "a share of the job's tasks",
        ),
        (vec!["--grid", "--kinds", "reissue,hedge"], "--kinds"),
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
