//! Helpers of the root package's gateway tests, which run the `continuum` binary: the
//! gateway's own test helpers (in-process workers and gateway, an HTTP client), plus training a
//! checkpoint and starting workers and gateways as processes of the binary.
#![allow(dead_code)]

pub use continuum_testkit::gateway::*;

use serde_json::{Value, json};
use std::net::SocketAddr;
use std::path::Path;

/// Trains a checkpoint for topologies/live.yaml and workloads/live.yaml (one episode, DQN
/// settings from `config`, e.g. tests/fixtures/tiny-dqn.yaml) into `out`.
pub fn train_live(config: &Path, out: &Path) {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_continuum"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "train",
            "topologies/live.yaml",
            "--profiles",
            "profiles/local.yaml",
            "--workload",
            "workloads/live.yaml",
            "--episodes",
            "1",
            "--threads",
            "1",
        ])
        .arg("--config")
        .arg(config)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Settings of a worker process (the `continuum worker` binary) named `name` serving `variants`
/// (name, model) one item a batch, QUIC on `quic`, its certificate written to `cert`.
pub fn worker_file_json(
    name: &str,
    variants: &[(&str, &str)],
    quic: SocketAddr,
    cert: &Path,
) -> Value {
    let vs: Vec<_> = variants
        .iter()
        .map(|(n, m)| json!({"name": n, "model": m, "max_batch": 1}))
        .collect();
    json!({
        "name": name,
        "backend": std::env::var("CONTINUUM_BACKEND").unwrap_or_else(|_| "auto".into()),
        "models_dir": models_dir(),
        "http": {"listen": "127.0.0.1:0"},
        "quic": {"listen": quic, "dev_cert_out": cert},
        "load_report_ms": 50,
        "variants": vs,
    })
}

/// Writes `v` to `file` and runs `continuum <what> --config <file>` (the binary), quiet.
pub fn spawn_with_config(what: &str, file: &Path, v: &Value) -> std::process::Child {
    write_json(file, v);
    std::process::Command::new(env!("CARGO_BIN_EXE_continuum"))
        .args([what, "--config"])
        .arg(file)
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the continuum binary starts")
}
