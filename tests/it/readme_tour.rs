//! The README's tour at smoke size: every `cargo run --release -- …` command of the tour runs
//! with the built binary, its sizes shrunk (short simulations, `--budget 1e6` for training, a
//! few slots, iterations and seeds), its `out/` redirected to a temporary directory. Every
//! command must succeed, and the tour must leave the repository as it found it. The sweep, the
//! Ray head and the live gateway sequence start servers and are covered by their own tests.
//!
//! An unoptimised build (`cargo test`) leaves out the training commands (`train`,
//! `train-universal`, `meta-train`) and those that read what they write: unoptimised candle makes even their smoke
//! size take minutes, and tests/it/policy_gradient.rs and tests/it/cli_pull.rs train on tiny fixtures
//! there. With `CONTINUUM_TOUR_BIN` naming an optimised binary (what `.ci/run` does after `cargo
//! build --release --bin continuum`) the unoptimised test runs every command with it, and so
//! does `cargo test --release --test it readme_tour::` with its own (about a minute on 2 cores).

use std::path::Path;
use std::process::Command;
use std::time::Instant;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The tour's `cargo run --release -- …` commands, in order (line continuations joined).
fn tour_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).expect("README.md");
    let start = readme
        .find("## A five-minute tour")
        .expect("the README has a tour");
    let tour = &readme[start..];
    let tour = &tour[..tour.find("\n## ").map_or(tour.len(), |i| i)];
    let joined = tour.replace("\\\n", " ");
    joined
        .lines()
        .filter_map(|l| l.trim().strip_prefix("cargo run --release -- "))
        .map(|l| l.split(" #").next().unwrap_or(l).trim().to_string())
        .filter(|l| !l.starts_with("sweep "))
        .collect()
}

/// `args` shrunk to smoke size.
fn smoke(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    let set = |name: &str, value: &str, out: &mut Vec<String>, args: &[String], i: &mut usize| {
        if args[*i] == name {
            out.push(name.into());
            out.push(value.into());
            *i += 2;
            true
        } else {
            false
        }
    };
    while i < args.len() {
        if set("--duration", "20", &mut out, args, &mut i)
            || set("--seeds", "1", &mut out, args, &mut i)
            || set("--iterations", "2", &mut out, args, &mut i)
            || set("--jobsets", "2", &mut out, args, &mut i)
            || set("--slots", "60", &mut out, args, &mut i)
            || set("--budget", "1e6", &mut out, args, &mut i)
            || set("--loads", "1.5", &mut out, args, &mut i)
            || set("--episodes", "2", &mut out, args, &mut i)
        {
            continue;
        }
        out.push(args[i].clone());
        i += 1;
    }
    let has = |f: &str| out.iter().any(|a| a == f);
    match out[0].as_str() {
        "compare" | "simulate" | "table" if !has("--duration") => {
            out.extend(["--duration".into(), "20".into()]);
        }
        "train" if !has("--budget") => out.extend(["--budget".into(), "1e6".into()]),
        "train-universal" => {
            let add = missing(
                &out,
                &[
                    ("--network-count", "1"),
                    ("--rounds", "1"),
                    ("--validation-networks", "1"),
                ],
            );
            out.extend(add);
        }
        "deeprm" if out.get(1).is_some_and(|s| s == "eval") && !has("--seeds") => {
            out.extend(["--seeds".into(), "1".into()]);
        }
        "jobs" if out.get(1).is_some_and(|s| s == "train") => {
            let add = missing(
                &out,
                &[("--episode-s", "60"), ("--drain", "60"), ("--actors", "2")],
            );
            out.extend(add);
        }
        "jobs" if out.get(1).is_some_and(|s| s == "ml") => {
            let add = match out.get(2).map(String::as_str) {
                Some("train") => missing(&out, &[("--updates", "2"), ("--envs", "2")]),
                _ => missing(&out, &[("--seeds", "1"), ("--cases", "3:2")]),
            };
            out.extend(add);
        }
        "jobs" if out.get(1).is_some_and(|s| s == "evaluate") => {
            let add = missing(&out, &[("--seeds", "1"), ("--duration", "60")]);
            out.extend(add);
        }
        _ => {}
    }
    out
}

/// The flags of `defaults` that `args` lacks, each with its value.
fn missing(args: &[String], defaults: &[(&str, &str)]) -> Vec<String> {
    defaults
        .iter()
        .filter(|(flag, _)| !args.iter().any(|a| a == flag))
        .flat_map(|(flag, value)| [flag.to_string(), value.to_string()])
        .collect()
}

fn git_status() -> Option<String> {
    let o = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=all"])
        .current_dir(ROOT)
        .output()
        .ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
}

#[test]
fn the_readme_tour_runs_at_smoke_size_and_leaves_the_tree_clean() {
    let commands = tour_commands();
    assert!(
        commands.len() >= 15,
        "the tour should have its commands: {commands:?}"
    );
    let before = git_status();
    let dir = tempfile::tempdir().unwrap();
    let out = format!("{}/", dir.path().join("out").display());
    let mut times = Vec::new();
    // What the training commands left out would have written (their `--out`).
    let mut not_written: Vec<String> = Vec::new();
    let bin = std::env::var_os("CONTINUUM_TOUR_BIN").map_or_else(
        || env!("CARGO_BIN_EXE_continuum").into(),
        std::path::PathBuf::from,
    );
    let optimised = !cfg!(debug_assertions) || std::env::var_os("CONTINUUM_TOUR_BIN").is_some();
    eprintln!("the tour runs {}", bin.display());
    let mut trained = 0;
    for c in &commands {
        let training = ["train ", "train-universal ", "meta-train ", "jobs train "]
            .iter()
            .any(|p| c.starts_with(p));
        trained += usize::from(training && optimised);
        let needs_skipped = not_written.iter().any(|f| c.contains(f.as_str()));
        if !optimised && (training || needs_skipped) {
            if let Some(out) = c.split_whitespace().skip_while(|a| *a != "--out").nth(1) {
                not_written.push(out.to_string());
            }
            eprintln!("(unoptimised build: not run) continuum {c}");
            continue;
        }
        let args: Vec<String> = c
            .split_whitespace()
            .map(|a| a.trim_matches('\'').replace("out/", &out))
            .collect();
        let args = smoke(&args);
        let t = Instant::now();
        let o = Command::new(&bin)
            .args(&args)
            .current_dir(ROOT)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "`continuum {}` failed:\n{}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr)
        );
        // The tour shows the current forms: no option in it is a former one.
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !err.contains("former form"),
            "`continuum {}` uses a former form:\n{err}",
            args.join(" ")
        );
        times.push((t.elapsed().as_secs_f64(), args[..2].join(" ")));
    }
    for (s, what) in &times {
        eprintln!("{s:>6.1} s  {what}");
    }
    if optimised {
        assert!(trained >= 2, "the tour's training commands ran: {trained}");
    }
    assert_eq!(
        git_status(),
        before,
        "the tour changed the repository's files"
    );
}
