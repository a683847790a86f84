//! A worker out of file descriptors (`ulimit -n 40`, more idle connections than it can hold)
//! backs off on failing accepts and rate-limits the log line, instead of spinning and writing
//! millions of lines; once the idle connections close it serves again.

use continuum_testkit::worker::*;
use serde_json::json;
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accept_failures_back_off_and_log_a_few_lines() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let a: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let cfg = json!({
        "name": "fd-worker",
        "backend": std::env::var("CONTINUUM_BACKEND").unwrap_or_else(|_| "auto".into()),
        "models_dir": models_dir(),
        "http": {"listen": a},
        "quic": {"listen": "127.0.0.1:0"},
        "variants": [{"name": "s1", "model": "cnn-s", "max_batch": 1}],
    });
    let path = dir.path().join("worker.yaml");
    std::fs::write(&path, serde_json::to_vec(&cfg).unwrap()).unwrap();
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
