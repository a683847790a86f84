//! Conformance with Triton's own clients: runs `crates/gateway/tests/conformance/tritonclient_check.py` (the
//! pip-installed `tritonclient`, HTTP and gRPC) against a live worker and a live gateway.
//! `.ci/run` installs tritonclient; elsewhere the test says it skipped when the package is
//! missing, and fails when `CI` is set.

use continuum_testkit::gateway::*;
use serde_json::json;
use std::process::Command;

fn tritonclient_available() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import tritonclient.http, tritonclient.grpc, numpy"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "tritonclient[http,grpc] is not installed (CI installs it in .ci/run)"
        );
        eprintln!("skipped: python3 -m pip install 'tritonclient[http,grpc]' to run this test");
    }
    ok
}

/// Runs the checker against `http` / `grpc`; panics with its report when a check fails.
async fn check(http: &str, grpc: &str, model: &str, max_batch: usize, outputs: &[&str]) {
    check_tls(http, grpc, model, max_batch, outputs, &[]).await
}

/// [`check`], with the checker's TLS arguments (`--ca`, `--client-cert`, `--client-key`).
async fn check_tls(
    http: &str,
    grpc: &str,
    model: &str,
    max_batch: usize,
    outputs: &[&str],
    tls: &[String],
) {
    let dir = tempfile::tempdir().unwrap();
    let expect = dir.path().join("expect.json");
    let input = continuum_wire::reference_input(max_batch, &ITEM);
    let outs: Vec<Vec<f32>> = outputs.iter().map(|m| direct(m, max_batch).data).collect();
    std::fs::write(
        &expect,
        serde_json::to_vec(&json!({"input": input, "outputs": outs})).unwrap(),
    )
    .unwrap();
    let script = repo("crates/gateway/tests/conformance/tritonclient_check.py");
    let mut args: Vec<String> = vec![
        script.display().to_string(),
        "--http".into(),
        http.into(),
        "--grpc".into(),
        grpc.into(),
        "--model".into(),
        model.into(),
        "--max-batch".into(),
        max_batch.to_string(),
        "--expect".into(),
        expect.display().to_string(),
    ];
    args.extend_from_slice(tls);
    let out = tokio::task::spawn_blocking(move || Command::new("python3").args(&args).output())
        .await
        .unwrap()
        .expect("python3 runs");
    let report = String::from_utf8_lossy(&out.stdout);
    eprintln!("{report}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success(),
        "tritonclient checks failed:\n{report}"
    );
    assert!(report.contains(" passed, 0 failed"), "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tritonclient_http_and_grpc_against_a_worker_and_a_gateway() {
    if !tritonclient_available() {
        return;
    }
    let w = start(config(
        &[("cnn-s-b4", "cnn-s", 4, 2.0)],
        json!({"grpc": {"listen": "127.0.0.1:0"}}),
    ))
    .await;
    let grpc = w.grpc_addr().expect("gRPC configured").to_string();
    check(&w.http_addr().to_string(), &grpc, "cnn-s-b4", 4, &["cnn-s"]).await;
    w.shutdown().await;

    // The gateway: its task's largest batch is the cloud's cnn-l-b4; single items may go to
    // any variant.
    let l = live(false, json!({"grpc": {"listen": "127.0.0.1:0"}})).await;
    let grpc = l.gw.grpc_addr().expect("gRPC configured").to_string();
    check(
        &l.addr().to_string(),
        &grpc,
        "object-detection",
        4,
        &["cnn-l", "cnn-m", "cnn-s"],
    )
    .await;
    l.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tritonclient_over_tls_against_a_worker_and_a_gateway() {
    if !tritonclient_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = continuum_wire::dev_pki::generate(dir.path(), "").unwrap();
    let tls = json!({"cert": p.server_cert, "key": p.server_key});
    let mut verified = tls.clone();
    verified["client_ca"] = json!(p.ca);
    // The worker verifies client certificates; the clients present one.
    let w = start(config(
        &[("cnn-s-b4", "cnn-s", 4, 2.0)],
        json!({"http": {"tls": verified}, "grpc": {"listen": "127.0.0.1:0", "tls": verified}}),
    ))
    .await;
    let path = |p: &std::path::Path| p.display().to_string();
    let with_cert = [
        "--ca".to_string(),
        path(&p.ca),
        "--client-cert".into(),
        path(&p.client_cert),
        "--client-key".into(),
        path(&p.client_key),
    ];
    let grpc = w.grpc_addr().expect("gRPC configured").to_string();
    let http = w.http_addr().to_string();
    check_tls(&http, &grpc, "cnn-s-b4", 4, &["cnn-s"], &with_cert).await;
    w.shutdown().await;

    // The gateway over TLS, without client certificates.
    let l = live(
        false,
        json!({"http": {"listen": "127.0.0.1:0", "tls": tls},
               "grpc": {"listen": "127.0.0.1:0", "tls": tls}}),
    )
    .await;
    let grpc = l.gw.grpc_addr().expect("gRPC configured").to_string();
    let outputs = ["cnn-l", "cnn-m", "cnn-s"];
    let ca_only = ["--ca".to_string(), path(&p.ca)];
    check_tls(
        &l.addr().to_string(),
        &grpc,
        "object-detection",
        4,
        &outputs,
        &ca_only,
    )
    .await;
    l.stop().await;
}
