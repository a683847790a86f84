//! The README's "Gateway on loopback" block at smoke size, as a user runs it from a clean
//! clone: `cargo build --release` left out and `target/release/continuum` replaced by the
//! binary under test, the load generator's 60 s shrunk to 4 s. The block must exit 0 with the
//! load generator's table, leave no process it started running, and leave the tree as it
//! found it. It listens on the shipped settings' fixed loopback ports (8010–8082): the one test
//! here that does.

use std::path::Path;
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The block's commands, as the README has them.
fn block() -> String {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).expect("README.md");
    let start = readme
        .find("### Gateway on loopback")
        .expect("the README has the live section");
    let sec = &readme[start..];
    let code = &sec[sec.find("```sh\n").expect("a sh block") + 6..];
    code[..code.find("```").expect("the block ends")].to_string()
}

fn git_status() -> Option<String> {
    let o = Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(ROOT)
        .output()
        .ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
}

#[test]
fn the_readme_live_block_runs_at_smoke_size_and_stops_everything_it_started() {
    let bin = std::env::var("CONTINUUM_TOUR_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_continuum").to_string());
    let text = block();
    assert!(
        text.contains("live up") && text.contains("live down\n") || text.contains("live down ")
    );
    let script: String = text
        .lines()
        .filter(|l| !l.starts_with("cargo build"))
        .map(|l| l.replace("target/release/continuum", "\"$BIN\""))
        .map(|l| l.replace("--duration 60", "--duration 4"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        script.contains("--duration 4"),
        "the load generator's duration: {script}"
    );
    let before = git_status();
    // Whatever happens, what `live up` started is stopped.
    let full = format!(
        "set -euo pipefail\ntrap '\"$BIN\" live down >/dev/null 2>&1 || true' EXIT\n{script}\n"
    );
    let o = Command::new("bash")
        .arg("-c")
        .arg(&full)
        .env("BIN", &bin)
        .current_dir(ROOT)
        .output()
        .expect("bash runs");
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{script}\n---\n{out}");
    assert!(out.contains("ready"), "{out}");
    assert!(out.contains("stopped worker-co"), "{out}");
    assert!(out.contains("clients"), "the load generator's table: {out}");
    assert!(!Path::new(ROOT).join("out/state/pids").exists(), "{out}");
    assert_eq!(git_status(), before, "the block changed the tree");
}
