//! Slow request bodies on a worker and a gateway: every connection that trickles a body is cut
//! at the body read timeout (answered 408 with `Connection: close`, or closed), whether the
//! route reads the body or not, and none is held open after the timeout and a small grace; an
//! idle keep-alive connection is closed at the header read timeout. Slow headers and bodies at
//! small timeouts, the per-IP connection cap (HTTP and gRPC), and connections that stay silent
//! from their start or after a request, closed at the header timeout.
//! The 400-connection figure of docs/live.md comes from the ignored test here:
//! `cargo test -p continuum-gateway --test it -- live_hostile:: --ignored --nocapture`.

use continuum_testkit::gateway::*;
use serde_json::json;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Opens a connection, sends `head` (a request's headers and the start of its body), then one
/// byte every `gap`; whether it is still open after `hold` (the server neither closed it nor
/// reset it).
async fn still_open_after(a: SocketAddr, head: String, gap: Duration, hold: Duration) -> bool {
    let Ok(mut s) = tokio::net::TcpStream::connect(a).await else {
        return false;
    };
    let t = Instant::now();
    if s.write_all(head.as_bytes()).await.is_err() {
        return false;
    }
    let mut buf = [0u8; 1024];
    loop {
        let left = hold.saturating_sub(t.elapsed());
        if left.is_zero() {
            return true;
        }
        tokio::select! {
            r = s.read(&mut buf) => match r {
                Ok(0) | Err(_) => return false,
                Ok(_) => {}
            },
            _ = tokio::time::sleep(gap.min(left)) => {
                if t.elapsed() < hold && s.write_all(b"x").await.is_err() {
                    return false;
                }
            }
        }
    }
}

/// `n` slow-body connections at once against `a`, half to the inference route (which reads
/// the body), half to the health route (which does not); how many are still open after `hold`.
async fn slow_bodies(a: SocketAddr, model: &str, n: usize, gap: Duration, hold: Duration) -> usize {
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let path = if i % 2 == 0 {
                format!("/v2/models/{model}/infer")
            } else {
                "/v2/health/live".to_string()
            };
            let head = format!(
                "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
                 Content-Length: 100000\r\n\r\n{{"
            );
            tokio::spawn(still_open_after(a, head, gap, hold))
        })
        .collect();
    let mut open = 0;
    for t in tasks {
        open += usize::from(t.await.unwrap_or(true));
    }
    open
}

/// Sends one complete request on a keep-alive connection, reads the answer, then waits: whether
/// the server closed the idle connection within `hold`.
async fn idle_keep_alive_closed(a: SocketAddr, hold: Duration) -> bool {
    let mut s = tokio::net::TcpStream::connect(a).await.unwrap();
    s.write_all(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut buf = [0u8; 1024];
    let n = s.read(&mut buf).await.unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"), "answered");
    let t = Instant::now();
    loop {
        match tokio::time::timeout(hold.saturating_sub(t.elapsed()), s.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0) | Err(_)) => return true,
            Ok(Ok(_)) => {}
        }
    }
}

/// A worker and a gateway with `timeout_ms` header and body read timeouts; the slow-body
/// connections still open on each after the timeout and `grace`.
async fn run(n: usize, timeout_ms: u64, gap: Duration, grace: Duration) -> [(String, usize); 2] {
    let limits = json!({"listen": "127.0.0.1:0", "header_read_timeout_ms": timeout_ms,
                        "body_read_timeout_ms": timeout_ms});
    let w = continuum_testkit::worker::start(continuum_testkit::worker::config(
        &[("s1", "cnn-s", 1, 0.0)],
        json!({ "http": limits }),
    ))
    .await;
    let l = live(false, json!({ "http": limits })).await;
    let hold = Duration::from_millis(timeout_ms) + grace;
    let mut out = Vec::new();
    for (name, a, model) in [
        ("worker", w.http_addr(), "s1"),
        ("gateway", l.addr(), "object-detection"),
    ] {
        let open = slow_bodies(a, model, n, gap, hold).await;
        assert!(
            idle_keep_alive_closed(a, hold).await,
            "{name} closes an idle keep-alive connection"
        );
        // Served again afterwards.
        let (st, _, _) = http(a, get(a, "/v2/health/live")).await;
        assert_eq!(st, 200, "{name} serves after the slow clients");
        out.push((name.to_string(), open));
    }
    w.shutdown().await;
    l.stop().await;
    [out[0].clone(), out[1].clone()]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_bodies_are_cut_at_the_body_timeout() {
    let r = run(
        40,
        600,
        Duration::from_millis(200),
        Duration::from_millis(1400),
    )
    .await;
    for (name, open) in r {
        assert_eq!(open, 0, "{name}: {open} of 40 slow-body connections open");
    }
}

/// docs/live.md's figure: 400 connections, a body byte every 2 s, a 5 s timeout, 2 s grace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement (~20 s): run with --ignored --nocapture"]
async fn slow_bodies_400() {
    let r = run(400, 5000, Duration::from_secs(2), Duration::from_secs(2)).await;
    for (name, open) in &r {
        println!("{name}: {open} of 400 slow-body connections open 7 s after their headers");
    }
    assert!(r.iter().all(|(_, open)| *open == 0), "{r:?}");
}

/// Opens a raw TCP connection and sends `head`, then one byte every `gap` until the server
/// closes it; returns how long it stayed open (capped at `cap`).
async fn trickle(a: SocketAddr, head: &[u8], gap: Duration, cap: Duration) -> Duration {
    let mut s = tokio::net::TcpStream::connect(a).await.unwrap();
    let t = Instant::now();
    s.write_all(head).await.unwrap();
    let mut buf = [0u8; 1024];
    while t.elapsed() < cap {
        tokio::select! {
            r = s.read(&mut buf) => match r {
                Ok(0) | Err(_) => return t.elapsed(),
                Ok(_) => {}
            },
            _ = tokio::time::sleep(gap) => {
                if s.write_all(b"x").await.is_err() {
                    return t.elapsed();
                }
            }
        }
    }
    t.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_clients_time_out_and_connections_are_capped() {
    let limits = json!({"listen": "127.0.0.1:0", "header_read_timeout_ms": 400,
                        "body_read_timeout_ms": 400, "max_connections_per_ip": 4});
    let w = start(config(
        &[("s1", "cnn-s", 1, 0.0)],
        json!({"http": limits, "grpc": {"listen": "127.0.0.1:0"}}),
    ))
    .await;
    let l = live(false, json!({"http": {"listen": "127.0.0.1:0", "header_read_timeout_ms": 400,
                                         "body_read_timeout_ms": 400, "max_connections_per_ip": 4}}))
    .await;
    for (a, model) in [(w.http_addr(), "s1"), (l.addr(), "object-detection")] {
        // Headers one byte at a time: closed at the header timeout, not after 3 s.
        let open = trickle(
            a,
            b"GET /v2 HTTP/1.1\r\nHost: x\r\nX-Slow: ",
            Duration::from_millis(100),
            Duration::from_secs(3),
        )
        .await;
        assert!(
            open < Duration::from_millis(2500),
            "slow headers held {open:?}"
        );
        // A body one byte at a time: answered 408 (or closed) at the body timeout.
        let head = format!(
            "POST /v2/models/{model}/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{{"
        );
        let open = trickle(
            a,
            head.as_bytes(),
            Duration::from_millis(100),
            Duration::from_secs(3),
        )
        .await;
        assert!(
            open < Duration::from_millis(2500),
            "slow body held {open:?}"
        );
        // The per-IP cap: 4 idle connections are held, the 5th is closed at once. The slow
        // connections' slots are released when their tasks end, which a loaded machine may
        // delay past the client seeing the close: wait for that first.
        tokio::time::sleep(Duration::from_secs(1)).await;
        let mut held = Vec::new();
        for _ in 0..4 {
            let s = tokio::net::TcpStream::connect(a).await.unwrap();
            held.push(s);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut extra = tokio::net::TcpStream::connect(a).await.unwrap();
        let mut buf = [0u8; 16];
        let r = tokio::time::timeout(Duration::from_secs(2), extra.read(&mut buf)).await;
        assert!(
            matches!(r, Ok(Ok(0)) | Ok(Err(_))),
            "5th connection not closed: {r:?}"
        );
        drop(held);
        tokio::time::sleep(Duration::from_millis(100)).await;
        let (st, _, _) = http(a, get(a, "/v2/health/live")).await;
        assert_eq!(st, 200, "served again once connections closed");
    }
    // The gRPC endpoint holds to the same per-IP cap.
    let g = w.grpc_addr().unwrap();
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(tokio::net::TcpStream::connect(g).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut extra = tokio::net::TcpStream::connect(g).await.unwrap();
    let mut buf = [0u8; 16];
    let r = tokio::time::timeout(Duration::from_secs(2), extra.read(&mut buf)).await;
    assert!(
        matches!(r, Ok(Ok(0)) | Ok(Err(_))),
        "5th gRPC connection not closed: {r:?}"
    );
    w.shutdown().await;
    l.stop().await;
}

/// How long a raw TCP connection to `a` stays open (capped at `cap`) after sending `first`
/// (nothing when empty) and then nothing.
async fn held_open(a: SocketAddr, first: &[u8], cap: Duration) -> Duration {
    let mut s = tokio::net::TcpStream::connect(a).await.unwrap();
    let t = Instant::now();
    if !first.is_empty() {
        s.write_all(first).await.unwrap();
    }
    let mut buf = [0u8; 4096];
    while t.elapsed() < cap {
        match tokio::time::timeout(cap.saturating_sub(t.elapsed()), s.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return t.elapsed(),
            Ok(Ok(_)) | Err(_) => {}
        }
    }
    t.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_and_idle_connections_are_closed_at_the_header_timeout() {
    let limits = json!({"listen": "127.0.0.1:0", "header_read_timeout_ms": 400});
    let w = start(config(
        &[("s1", "cnn-s", 1, 0.0)],
        json!({"http": limits, "grpc": {"listen": "127.0.0.1:0"}}),
    ))
    .await;
    let l = live(
        false,
        json!({"http": limits, "grpc": {"listen": "127.0.0.1:0"}}),
    )
    .await;
    let cap = Duration::from_secs(4);
    let keep_alive = b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n";
    for (what, a) in [
        ("worker HTTP", w.http_addr()),
        ("worker gRPC", w.grpc_addr().unwrap()),
        ("gateway HTTP", l.addr()),
        ("gateway gRPC", l.gw.grpc_addr().unwrap()),
    ] {
        // Never a byte: no request line, no HTTP/2 preface.
        let open = held_open(a, b"", cap).await;
        assert!(
            open >= Duration::from_millis(300) && open < Duration::from_millis(2500),
            "{what}: a silent connection held {open:?}"
        );
    }
    for (what, a) in [("worker", w.http_addr()), ("gateway", l.addr())] {
        // One request answered, then silence on the kept-alive connection.
        let open = held_open(a, keep_alive, cap).await;
        assert!(
            open < Duration::from_millis(2500),
            "{what}: an idle kept-alive connection held {open:?}"
        );
    }
    w.shutdown().await;
    l.stop().await;
}
