//! Ape-X training from the command line: a seed gives one checkpoint whatever the thread count
//! and whether the actors run on this process's threads or as separate `--apex-actor` processes
//! driven through `--apex-learner`'s protocol (what the Ray driver does); bad use fails cleanly.

use crate::cli_support::{continuum, fails, fixture};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The tiny training config plus `extra` lines (replacing `episodes`), written under `dir`.
fn config(dir: &Path, extra: &str) -> PathBuf {
    let base = std::fs::read_to_string(fixture("tiny-dqn.yaml")).unwrap();
    let kept: Vec<&str> = base
        .lines()
        .filter(|l| !l.starts_with("episodes:"))
        .collect();
    let p = dir.join("apex.yaml");
    std::fs::write(&p, format!("{}\nepisodes: 5\n{extra}\n", kept.join("\n"))).unwrap();
    p
}

/// `train` on the tiny scenario with `cfg` and seed 3, then `extra`.
fn train_args(cfg: &Path, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "train",
        &fixture("tiny-topology.yaml"),
        "--profiles",
        &fixture("tiny-profiles.yaml"),
        "--workload",
        &fixture("tiny-workload.yaml"),
        "--config",
        cfg.to_str().unwrap(),
        "--seed",
        "3",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn ok(args: &[String]) {
    let o = continuum(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Runs the learner with `--apex-learner`, each asked-for episode as its own `--apex-actor`
/// process; returns the rounds it asked for.
fn drive(cfg: &Path, out: &Path, dir: &Path) -> usize {
    let mut learner = Command::new(env!("CARGO_BIN_EXE_continuum"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(train_args(
            cfg,
            &["--apex-learner", "--out", out.to_str().unwrap()],
        ))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = learner.stdin.take().unwrap();
    let lines = BufReader::new(learner.stdout.take().unwrap()).lines();
    let mut rounds = 0;
    for line in lines {
        let msg: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
        if msg["done"] == true {
            break;
        }
        rounds += 1;
        let weights = msg["weights"].as_str().unwrap().to_string();
        let mut files = Vec::new();
        for job in msg["jobs"].as_array().unwrap() {
            let (e, a) = (job[0].as_u64().unwrap(), job[1].as_u64().unwrap());
            let f = dir.join(format!("episode-{e}.bin"));
            ok(&train_args(
                cfg,
                &[
                    "--apex-actor",
                    &format!("{e}:{a}"),
                    "--weights",
                    &weights,
                    "--out",
                    f.to_str().unwrap(),
                ],
            ));
            files.push(f);
        }
        writeln!(input, "{}", serde_json::to_string(&files).unwrap()).unwrap();
    }
    assert!(learner.wait().unwrap().success());
    rounds
}

#[test]
fn ape_x_gives_one_checkpoint_on_any_thread_count_and_with_actors_in_other_processes() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), "apex: {actors: 2}");
    let out = |n: &str| dir.path().join(format!("{n}.dqn"));
    let one = out("one");
    let one = one.to_str().unwrap();
    ok(&train_args(
        &cfg,
        &["--threads", "1", "--snapshot-every", "2", "--out", one],
    ));
    ok(&train_args(
        &cfg,
        &["--threads", "2", "--out", out("two").to_str().unwrap()],
    ));
    let bytes = |n: &str| std::fs::read(out(n)).unwrap();
    assert_eq!(
        bytes("one"),
        bytes("two"),
        "the thread count or snapshots changed it"
    );
    // Snapshots after the rounds that reach 2 and 4 episodes, each a network `compare` runs.
    for n in ["one.at-2", "one.at-4"] {
        let o = continuum(&[
            "compare",
            &fixture("tiny-topology.yaml"),
            "--profiles",
            &fixture("tiny-profiles.yaml"),
            "--workload",
            &fixture("tiny-workload.yaml"),
            "--policies",
            "closest",
            "--agent",
            out(n).to_str().unwrap(),
            "--duration",
            "10",
        ]);
        assert!(
            o.status.success(),
            "{n}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    assert!(!out("one.at-5").exists() && !out("one.at-6").exists());
    // Five episodes by two actors: rounds of 2, 2 and 1.
    assert_eq!(drive(&cfg, &out("stdio"), dir.path()), 3);
    assert_eq!(
        bytes("one"),
        bytes("stdio"),
        "actors in other processes changed it"
    );
    let csv = std::fs::read_to_string(dir.path().join("one.apex.csv")).unwrap();
    let episodes: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap())
        .collect();
    assert_eq!(episodes, ["2", "2", "1", "0"], "{csv}");
    // The episode log: actor 0 explores with ε 0.4, actor 1 with 0.4^8.
    let log = std::fs::read_to_string(dir.path().join("one.training.csv")).unwrap();
    let eps: Vec<&str> = log
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(7).unwrap())
        .collect();
    assert_eq!(eps, ["0.4000", "0.0007", "0.4000", "0.0007", "0.4000"]);
}

#[test]
fn ape_x_misuse_fails_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let plain = fixture("tiny-dqn.yaml");
    let o = dir.path().join("x.dqn");
    let o = o.to_str().unwrap();
    let args = |cfg: &str, extra: &[&str]| {
        let mut a = train_args(Path::new(cfg), extra);
        a.extend(["--out".to_string(), o.to_string()]);
        a
    };
    let run = |a: Vec<String>| fails(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(run(args(&plain, &["--apex-learner"])).contains("`apex:` block"));
    let cfg = config(dir.path(), "apex: {actors: 2}");
    let c = cfg.to_str().unwrap();
    let w = dir.path().join("w.safetensors");
    std::fs::write(&w, b"not weights").unwrap();
    let w = w.to_str().unwrap();
    let err = run(args(c, &["--apex-actor", "two", "--weights", w]));
    assert!(err.contains("expected `<episode>:<actor>`"), "{err}");
    let err = run(args(c, &["--apex-actor", "0:2", "--weights", w]));
    assert!(err.contains("actor 2 of a config with 2 actors"), "{err}");
    let err = run(args(c, &["--apex-actor", "0:1", "--weights", w]));
    assert!(err.contains("--weights"), "{err}");
    // A learner whose driver goes away says so.
    let err = run(args(c, &["--apex-learner"]));
    assert!(
        err.contains("standard input closed before round 0"),
        "{err}"
    );
    let bad = config(dir.path(), "apex: {actors: 0}");
    let err = run(args(bad.to_str().unwrap(), &[]));
    assert!(err.contains("apex") && err.contains("actors"), "{err}");
    let pg = config(
        dir.path(),
        "apex: {actors: 2}\nalgorithm: reinforce\ncredit: counterfactual",
    );
    let err = run(args(pg.to_str().unwrap(), &[]));
    assert!(
        err.contains("Ape-X needs `algorithm: dqn` or `iqn`"),
        "{err}"
    );
}
