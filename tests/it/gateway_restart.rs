//! Streams survive a gateway restart: the gateway process (the real binary) is killed with
//! SIGKILL under load and started again on the same address with the same stream key; the
//! clients' existing stream tokens keep working, with no `404 unknown stream`. And the binary
//! obeys its signals: SIGHUP reloads its settings with the streams kept, SIGTERM stops it cleanly.

use crate::gateway_support::*;
use serde_json::json;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

fn spawn_gateway(cfg: &std::path::Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_continuum"))
        .args(["gateway", "--config"])
        .arg(cfg)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("gateway binary starts")
}

async fn wait_ready(a: SocketAddr) {
    let t = Instant::now();
    while try_status(a, get(a, "/v2/health/ready")).await != Some(200) {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "gateway ready in time"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn streams_survive_a_gateway_kill_and_restart() {
    let dir = tempfile::tempdir().unwrap();
    let co = start(co_config(dir.path(), "127.0.0.1:0")).await;
    let cloud = start(cloud_config(dir.path(), "127.0.0.1:0")).await;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let a: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let cfg = gateway_json(
        dir.path(),
        &co,
        &cloud,
        false,
        json!({"http": {"listen": a}, "stream_key_file": dir.path().join("stream.key")}),
    );
    let path = dir.path().join("gateway.yaml");
    std::fs::write(&path, serde_json::to_vec(&cfg).unwrap()).unwrap();

    let mut gw = spawn_gateway(&path);
    wait_ready(a).await;
    let mut tokens = Vec::new();
    for d in [300.0, 2000.0, 2000.0, 5000.0] {
        let s = open(a, &stream_req(d, 0.2)).await;
        tokens.push(s["stream_id"].as_str().unwrap().to_string());
    }
    // Load: each stream sends a query every 20 ms until told to stop; statuses are kept with
    // whether they came after the restart.
    let restarted = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let after_ok = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut load = Vec::new();
    for t in tokens.clone() {
        let (restarted, stop, after_ok) = (restarted.clone(), stop.clone(), after_ok.clone());
        load.push(tokio::spawn(async move {
            let mut seen = Vec::new();
            while !stop.load(Ordering::Acquire) {
                let after = restarted.load(Ordering::Acquire);
                let st = try_status(
                    a,
                    post_json(a, &format!("/v1/streams/{t}/infer"), &infer_json(1)),
                )
                .await;
                if after && st == Some(200) {
                    after_ok.fetch_add(1, Ordering::AcqRel);
                }
                seen.push((after, st));
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            seen
        }));
    }
    tokio::time::sleep(Duration::from_millis(800)).await;
    gw.kill().expect("SIGKILL");
    let _ = gw.wait();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut gw = spawn_gateway(&path);
    wait_ready(a).await;
    restarted.store(true, Ordering::Release);
    // At least 1.5 s of load after the restart, longer on a slow (debug, loaded) machine until
    // every stream could have been answered a few times.
    let t0 = std::time::Instant::now();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    while after_ok.load(Ordering::Acquire) < tokens.len() * 5 && t0.elapsed().as_secs() < 30 {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    stop.store(true, Ordering::Release);
    let mut after = Vec::new();
    let mut before = 0;
    for h in load {
        for (is_after, st) in h.await.unwrap() {
            if is_after {
                after.push(st);
            } else if st == Some(200) {
                before += 1;
            }
        }
    }
    let _ = gw.kill();
    let _ = gw.wait();
    assert!(before > 0, "queries answered before the kill");
    let not_found = after.iter().filter(|s| **s == Some(404)).count();
    let ok = after.iter().filter(|s| **s == Some(200)).count();
    assert_eq!(not_found, 0, "404s after the restart: {after:?}");
    assert!(
        ok >= tokens.len() * 5,
        "answered after the restart: {ok} of {}",
        after.len()
    );
    co.shutdown().await;
    cloud.shutdown().await;
}

/// Sends `sig` to the child process.
fn signal(child: &Child, sig: libc::c_int) {
    // SAFETY: kill(2) on a child this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, sig) }, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_reloads_the_binary_with_streams_kept_and_sigterm_stops_it() {
    let dir = tempfile::tempdir().unwrap();
    let co = start(co_config(dir.path(), "127.0.0.1:0")).await;
    let cloud = start(cloud_config(dir.path(), "127.0.0.1:0")).await;
    let a = free_addr(false);
    let settings = |policy: &str| {
        gateway_json(
            dir.path(),
            &co,
            &cloud,
            false,
            json!({"http": {"listen": a}, "policy": policy}),
        )
    };
    let path = dir.path().join("gateway.yaml");
    write_json(&path, &settings("least-impedance"));
    let mut gw = spawn_gateway(&path);
    wait_ready(a).await;
    let s = open(a, &stream_req(2000.0, 0.2)).await;
    assert_eq!(s["policy"], "least-impedance");
    let infer = format!("/v1/streams/{}/infer", s["stream_id"].as_str().unwrap());

    // The file changes; nothing happens until SIGHUP, then the new policy binds.
    write_json(&path, &settings("closest"));
    signal(&gw, libc::SIGHUP);
    let t = Instant::now();
    loop {
        let p = open(a, &stream_req(2000.0, 0.2)).await["policy"].clone();
        if p == "closest" {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(30), "never reloaded: {p}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (st, _, _) = http(a, post_json(a, &infer, &infer_json(1))).await;
    assert_eq!(
        st, 200,
        "the stream opened before the reload is still served"
    );

    // A bad file on SIGHUP keeps the running settings.
    std::fs::write(&path, "policy: [").unwrap();
    signal(&gw, libc::SIGHUP);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(open(a, &stream_req(2000.0, 0.2)).await["policy"], "closest");

    signal(&gw, libc::SIGTERM);
    let t = Instant::now();
    let status = loop {
        if let Some(st) = gw.try_wait().unwrap() {
            break st;
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "SIGTERM did not stop it"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(status.success(), "exit after SIGTERM: {status:?}");
    co.shutdown().await;
    cloud.shutdown().await;
}
