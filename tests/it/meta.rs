//! The meta-policy from the command line: training writes a checkpoint that `compare --agent`
//! runs; `--oracle` adds its row; a wrong checkpoint fails cleanly.

use std::path::Path;
use std::process::{Command, Output};

fn continuum(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_continuum"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("runs")
}

/// The JSON report a successful `compare --format json` printed.
fn json_report(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The report's row names, in order.
fn row_names(r: &serde_json::Value) -> Vec<&str> {
    r["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["policy"].as_str().unwrap())
        .collect()
}

const TINY: [&str; 4] = [
    "--profiles",
    "tests/fixtures/tiny-profiles.yaml",
    "--workload",
    "tests/fixtures/tiny-workload.yaml",
];

fn train_tiny(out: &Path) -> Output {
    train_tiny_on("tests/fixtures/tiny-workload.yaml", out)
}

fn train_tiny_on(workload: &str, out: &Path) -> Output {
    train_tiny_with("tests/fixtures/tiny-dqn.yaml", workload, out)
}

fn train_tiny_with(config: &str, workload: &str, out: &Path) -> Output {
    let o = continuum(
        &[
            &["train", "tests/fixtures/tiny-topology.yaml"],
            &[
                "--profiles",
                "tests/fixtures/tiny-profiles.yaml",
                "--workload",
                workload,
            ][..],
            &[
                "--config",
                config,
                "--seed",
                "3",
                "--progress",
                "--out",
                out.to_str().unwrap(),
            ],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

#[test]
fn train_then_compare_with_the_agent_and_the_oracle() {
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("tiny.dqn");
    let o = train_tiny(&ck);
    assert!(ck.exists());
    // Without a terminal, `--progress` asks for progress lines; validation says what it chose.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("episodes 3/3"), "{err}");
    assert!(err.contains("fallback table"), "{err}");
    let csv = std::fs::read_to_string(dir.path().join("tiny.training.csv")).unwrap();
    assert!(csv.starts_with("episode,lambda,seed"), "{csv}");
    assert_eq!(csv.lines().count(), 1 + 3);
    let svg = std::fs::read_to_string(dir.path().join("tiny.training_curve.svg")).unwrap();
    assert!(svg.contains("<svg"));
    let o = continuum(
        &[
            &["compare", "tests/fixtures/tiny-topology.yaml"],
            &TINY[..],
            &[
                "--duration",
                "30",
                "--policies",
                "closest,random",
                "--agent",
                ck.to_str().unwrap(),
                "--oracle",
                "--format",
                "json",
            ],
        ]
        .concat(),
    );
    let r = json_report(&o);
    let names = row_names(&r);
    assert_eq!(names, ["closest", "random", "dqn", "oracle"]);
    for x in r["results"].as_array().unwrap() {
        let c = |k: &str| x[k].as_u64().unwrap();
        assert_eq!(c("offered"), c("success") + c("failure") + c("rejected"));
        assert!(c("offered") > 0);
    }
    // The agent's row says which actions it took: shares per class that add up to 1.
    let shares = &r["results"][2]["actions"]["share"];
    assert_eq!(shares.as_array().unwrap().len(), 1);
    let total: f64 = shares[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .sum();
    assert!((total - 1.0).abs() < 1e-9, "{shares}");
    assert!(
        r["lambda"].is_number() && r["lambda_profile"].is_string(),
        "{r}"
    );
}

/// With two application classes the agent has two heads; a per-class table written by
/// `continuum table` is a row of `compare`, and the oracle searches per class.
#[test]
fn per_class_agent_table_and_oracle() {
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("two.dqn");
    let workload = "tests/fixtures/tiny-workload-two-apps.yaml";
    train_tiny_on(workload, &ck);
    let table = dir.path().join("table.yaml");
    let o = continuum(&[
        "table",
        "tests/fixtures/tiny-topology.yaml",
        "--profiles",
        "tests/fixtures/tiny-profiles.yaml",
        "--workload",
        workload,
        "--duration",
        "30",
        "--seeds",
        "1,2",
        "--policies",
        "closest,farthest",
        "--out",
        table.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&table).unwrap();
    assert!(text.contains("tight:") && text.contains("loose:"), "{text}");
    let per_class = format!("per-class:{}", table.display());
    let o = continuum(&[
        "compare",
        "tests/fixtures/tiny-topology.yaml",
        "--profiles",
        "tests/fixtures/tiny-profiles.yaml",
        "--workload",
        workload,
        "--duration",
        "30",
        "--policies",
        &format!("closest,{per_class}"),
        "--agent",
        ck.to_str().unwrap(),
        "--oracle",
        "--format",
        "json",
    ]);
    let r = json_report(&o);
    let names = row_names(&r);
    assert_eq!(names, ["closest", per_class.as_str(), "dqn", "oracle"]);
    assert_eq!(
        r["results"][2]["actions"]["classes"],
        serde_json::json!(["tight", "loose"])
    );
    // A broken table file is refused with its field.
    std::fs::write(
        &table,
        "classes: {tight: nearest}\nbucket_map: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]\n",
    )
    .unwrap();
    let o = continuum(&[
        "compare",
        "tests/fixtures/tiny-topology.yaml",
        "--profiles",
        "tests/fixtures/tiny-profiles.yaml",
        "--duration",
        "5",
        "--policies",
        &per_class,
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("unknown policy `nearest`"), "{err}");
}

#[test]
fn training_is_reproducible_for_a_seed() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.dqn"), dir.path().join("b.dqn"));
    train_tiny(&a);
    train_tiny(&b);
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
}

#[test]
fn a_wrong_checkpoint_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.dqn");
    std::fs::write(&junk, b"definitely not a checkpoint").unwrap();
    let o = continuum(&[
        "compare",
        "topologies/full-edge.yaml",
        "--duration",
        "5",
        "--agent",
        junk.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("not a continuum checkpoint"), "{err}");
    // A checkpoint trained on the tiny topology does not fit full-edge.
    let ck = dir.path().join("tiny.dqn");
    train_tiny(&ck);
    let o = continuum(&[
        "compare",
        "topologies/full-edge.yaml",
        "--duration",
        "5",
        "--policies",
        "closest",
        "--agent",
        ck.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("incompatible checkpoint"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let o = continuum(&[
        "compare",
        "topologies/full-edge.yaml",
        "--duration",
        "5",
        "--agent",
        "/nonexistent/x.dqn",
    ]);
    assert_eq!(o.status.code(), Some(1));
}

/// A checkpoint runs as its fallback tables alone and as its network alone, each a row of its
/// own.
#[test]
fn a_checkpoint_runs_as_its_tables_and_as_its_network() {
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("tiny.dqn");
    train_tiny(&ck);
    let o = continuum(
        &[
            &["compare", "tests/fixtures/tiny-topology.yaml"],
            &TINY[..],
            &[
                "--duration",
                "30",
                "--policies",
                "closest",
                "--agent-tables",
                ck.to_str().unwrap(),
                "--agent-network",
                ck.to_str().unwrap(),
                "--format",
                "json",
            ],
        ]
        .concat(),
    );
    let r = json_report(&o);
    assert_eq!(row_names(&r), ["closest", "tables:tiny", "network:tiny"]);
    // The same clients in every row; both agent rows report the actions they took.
    let offered: Vec<u64> = (0..3)
        .map(|i| r["results"][i]["offered"].as_u64().unwrap())
        .collect();
    assert!(
        offered[0] > 0 && offered.iter().all(|&x| x == offered[0]),
        "{offered:?}"
    );
    for i in 1..3 {
        let total: f64 = r["results"][i]["actions"]["share"][0]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .sum();
        assert!((total - 1.0).abs() < 1e-9);
    }
    // The tables and the network are two different policies: they do not run the same
    // actions in the same proportions.
    let shares = |i: usize| r["results"][i]["actions"]["share"].clone();
    assert_ne!(
        shares(1),
        shares(2),
        "the tables' and the network's rows took the same actions: {}",
        r["results"]
    );
    // The main job's split of the meta-policy's gain: the meta-policy, its tables alone and the
    // network over them, in pp against the best rule of the run, from the rows' own figures.
    let o = compare_tiny_agent(
        &ck,
        &["--duration", "30", "--agent-tables", ck.to_str().unwrap()],
    );
    let text = String::from_utf8_lossy(&o.stdout);
    let o = compare_tiny_agent(
        &ck,
        &[
            "--duration",
            "30",
            "--agent-tables",
            ck.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    let r = json_report(&o);
    let success = |name: &str| {
        r["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["policy"] == name)
            .unwrap_or_else(|| panic!("row {name}"))["success_ratio"]
            .as_f64()
            .unwrap()
    };
    let (rule, dqn, tables) = (success("closest"), success("dqn"), success("tables:tiny"));
    let pp = |x: f64| format!("{:+.2} pp", 100.0 * x);
    let block = &text[text
        .find("learned default against the best rule")
        .unwrap_or_else(|| panic!("no gain block in:\n{text}"))..];
    let line = |label: &str| {
        block
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("no `{label}` line in:\n{block}"))
            .to_string()
    };
    assert!(
        block.contains(&format!(
            "best rule of this run (closest {:.2}%)",
            100.0 * rule
        )),
        "{block}"
    );
    assert!(line("dqn ").contains(&pp(dqn - rule)), "{text}");
    assert!(line("tables:tiny").contains(&pp(tables - rule)), "{text}");
    assert!(
        line("network over tables").contains(&pp(dqn - tables)),
        "{text}"
    );
}

#[test]
fn training_refuses_a_bad_capacity_scale() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.dqn");
    let o = continuum(&[
        "train",
        "tests/fixtures/tiny-topology.yaml",
        "--config",
        "tests/fixtures/tiny-dqn.yaml",
        "--capacity-scale",
        "0",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--capacity-scale") && err.contains("> 0"),
        "{err}"
    );
    assert!(!out.exists());
}

#[test]
fn capacity_spread_and_per_level_margins_train_and_load() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("robust.dqn");
    let o = train_tiny_with(
        "tests/fixtures/tiny-dqn-robust.yaml",
        "tests/fixtures/tiny-workload.yaml",
        &out,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    // Both levels report a margin, and with `always` the set is kept.
    let line = err
        .lines()
        .find(|l| l.starts_with("margins per level"))
        .unwrap_or_else(|| panic!("no per-level margins in:\n{err}"));
    assert_eq!(line.matches("λ ").count(), 2, "{line}");
    assert!(line.ends_with(": kept"), "{line}");
    // The checkpoint loads and runs, under another capacity too.
    let run = |scale: &[&str]| {
        let o = continuum(
            &[
                &["compare", "tests/fixtures/tiny-topology.yaml"][..],
                &TINY[..],
                &[
                    "--policies",
                    "closest",
                    "--agent",
                    out.to_str().unwrap(),
                    "--duration",
                    "30",
                    "--format",
                    "json",
                ],
                scale,
            ]
            .concat(),
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        json_report(&o)
    };
    let scaled = run(&["--capacity-scale", "0.7"]);
    assert_eq!(row_names(&scaled), ["closest", "dqn"]);
    // Workers 30 % slower than their profiles: the same clients, answered later (and none
    // more in time): the scale took effect.
    let full = run(&[]);
    for i in 0..2 {
        let (a, b) = (&full["results"][i], &scaled["results"][i]);
        assert_eq!(a["offered"], b["offered"]);
        assert!(
            b["success"].as_u64() <= a["success"].as_u64()
                && b["latency_mean_ms"].as_f64() > a["latency_mean_ms"].as_f64(),
            "--capacity-scale 0.7 did not slow {}: {a} vs {b}",
            a["policy"]
        );
    }
}

#[test]
fn training_refuses_a_bad_capacity_spread() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("bad.yaml");
    std::fs::write(&cfg, "capacity_spread: 1.5\n").unwrap();
    let out = dir.path().join("x.dqn");
    let o = continuum(&[
        "train",
        "tests/fixtures/tiny-topology.yaml",
        "--config",
        cfg.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("capacity_spread"), "{err}");
    assert!(!out.exists());
}

/// A checkpoint trained on the tiny scenario with `tests/fixtures/tiny-dqn.yaml` plus the line
/// `extra`, under `dir`.
fn train_tiny_plus(dir: &Path, extra: &str) -> std::path::PathBuf {
    let cfg = dir.join("plus.yaml");
    let base = std::fs::read_to_string("tests/fixtures/tiny-dqn.yaml").unwrap();
    std::fs::write(&cfg, format!("{base}\n{extra}\n")).unwrap();
    let out = dir.join("plus.dqn");
    train_tiny_with(
        cfg.to_str().unwrap(),
        "tests/fixtures/tiny-workload.yaml",
        &out,
    );
    out
}

/// `compare` on the tiny scenario: `closest` and the checkpoint `ck`, with `extra` options.
fn compare_tiny_agent(ck: &Path, extra: &[&str]) -> Output {
    let o = continuum(
        &[
            &["compare", "tests/fixtures/tiny-topology.yaml"][..],
            &TINY[..],
            &["--policies", "closest", "--agent", ck.to_str().unwrap()],
            extra,
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

#[test]
fn a_checkpoint_trained_under_a_queue_bound_says_so_when_run_under_another() {
    let dir = tempfile::tempdir().unwrap();
    let out = train_tiny_plus(dir.path(), "queue_bound: unbounded");
    let run = |bound: &str| {
        let o = compare_tiny_agent(&out, &["--duration", "10", "--queue-bound", bound]);
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let warned = run("deadline");
    assert!(
        warned.contains("trained with the workers' queue bound `unbounded`")
            && warned.contains("runs under `deadline`"),
        "{warned}"
    );
    assert!(!run("unbounded").contains("warning"));
}

#[test]
fn an_implicit_quantile_network_trains_saves_and_decides() {
    let dir = tempfile::tempdir().unwrap();
    let out = train_tiny_plus(dir.path(), "algorithm: iqn");
    let o = compare_tiny_agent(&out, &["--duration", "20", "--format", "json"]);
    assert_eq!(row_names(&json_report(&o)), ["closest", "dqn"]);
}
