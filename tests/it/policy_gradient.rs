//! Policy-gradient training, adaptation and meta-training from the command line: the
//! `reinforce` algorithms write checkpoints `compare --agent` runs, reproducibly; `--init`
//! adapts a compatible checkpoint and refuses another; `meta-train` writes an initialisation;
//! the DeepRM reproduction trains, evaluates and refuses bad input.

use crate::cli_support::{continuum, stderr, stdout};
use std::path::Path;
use std::process::Output;

/// Requires success; the standard output.
fn succeeded(o: &Output) -> String {
    assert!(o.status.success(), "{}", stderr(o));
    stdout(o)
}

/// Requires failure; the standard error.
fn failed(o: &Output) -> String {
    assert!(!o.status.success(), "expected a failure");
    stderr(o)
}

/// tests/fixtures/tiny-dqn.yaml with `extra` appended.
fn config(dir: &Path, name: &str, extra: &str) -> String {
    let base = std::fs::read_to_string("tests/fixtures/tiny-dqn.yaml").unwrap();
    let p = dir.join(name);
    std::fs::write(&p, format!("{base}\n{extra}\n")).unwrap();
    p.to_str().unwrap().to_string()
}

fn train(topology: &str, cfg: &str, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "train",
        topology,
        "--profiles",
        "tests/fixtures/tiny-profiles.yaml",
        "--workload",
        "tests/fixtures/tiny-workload.yaml",
        "--config",
        cfg,
        "--seed",
        "3",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    continuum(&args)
}

#[test]
fn reinforce_trains_reproducibly_and_its_checkpoint_runs() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), "pg.yaml", "algorithm: reinforce-improved");
    let (a, b) = (dir.path().join("a.dqn"), dir.path().join("b.dqn"));
    let topo = "tests/fixtures/tiny-topology.yaml";
    succeeded(&train(topo, &cfg, &a, &["--threads", "1"]));
    succeeded(&train(topo, &cfg, &b, &["--threads", "2"]));
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let report = succeeded(&continuum(&[
        "compare",
        topo,
        "--profiles",
        "tests/fixtures/tiny-profiles.yaml",
        "--workload",
        "tests/fixtures/tiny-workload.yaml",
        "--duration",
        "30",
        "--policies",
        "closest,tetris",
        "--agent",
        a.to_str().unwrap(),
        "--format",
        "json",
    ]));
    let r: serde_json::Value = serde_json::from_str(&report).unwrap();
    let names: Vec<&str> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["policy"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["closest", "tetris", "dqn"]);
    // REINFORCE needs every action's value: temporal-difference credit is refused.
    let bad = config(dir.path(), "bad.yaml", "algorithm: reinforce\ncredit: td");
    let e = failed(&train(topo, &bad, &dir.path().join("c.dqn"), &[]));
    assert!(
        e.contains("algorithm") && e.contains("counterfactual"),
        "{e}"
    );
}

#[test]
fn init_adapts_a_compatible_checkpoint_and_refuses_another() {
    let dir = tempfile::tempdir().unwrap();
    let topo = "tests/fixtures/tiny-topology.yaml";
    let fixed = config(
        dir.path(),
        "fixed.yaml",
        "algorithm: reinforce-improved\nstate_workers: 2",
    );
    let src = dir.path().join("src.dqn");
    succeeded(&train(topo, &fixed, &src, &[]));
    let adapted = dir.path().join("adapted.dqn");
    succeeded(&train(
        topo,
        &fixed,
        &adapted,
        &["--init", src.to_str().unwrap(), "--budget", "1e4"],
    ));
    assert!(adapted.exists());
    // The adapted run starts from the source's weights: the same run from fresh weights (same
    // seed, budget and configuration; training is deterministic) writes another checkpoint.
    let fresh = dir.path().join("fresh.dqn");
    succeeded(&train(topo, &fixed, &fresh, &["--budget", "1e4"]));
    assert!(
        std::fs::read(&adapted).unwrap() != std::fs::read(&fresh).unwrap(),
        "the adapted checkpoint equals one trained from fresh weights: --init was not applied"
    );
    let other = config(dir.path(), "other.yaml", "algorithm: reinforce-improved");
    let e = failed(&train(
        topo,
        &other,
        &dir.path().join("x.dqn"),
        &["--init", src.to_str().unwrap()],
    ));
    assert!(
        e.contains("incompatible checkpoint") && e.contains("state_workers"),
        "{e}"
    );
}

#[test]
fn meta_train_writes_an_initialisation_to_adapt_from() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        dir.path(),
        "inner.yaml",
        "algorithm: reinforce-improved\nstate_workers: 4",
    );
    let meta = dir.path().join("meta.yaml");
    std::fs::write(
        &meta,
        "meta_iterations: 1\ntasks: 2\ntask_budget_queries: 1.0e3\nantennas: [2, 3]\nantennas_per_co: [1, 2]\ncos_per_rdc: [1, 1]\n",
    )
    .unwrap();
    let out = dir.path().join("meta.dqn");
    succeeded(&continuum(&[
        "meta-train",
        "--config",
        &cfg,
        "--meta",
        meta.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]));
    let log = std::fs::read_to_string(dir.path().join("meta.meta.csv")).unwrap();
    assert_eq!(log.lines().count(), 2, "{log}");
    let line: Vec<&str> = log.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(line[0], "0", "{log}");
    let success: f64 = line[1].parse().unwrap();
    assert!((0.0..=1.0).contains(&success), "{log}");
    assert_eq!(line[3].matches("meta-task-0-").count(), 2, "{log}");
    // The written initialisation is θ moved towards the inner runs' weights: with half the
    // meta step (everything else equal) it lies elsewhere. Were the outer step a no-op, both
    // would be the seed's initial weights and the files equal (the metadata holds the inner
    // config only).
    let half = dir.path().join("half.yaml");
    std::fs::write(
        &half,
        std::fs::read_to_string(&meta).unwrap() + "meta_step: 0.5\n",
    )
    .unwrap();
    let half_out = dir.path().join("half.dqn");
    succeeded(&continuum(&[
        "meta-train",
        "--config",
        &cfg,
        "--meta",
        half.to_str().unwrap(),
        "--out",
        half_out.to_str().unwrap(),
    ]));
    assert!(
        std::fs::read(&out).unwrap() != std::fs::read(&half_out).unwrap(),
        "meta step 1 and 0.5 wrote the same initialisation: θ did not move"
    );
    // Without a fixed state size there is nothing to share between topologies.
    let loose = config(dir.path(), "loose.yaml", "algorithm: reinforce-improved");
    let e = failed(&continuum(&[
        "meta-train",
        "--config",
        &loose,
        "--meta",
        meta.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]));
    assert!(e.contains("state_workers"), "{e}");
}

#[test]
fn deeprm_trains_evaluates_and_refuses_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("deeprm.yaml");
    std::fs::write(
        &cfg,
        "env: {simu_len: 10}\njobsets: 2\nrollouts: 3\neval_every: 1\neval_jobsets: 2\n",
    )
    .unwrap();
    let ck = dir.path().join("d.deeprm");
    let args = |out: &Path, extra: &[&str]| -> Output {
        let iterations = if extra.contains(&"--iterations") {
            &[][..]
        } else {
            &["--iterations", "2"][..]
        };
        let mut v = vec!["deeprm", "train", "--config", cfg.to_str().unwrap()];
        v.extend_from_slice(iterations);
        v.extend_from_slice(&["--out", out.to_str().unwrap()]);
        v.extend_from_slice(extra);
        continuum(&v)
    };
    succeeded(&args(&ck, &["--threads", "1"]));
    let again = dir.path().join("e.deeprm");
    succeeded(&args(&again, &["--threads", "2"]));
    assert_eq!(std::fs::read(&ck).unwrap(), std::fs::read(&again).unwrap());
    // Training moves the weights: one iteration fewer (same seed, same start) gives others.
    let shorter = dir.path().join("f.deeprm");
    succeeded(&args(&shorter, &["--threads", "1", "--iterations", "1"]));
    let weights = |p: &Path| continuum_deeprm::PgCheckpoint::load(p).unwrap().weights;
    assert!(
        weights(&ck) != weights(&shorter),
        "2 iterations left the weights of 1: training did not change the network"
    );
    assert!(dir.path().join("d.training.csv").exists());
    let json = dir.path().join("eval.json");
    let table = succeeded(&continuum(&[
        "deeprm",
        "eval",
        "--agent",
        &format!("agent={}", ck.display()),
        "--loads",
        "0.5",
        "--seeds",
        "101,102",
        "--jobsets",
        "2",
        "--json",
        json.to_str().unwrap(),
    ]));
    for row in ["tetris", "sjf", "random", "random-fit", "agent"] {
        assert!(table.contains(row), "{table}");
    }
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = r["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 5 * 2);
    // Every scheduler ran the same held-out jobs, and the agent's row is its own run (its
    // network's choices), not a copy of a heuristic's.
    for seed in [101, 102] {
        let of = |who: &str| -> &serde_json::Value {
            let row = rows
                .iter()
                .find(|x| x["scheduler"] == who && x["seed"] == seed)
                .unwrap_or_else(|| panic!("no row {who} at seed {seed}: {r}"));
            &row["figures"]
        };
        let agent = of("agent");
        assert!(agent["jobs"].as_u64().unwrap() > 0, "{agent}");
        assert!(agent["mean_slowdown"].as_f64().unwrap() >= 1.0, "{agent}");
        // Not the authors' random: an agent trained for two iterations is still close to uniform
        // over every action, which is what that random is, and both draw from the jobset's
        // evaluation stream; they may well take the same actions on these 5 jobs.
        assert_eq!(of("random")["jobs"], agent["jobs"]);
        for h in ["tetris", "sjf", "random-fit"] {
            let f = of(h);
            assert_eq!(
                f["jobs"], agent["jobs"],
                "{h} at seed {seed}: {f} vs {agent}"
            );
            assert_ne!(f, agent, "the agent's figures are {h}'s at seed {seed}");
        }
    }
    // M = 10 visible slots (the authors' experiments): the heuristics run there, an agent
    // trained with M = 5 is refused, and M = 0 is an error naming the option.
    let ten = dir.path().join("ten.json");
    let heuristics = |extra: &[&str]| {
        let mut v = vec![
            "deeprm",
            "eval",
            "--loads",
            "1.5",
            "--seeds",
            "101",
            "--jobsets",
            "2",
        ];
        v.extend_from_slice(extra);
        continuum(&v)
    };
    succeeded(&heuristics(&[
        "--slots",
        "10",
        "--tetris-sjf-knob",
        "auto",
        "--json",
        ten.to_str().unwrap(),
    ]));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&ten).unwrap()).unwrap();
    assert_eq!(r["slots"], 10);
    // Tetris★'s knob is tuned on the tuning seed's jobsets, once per load, and runs as a row.
    let knobs = r["tetris_sjf_knobs"].as_array().unwrap();
    assert_eq!(knobs.len(), 1, "{r}");
    assert_eq!(r["tune_seed"], 1);
    assert!(
        r["rows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["scheduler"] == "tetris-sjf")
    );
    let e = failed(&heuristics(&["--tetris-sjf-knob", "2"]));
    assert!(e.contains("--tetris-sjf-knob"), "{e}");
    let five = dir.path().join("five.json");
    succeeded(&heuristics(&["--json", five.to_str().unwrap()]));
    let f: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&five).unwrap()).unwrap();
    assert_eq!(f["slots"], 5);
    let sjf = |v: &serde_json::Value| {
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["scheduler"] == "sjf")
            .unwrap()["figures"]
            .clone()
    };
    assert_ne!(sjf(&r), sjf(&f), "M changed nothing");
    let agent = format!("agent={}", ck.display());
    let e = failed(&heuristics(&["--slots", "10", "--agent", &agent]));
    assert!(e.contains("another environment size"), "{e}");
    let e = failed(&heuristics(&["--slots", "0"]));
    assert!(e.contains("--slots") && e.contains("num_nw"), "{e}");
    let e = failed(&args(
        &dir.path().join("f.deeprm"),
        &["--objective", "speed"],
    ));
    assert!(e.contains("unknown objective `speed`"), "{e}");
    let e = failed(&args(&dir.path().join("f.deeprm"), &["--slots", "0"]));
    assert!(e.contains("--slots") && e.contains("num_nw"), "{e}");
    let wide = dir.path().join("wide.yaml");
    std::fs::write(&wide, "env: {simu_len: 10}\nhidden: 32\n").unwrap();
    let e = failed(&continuum(&[
        "deeprm",
        "train",
        "--config",
        wide.to_str().unwrap(),
        "--init",
        ck.to_str().unwrap(),
        "--out",
        dir.path().join("g.deeprm").to_str().unwrap(),
    ]));
    assert!(e.contains("incompatible checkpoint"), "{e}");
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "env: {num_nw: 5}\nrollout: 3\n").unwrap();
    let e = failed(&continuum(&[
        "deeprm",
        "train",
        "--config",
        bad.to_str().unwrap(),
        "--out",
        dir.path().join("h.deeprm").to_str().unwrap(),
    ]));
    assert!(e.contains("rollout") && e.contains(":2:"), "{e}");
}

/// Meta-training split into its units of work (as a distributed driver runs it): the plan,
/// each inner training alone, each outer step; the last writes the whole run's checkpoint and
/// log, bit for bit (the log's wall-clock column aside). Bad splits are refused.
#[test]
fn meta_train_split_into_inner_and_outer_steps_writes_the_same_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let base = [
        "meta-train",
        "--config",
        "tests/fixtures/tiny-meta-inner.yaml",
        "--meta",
        "tests/fixtures/tiny-meta.yaml",
        "--seed",
        "3",
    ];
    let run = |extra: &[&str]| -> String {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        succeeded(&continuum(&a))
    };
    run(&["--out", &d("whole.dqn")]);
    let plan: serde_json::Value = serde_json::from_str(&run(&["--plan"])).unwrap();
    assert_eq!(
        (plan["meta_iterations"].as_u64(), plan["tasks"].as_u64()),
        (Some(2), Some(2))
    );
    for it in 0..2 {
        let mut runs = Vec::new();
        for b in 0..2 {
            let p = d(&format!("inner-{it}-{b}.dqn"));
            let mut a = vec![
                "--inner".to_string(),
                format!("{it}:{b}"),
                "--out".into(),
                p.clone(),
            ];
            if it > 0 {
                a.extend(["--theta".into(), d(&format!("theta-{}.dqn", it - 1))]);
            }
            let summary = run(&a.iter().map(String::as_str).collect::<Vec<_>>());
            std::fs::write(dir.path().join(format!("inner-{it}-{b}.json")), summary).unwrap();
            runs.push(p);
        }
        let mut a = vec![
            "--outer".to_string(),
            it.to_string(),
            "--inner-runs".into(),
            runs.join(","),
            "--out".into(),
            d(&format!("theta-{it}.dqn")),
        ];
        if it > 0 {
            a.extend(["--theta".into(), d(&format!("theta-{}.dqn", it - 1))]);
        }
        run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    }
    let whole = std::fs::read(dir.path().join("whole.dqn")).unwrap();
    let split = std::fs::read(dir.path().join("theta-1.dqn")).unwrap();
    assert!(
        whole == split,
        "the split run's checkpoint differs from the whole run's"
    );
    let cols = |f: &str| -> Vec<String> {
        std::fs::read_to_string(dir.path().join(f))
            .unwrap()
            .lines()
            .map(|l| {
                let c: Vec<&str> = l.split(',').collect();
                format!("{},{},{}", c[0], c[1], c[3])
            })
            .collect()
    };
    assert_eq!(cols("whole.meta.csv"), cols("theta-1.meta.csv"));
    // θ is required after iteration 0 and refused at it; inner runs must match the iteration.
    let mut a = base.to_vec();
    a.extend(["--inner", "1:0", "--out", "x.dqn"]);
    assert!(failed(&continuum(&a)).contains("needs --theta"));
    let mut a = base.to_vec();
    a.extend(["--inner", "0:5", "--out", "x.dqn"]);
    assert!(failed(&continuum(&a)).contains("task 5 of 2"));
    let inner0 = format!("{},{}", d("inner-0-0.dqn"), d("inner-0-1.dqn"));
    let theta0 = d("theta-0.dqn");
    let mut a = base.to_vec();
    a.extend([
        "--outer",
        "1",
        "--theta",
        &theta0,
        "--inner-runs",
        &inner0,
        "--out",
        "x.dqn",
    ]);
    assert!(failed(&continuum(&a)).contains("expected 1:0"));
}
