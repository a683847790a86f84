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

const TINY: [&str; 4] = [
    "--profiles",
    "tests/fixtures/tiny-profiles.yaml",
    "--workload",
    "tests/fixtures/tiny-workload.yaml",
];

fn train_tiny(out: &Path) {
    let o = continuum(
        &[
            &["train", "tests/fixtures/tiny-topology.yaml"],
            &TINY[..],
            &[
                "--config",
                "tests/fixtures/tiny-dqn.yaml",
                "--seed",
                "3",
                "--out",
                out.to_str().unwrap(),
            ],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn train_then_compare_with_the_agent_and_the_oracle() {
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("tiny.dqn");
    train_tiny(&ck);
    assert!(ck.exists());
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
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["policy"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["closest", "random", "dqn", "oracle"]);
    for x in r["results"].as_array().unwrap() {
        let c = |k: &str| x[k].as_u64().unwrap();
        assert_eq!(c("offered"), c("success") + c("failure") + c("rejected"));
        assert!(c("offered") > 0);
    }
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
    assert!(err.contains("not a continuum DQN checkpoint"), "{err}");
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
