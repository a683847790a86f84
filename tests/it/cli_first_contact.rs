//! First contact: flags that could exhaust memory or time are refused up front, with the bound
//! and why; an output folder that cannot be written fails before the run, not after it; a
//! mistyped name gets the closest known one, and a wrong file the way to use it.

use crate::cli_support::{continuum, fails};
use std::time::{Duration, Instant};

const TINY: [&str; 6] = [
    "compare",
    "tests/fixtures/tiny-topology.yaml",
    "--profiles",
    "tests/fixtures/tiny-profiles.yaml",
    "--workload",
    "tests/fixtures/tiny-workload.yaml",
];

fn with<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = TINY.to_vec();
    a.extend(extra);
    a
}

/// Fails cleanly and at once (the refusal comes before any simulation).
fn refused(extra: &[&str]) -> String {
    let t = Instant::now();
    let e = fails(&with(extra));
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "{extra:?} took {:?} to be refused",
        t.elapsed()
    );
    e
}

#[test]
fn a_run_too_long_for_its_windows_is_refused_with_the_bound() {
    // 1e9 s once aborted allocating 409 600 000 000 bytes; 1e7 s ran for minutes.
    for d in ["1e9", "1e7"] {
        let e = refused(&["--duration", d, "--policies", "closest"]);
        assert!(
            e.contains("--duration: ") && e.contains("at most 200000") && e.contains("--window"),
            "{e}"
        );
    }
    // The bound counts windows (duration / --window), and the message says how many.
    let e = refused(&[
        "--duration",
        "2e6",
        "--window",
        "5",
        "--policies",
        "closest",
    ]);
    assert!(e.contains("400000 windows"), "{e}");
}

#[test]
fn thread_counts_outside_the_range_are_refused() {
    let e = refused(&["--threads", "0", "--policies", "closest"]);
    assert!(e.contains("--threads: expected at least 1, got 0"), "{e}");
    for n in ["100000", "2000"] {
        let e = refused(&["--threads", n, "--policies", "closest"]);
        assert!(e.contains("--threads: at most") && e.contains(n), "{e}");
    }
}

#[test]
fn the_flags_are_named_as_the_user_typed_them() {
    let e = refused(&["--staleness-ms", "-1", "--policies", "closest"]);
    assert!(e.contains("--staleness-ms must be"), "{e}");
    let e = refused(&["--load-window-ms", "0", "--policies", "closest"]);
    assert!(e.contains("--load-window-ms must be"), "{e}");
}

#[test]
fn an_unwritable_out_fails_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let under_a_file = file.join("out");
    let e = refused(&[
        "--duration",
        "60",
        "--policies",
        "closest",
        "--out",
        under_a_file.to_str().unwrap(),
    ]);
    assert!(e.contains("--out: cannot create"), "{e}");
    // A writable one is created, and the probe leaves nothing behind but the outputs.
    let out = dir.path().join("ok");
    let o = continuum(&with(&[
        "--duration",
        "10",
        "--policies",
        "closest",
        "--out",
        out.to_str().unwrap(),
    ]));
    assert!(o.status.success());
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "p99_over_time.svg",
            "results.csv",
            "results.json",
            "success_over_time.svg",
            "success_per_app.svg"
        ]
    );
}

#[test]
fn a_mistyped_row_gets_the_closest_name() {
    let e = refused(&["--policies", "headrom"]);
    assert!(
        e.contains("unknown policy `headrom` (did you mean `headroom`?)"),
        "{e}"
    );
    // The other rows are listed for an unknown name, …
    assert!(e.contains("other rows: "), "{e}");
    // … not when a known policy's mitigation is out of range.
    let e = refused(&["--configs", "closest+reissue@1.5"]);
    assert!(e.contains("r must be in (0, 1]"), "{e}");
    assert!(!e.contains("other rows"), "{e}");
}

#[test]
fn a_tapfinger_checkpoint_given_to_agent_says_how_to_run_it() {
    let e = fails(&[
        "compare",
        "topologies/full-edge.yaml",
        "--duration",
        "5",
        "--agent",
        "models/full-edge-tapfinger.tapfinger",
    ]);
    assert!(
        e.contains("a TapFinger checkpoint")
            && e.contains("--policies tapfinger:models/full-edge-tapfinger.tapfinger"),
        "{e}"
    );
    assert!(!e.contains("retrain"), "{e}");
}

#[test]
fn a_value_of_the_wrong_form_says_which_forms_are_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path().join("w.yaml");
    std::fs::write(
        &w,
        "lambda_per_min: 60\napps:\n  - {name: a, share: \"lots\", task: detect, rate_qps: 10, \
         frame_kb: 10, uplink_mbps: 80, max_delay_ms: 100, min_accuracy: 0, duration_s: 30}\n",
    )
    .unwrap();
    let e = fails(&[
        "compare",
        "tests/fixtures/tiny-topology.yaml",
        "--profiles",
        "tests/fixtures/tiny-profiles.yaml",
        "--workload",
        w.to_str().unwrap(),
    ]);
    // file:line:col at the value, the forms it may take, and no Rust type's name.
    assert!(e.contains("w.yaml:3:"), "{e}");
    assert!(e.contains("expected a number >= 0, `{step:"), "{e}");
    assert!(!e.contains("untagged enum"), "{e}");
}

/// `continuum worker --config <file>` with `env` set, expected to fail at once; its stderr.
fn worker_fails(config: &std::path::Path, env: &[(&str, &str)]) -> String {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_continuum"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["worker", "--config", config.to_str().unwrap()])
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    e
}

#[test]
fn a_server_config_error_points_at_the_line_or_the_variable() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string("config/worker-co.yaml").unwrap();
    let line = text
        .lines()
        .position(|l| l.starts_with("name:"))
        .expect("a name line")
        + 1;
    let typo = dir.path().join("worker.yaml");
    std::fs::write(&typo, text.replacen("name:", "nmae:", 1)).unwrap();
    let e = worker_fails(&typo, &[]);
    assert!(
        e.contains(&format!("worker.yaml:{line}:1: unknown field `nmae`")),
        "{e}"
    );
    // A wrong override names the variable, not the file.
    let e = worker_fails(
        std::path::Path::new("config/worker-co.yaml"),
        &[("CONTINUUM_HTTP__LISTEN", "not-an-address")],
    );
    assert!(
        e.contains("CONTINUUM_HTTP__LISTEN=not-an-address: ") && e.contains("`http.listen`"),
        "{e}"
    );
}

#[test]
fn the_csv_has_the_median_and_one_precision_per_unit() {
    let o = continuum(&with(&[
        "--policies",
        "closest,random",
        "--duration",
        "30",
        "--format",
        "csv",
    ]));
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| {
        head.iter()
            .position(|h| *h == n)
            .unwrap_or_else(|| panic!("{n}"))
    };
    let latencies = [col("p50_ms"), col("p95_ms"), col("p99_ms")];
    let mut seen = 0;
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        for &i in &latencies {
            if !f[i].is_empty() {
                let decimals = f[i].split('.').nth(1).map_or(0, str::len);
                assert_eq!(decimals, 3, "{} in {l}", head[i]);
                seen += 1;
            }
        }
    }
    assert!(seen > 10, "{text}");
}

#[test]
fn shell_completions_cover_every_subcommand() {
    for shell in ["bash", "zsh", "fish"] {
        let o = continuum(&["completions", shell]);
        assert!(o.status.success(), "{shell}");
        let text = String::from_utf8_lossy(&o.stdout);
        for word in ["compare", "simulate", "train", "loadgen", "bound-slice-ms"] {
            assert!(text.contains(word), "{shell}: no `{word}`");
        }
    }
    // A shell it does not know is a usage error (clap's exit status 2) listing those it does.
    let o = continuum(&["completions", "tcsh"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(
        e.contains("invalid value 'tcsh'") && e.contains("bash"),
        "{e}"
    );
}

#[test]
fn inputs_and_reports_carry_the_schema_version() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string("tests/fixtures/tiny-topology.yaml").unwrap();
    for (v, ok) in [("1", true), ("2", false), ("0", false)] {
        let t = dir.path().join(format!("t{v}.yaml"));
        std::fs::write(&t, format!("schema: {v}\n{text}")).unwrap();
        let mut args = with(&[
            "--policies",
            "closest",
            "--duration",
            "10",
            "--format",
            "json",
        ]);
        let path = t.to_str().unwrap().to_string();
        args[1] = &path;
        if ok {
            let o = continuum(&args);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            assert_eq!(r["schema"], 1, "the report says its version");
        } else {
            let e = fails(&args);
            assert!(
                e.contains(&format!("t{v}.yaml:1:9")) && e.contains("reads schema 1"),
                "{e}"
            );
            assert_eq!(e.contains("newer continuum"), v == "2", "{e}");
        }
    }
    // What continuum writes says the version it wrote.
    let out = dir.path().join("g.yaml");
    let o = continuum(&[
        "topology",
        "generate",
        "--antennas",
        "4",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let g = std::fs::read_to_string(&out).unwrap();
    assert!(g.lines().any(|l| l == "schema: 1"), "{g}");
}

#[test]
fn sizes_inside_input_files_are_bounded_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let fix = |f: &str| std::fs::read_to_string(format!("tests/fixtures/{f}")).unwrap();
    let write = |name: &str, text: String| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let topo = fix("tiny-topology.yaml");
    let work = fix("tiny-workload.yaml");
    let prof = fix("tiny-profiles.yaml");
    // (file to swap, its new text, what the message must say). Each of these once filled,
    // looped or allocated for minutes.
    let cases = [
        (
            1,
            write("cap.yaml", topo.replace("{gpu: 2}", "{gpu: 2e12}")),
            "at most 100000 replicas per cluster",
        ),
        (
            1,
            write(
                "rep.yaml",
                topo.replace("small-b1: 2}", "small-b1: 2000000000}")
                    .replace("{cpu: 2}", "{cpu: 1e10}"),
            ),
            "2000000000 replicas in all",
        ),
        (
            5,
            write(
                "lam.yaml",
                work.replace("lambda_per_min: 6", "lambda_per_min: 6e9"),
            ),
            "at most 1e7",
        ),
        (
            5,
            write("rate.yaml", work.replace("rate_qps: 10", "rate_qps: 1e12")),
            "at most 5e9",
        ),
        (
            3,
            write(
                "batch.yaml",
                prof.replace("batch: 4,", "batch: 4000000000,"),
            ),
            "batch size in 1..=4096",
        ),
    ];
    for (slot, file, want) in cases {
        let mut args = with(&["--policies", "closest", "--duration", "10"]);
        args[slot] = &file;
        let t = Instant::now();
        let e = fails(&args);
        assert!(e.contains(want), "{file}: {e}");
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "{file}: {:?}",
            t.elapsed()
        );
    }
}

/// The help of `--quiet` and of `--progress` in `continuum <cmd> --help`, whitespace folded.
fn progress_help(cmd: &[&str]) -> (String, String) {
    let o = continuum(&[cmd, &["--help"]].concat());
    assert!(o.status.success(), "{cmd:?}");
    let text = String::from_utf8_lossy(&o.stdout);
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let after = |flag: &str| {
        let (_, rest) = folded
            .split_once(&format!(" {flag} "))
            .unwrap_or_else(|| panic!("{cmd:?}: no {flag} in\n{text}"));
        // `loadgen --progress [<S>]`: its former form, a period, is still read.
        let rest = rest.strip_prefix("[<S>] ").unwrap_or(rest);
        let end = rest.find(" -").unwrap_or(rest.len());
        rest[..end].to_string()
    };
    (after("--quiet"), after("--progress"))
}

#[test]
fn every_command_with_progress_takes_quiet_and_progress_with_one_meaning() {
    let commands: [&[&str]; 9] = [
        &["simulate"],
        &["compare"],
        &["train"],
        &["meta-train"],
        &["table"],
        &["sweep", "run"],
        &["deeprm", "train"],
        &["deeprm", "meta-train"],
        &["loadgen"],
    ];
    let first = progress_help(commands[0]);
    assert!(
        first.0.starts_with("No progress") && first.0.contains("terminal"),
        "{first:?}"
    );
    assert!(
        first.1.contains("even when it is not a terminal"),
        "{first:?}"
    );
    for cmd in &commands[1..] {
        assert_eq!(progress_help(cmd), first, "{cmd:?}");
    }
}

#[test]
fn loadgens_former_progress_period_is_read_with_a_warning() {
    // The warning comes with the options' check, before any request (this gateway is refused).
    for (old, new) in [("5", "--progress --progress-every 5"), ("0", "--quiet")] {
        let e = fails(&["loadgen", "--progress", old, "--gateway", "ftp://nowhere:1"]);
        assert!(e.contains(&format!("warning: --progress {old}:")), "{e}");
        assert!(e.contains(&format!("write {new}")), "{e}");
        assert!(e.contains("--gateway"), "{e}");
    }
    let e = fails(&["loadgen", "--progress", "--gateway", "ftp://nowhere:1"]);
    assert!(!e.contains("warning"), "{e}");
}

#[test]
fn compare_quiet_prints_no_progress_and_progress_prints_lines() {
    let run = |flag: &[&str]| {
        let mut a = with(&[
            "--policies",
            "closest",
            "--duration",
            "10",
            "--format",
            "json",
        ]);
        a.extend(flag);
        let o = continuum(&a);
        assert!(
            o.status.success(),
            "{flag:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(out.contains("\"results\""), "{flag:?}: {out}");
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    // Standard error is a pipe here: no progress unless asked for, none at all with --quiet.
    assert_eq!(run(&["--quiet"]), "");
    assert_eq!(run(&[]), "");
    let lines = run(&["--progress"]);
    assert!(lines.contains("% simulated"), "{lines}");
    assert!(lines.lines().all(|l| l.starts_with('[')), "{lines}");
    // Both at once is a usage error (clap's exit status 2).
    let o = continuum(&with(&["--quiet", "--progress"]));
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("cannot be used with"), "{e}");
}

#[test]
fn out_is_a_folder_everywhere_and_the_former_file_form_warns() {
    let dir = tempfile::tempdir().unwrap();
    let d = |p: &str| dir.path().join(p).to_str().unwrap().to_string();
    let run = |args: &[&str]| {
        let o = continuum(args);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "{args:?}: {err}");
        err
    };
    // A folder: the file inside under its fixed name, and no warning.
    let err = run(&["topology", "generate", "--antennas", "4", "--out", &d("t")]);
    assert!(dir.path().join("t/topology.yaml").is_file(), "{err}");
    assert!(!err.contains("former form"), "{err}");
    // The former form: that file, and a warning naming the new form.
    let err = run(&[
        "topology",
        "generate",
        "--antennas",
        "4",
        "--out",
        &d("t.yaml"),
    ]);
    assert!(dir.path().join("t.yaml").is_file());
    assert!(
        err.contains("former form") && err.contains(&format!("--out {}", d("t"))),
        "{err}"
    );

    // A training writes its checkpoint and logs into the folder; every reader takes the folder.
    let cfg = std::fs::read_to_string("tests/fixtures/tiny-dqn.yaml").unwrap();
    std::fs::write(
        d("cfg.yaml"),
        format!("{cfg}\nalgorithm: reinforce-improved\n"),
    )
    .unwrap();
    let tiny = [
        "--profiles",
        "tests/fixtures/tiny-profiles.yaml",
        "--workload",
        "tests/fixtures/tiny-workload.yaml",
    ];
    let mut train = vec!["train", "tests/fixtures/tiny-topology.yaml", "--config"];
    let c = d("cfg.yaml");
    let a = d("a");
    train.extend([c.as_str(), "--out", a.as_str()]);
    train.extend(tiny);
    run(&train);
    for f in [
        "checkpoint.dqn",
        "checkpoint.training.csv",
        "checkpoint.training_curve.svg",
    ] {
        assert!(dir.path().join("a").join(f).is_file(), "{f}");
    }
    let mut cmp = vec![
        "compare",
        "tests/fixtures/tiny-topology.yaml",
        "--duration",
        "20",
    ];
    cmp.extend(tiny);
    cmp.extend(["--policies", "closest", "--agent", a.as_str()]);
    run(&cmp);

    // deeprm eval: --out is a folder too; --json is its former form.
    let base = [
        "deeprm",
        "eval",
        "--loads",
        "0.7",
        "--seeds",
        "1",
        "--jobsets",
        "1",
        "--slots",
        "5",
    ];
    let mut e = base.to_vec();
    let ev = d("ev");
    e.extend(["--out", ev.as_str()]);
    run(&e);
    assert!(dir.path().join("ev/results.json").is_file());
    assert!(dir.path().join("ev/deeprm-load.svg").is_file());
    let mut e = base.to_vec();
    let j = d("ev.json");
    e.extend(["--json", j.as_str()]);
    let err = run(&e);
    assert!(err.contains("former form of --out"), "{err}");
    assert!(dir.path().join("ev.json").is_file());
}

#[test]
fn a_topology_free_config_says_how_it_trains() {
    // Without --init, `train` cannot use a network for any topology: it names the two ways.
    let e = fails(&[
        "train",
        "tests/fixtures/tiny-topology.yaml",
        "--profiles",
        "tests/fixtures/tiny-profiles.yaml",
        "--workload",
        "tests/fixtures/tiny-workload.yaml",
        "--config",
        "config/universal.yaml",
        "--out",
        "out/never-written",
    ]);
    assert!(e.contains("train-universal") && e.contains("--init"), "{e}");
    // A settings override out of range is named before any network is drawn.
    let e = fails(&[
        "train-universal",
        "--network-count",
        "0",
        "--out",
        "out/never-written",
    ]);
    assert!(e.contains("networks"), "{e}");
}
