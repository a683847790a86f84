//! `continuum profile` writes a profile that `continuum compare` accepts with
//! topologies/local.yaml; the committed profiles/local.yaml is accepted too.

use std::path::Path;
use std::process::Command;

fn continuum(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_continuum"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

fn assert_ok(out: &std::process::Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn compare(profile: &Path) {
    let out = continuum(&[
        "compare",
        "topologies/local.yaml",
        "--profiles",
        profile.to_str().unwrap(),
        "--lambda",
        "6",
        "--duration",
        "30",
        "--threads",
        "1",
    ]);
    assert_ok(&out, "compare");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("least-impedance"), "{text}");
}

#[test]
fn profile_written_is_accepted_by_compare() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("local.yaml");
    let out = continuum(&[
        "profile",
        "--models",
        "models",
        "--out",
        path.to_str().unwrap(),
        "--reps",
        "3",
        "--min-time-ms",
        "0",
    ]);
    assert_ok(&out, "profile");
    let text = std::fs::read_to_string(&path).unwrap();
    for v in ["cnn-s-b1", "cnn-m-b4", "cnn-l-b8"] {
        assert!(
            text.contains(&format!("name: {v}")),
            "{v} missing in\n{text}"
        );
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("wrote") && stdout.contains("9 variants"),
        "{stdout}"
    );
    compare(&path);
}

#[test]
fn committed_local_profile_is_accepted_by_compare() {
    compare(Path::new("profiles/local.yaml"));
}

#[test]
fn profile_of_a_missing_directory_is_a_clear_error() {
    let out = continuum(&["profile", "--models", "no-such-dir", "--out", "/tmp/x.yaml"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no-such-dir/models.yaml"), "{err}");
}
