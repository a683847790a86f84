//! A worker out of file descriptors (`ulimit -n 40`, more idle connections than it can hold)
//! backs off on failing accepts and rate-limits the log line, instead of spinning and writing
//! millions of lines; once the idle connections close it serves again. And while a client keeps
//! opening silent connections, a worker and a gateway (`ulimit -n 64`) shed the idle ones and
//! answer every valid query (8 of 8).

use continuum_testkit::worker::*;
use serde_json::json;
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accept_failures_back_off_and_log_a_few_lines() {
    let dir = tempfile::tempdir().unwrap();
    let a = free_port();
    let path = worker_file(dir.path(), a);
    let log = dir.path().join("worker.log");
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ulimit -n 40 && exec '{}' worker --config '{}'",
            env!("CARGO_BIN_EXE_continuum"),
            path.display()
        ))
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let t = Instant::now();
    loop {
        if tokio::net::TcpStream::connect(a).await.is_ok() {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(60), "worker up in time");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Far more idle connections than descriptors left: accepts fail with EMFILE for 3 s.
    let mut idle = Vec::new();
    for _ in 0..80 {
        if let Ok(s) = tokio::net::TcpStream::connect(a).await {
            idle.push(s);
        }
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    drop(idle);
    // Served again within a couple of back-off periods.
    let t = Instant::now();
    let served = loop {
        let r = tokio::time::timeout(
            Duration::from_secs(2),
            try_status(a, get(a, "/v2/health/live")),
        )
        .await;
        if let Ok(Some(200)) = r {
            break true;
        }
        if t.elapsed() > Duration::from_secs(10) {
            break false;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let _ = child.kill();
    let _ = child.wait();
    let text = std::fs::read_to_string(&log).unwrap();
    let lines = text.lines().filter(|l| l.contains("accept failed")).count();
    assert!(
        served,
        "worker served again after the connections closed:\n{text}"
    );
    assert!(lines >= 1, "the failure is logged:\n{text}");
    // At most one line a second (plus the edges), however many accepts failed.
    assert!(lines <= 6, "{lines} accept-failure lines in ~3 s");
    assert!(text.len() < 64 << 10, "log of {} bytes", text.len());
}

/// Writes the settings of a one-variant worker (`s1`, cnn-s) listening on `a` into `dir`.
fn worker_file(dir: &std::path::Path, a: SocketAddr) -> std::path::PathBuf {
    let cfg = json!({
        "name": "fd-worker",
        "backend": std::env::var("CONTINUUM_BACKEND").unwrap_or_else(|_| "auto".into()),
        "models_dir": models_dir(),
        "http": {"listen": a},
        "quic": {"listen": "127.0.0.1:0"},
        "variants": [{"name": "s1", "model": "cnn-s", "max_batch": 1}],
    });
    let path = dir.join("worker.yaml");
    std::fs::write(&path, serde_json::to_vec(&cfg).unwrap()).unwrap();
    path
}

/// A free loopback port's address.
fn free_port() -> SocketAddr {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("127.0.0.1:{port}").parse().unwrap()
}

/// `continuum <cmd> --config <cfg>` under `ulimit -n <nofile>`, its log in `log`; waits until
/// `a` answers `/v2/health/ready` with 200.
async fn spawn_limited(
    cmd: &str,
    cfg: &std::path::Path,
    nofile: u32,
    log: &std::path::Path,
    a: SocketAddr,
) -> std::process::Child {
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "ulimit -n {nofile} && exec '{}' {cmd} --config '{}'",
            env!("CARGO_BIN_EXE_continuum"),
            cfg.display()
        ))
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while try_status(a, get(a, "/v2/health/ready")).await != Some(200) {
        if t.elapsed() > Duration::from_secs(60) || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            panic!("{cmd} not ready: {}", std::fs::read_to_string(log).unwrap());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    child
}

/// Opens a silent connection to `a` every 2 ms (up to 400 held) until `stop`.
async fn flood(a: SocketAddr, stop: tokio::sync::watch::Receiver<bool>) {
    let mut held = Vec::new();
    while !*stop.borrow() && held.len() < 400 {
        if let Ok(Ok(s)) = tokio::time::timeout(
            Duration::from_millis(200),
            tokio::net::TcpStream::connect(a),
        )
        .await
        {
            held.push(s);
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let mut stop = stop;
    let _ = stop.wait_for(|s| *s).await;
}

/// 8 inference queries at `a` (model `model`), one after another, while silent connections
/// flood it; how many were answered 200, and the server's log.
async fn valid_under_flood(
    a: SocketAddr,
    model: &str,
    child: &mut std::process::Child,
    log: &std::path::Path,
) -> (usize, String) {
    let (tx, rx) = tokio::sync::watch::channel(false);
    let f = tokio::spawn(flood(a, rx));
    tokio::time::sleep(Duration::from_secs(1)).await;
    let mut ok = 0;
    for _ in 0..8 {
        let q = post_json(a, &format!("/v2/models/{model}/infer"), &infer_json(1));
        // A connect that waits in a full backlog counts as unanswered after 15 s.
        let r = tokio::time::timeout(Duration::from_secs(15), try_status(a, q)).await;
        if r == Ok(Some(200)) {
            ok += 1;
        }
    }
    let _ = tx.send(true);
    let _ = f.await;
    let _ = child.kill();
    let _ = child.wait();
    (ok, std::fs::read_to_string(log).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn valid_queries_are_answered_while_descriptors_run_out() {
    let dir = tempfile::tempdir().unwrap();
    // A worker of its own.
    let a = free_port();
    let path = worker_file(dir.path(), a);
    let log = dir.path().join("worker.log");
    let mut child = spawn_limited("worker", &path, 64, &log, a).await;
    let (ok, text) = valid_under_flood(a, "s1", &mut child, &log).await;
    assert!(
        text.contains("out of descriptors"),
        "no exhaustion:\n{text}"
    );
    assert_eq!(ok, 8, "worker: {ok} of 8 answered:\n{text}");

    // A gateway (in front of two in-process workers).
    use continuum_testkit::gateway::{cloud_config, co_config, gateway_json, start};
    let co = start(co_config(dir.path(), "127.0.0.1:0")).await;
    let cloud = start(cloud_config(dir.path(), "127.0.0.1:0")).await;
    let g = free_port();
    let v = gateway_json(
        dir.path(),
        &co,
        &cloud,
        false,
        json!({"http": {"listen": g}}),
    );
    let path = dir.path().join("gateway.yaml");
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    let log = dir.path().join("gateway.log");
    let mut child = spawn_limited("gateway", &path, 64, &log, g).await;
    let (ok, text) = valid_under_flood(g, "object-detection", &mut child, &log).await;
    co.shutdown().await;
    cloud.shutdown().await;
    assert!(
        text.contains("out of descriptors"),
        "no exhaustion:\n{text}"
    );
    assert_eq!(ok, 8, "gateway: {ok} of 8 answered:\n{text}");
}
