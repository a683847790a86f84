//! Retry-on-reset: the central office's worker (the real binary) is killed with SIGKILL while a
//! stream's queries are in flight to it. The gateway notices the silence (`worker_silence_ms`),
//! drops the connection, and re-sends each query that was in flight there to the cloud's worker,
//! whose answer the client gets (200) since the deadline allows; with a retry budget of nothing,
//! the same queries are answered 502 and the refusals counted.

use crate::gateway_support::*;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The value of the sample `name` (with its labels) in Prometheus text `m`; panics when it is
/// absent, so that a misnamed metric cannot pass for zero.
fn metric(m: &str, name: &str) -> f64 {
    m.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no sample {name} in:\n{m}"))
}

/// `continuum_gateway_retries_total{result="<result>"}`, 0 when the counter has not been
/// created yet; panics unless `result` is one of the results the family's help lists.
fn retries(m: &str, result: &str) -> f64 {
    let help = m
        .lines()
        .find(|l| l.starts_with("# HELP continuum_gateway_retries "))
        .unwrap_or_else(|| panic!("no retries family in:\n{m}"));
    assert!(
        help.split([':', ',', ' ']).any(|w| w == result),
        "`{result}` is not a retry result: {help}"
    );
    let name = format!("continuum_gateway_retries_total{{result=\"{result}\"}}");
    if m.lines().any(|l| l.starts_with(&format!("{name} "))) {
        metric(m, &name)
    } else {
        0.0
    }
}

/// Polls `what` every 20 ms until it holds; panics after `within`.
async fn wait_until(within: Duration, why: &str, mut what: impl AsyncFnMut() -> bool) {
    let until = Instant::now() + within;
    while !what().await {
        assert!(Instant::now() < until, "timed out waiting: {why}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The statuses and answering clusters of a stream's queries while its worker is killed (until
/// the cloud has answered some and the gateway's metrics satisfy `done`), and the metrics.
async fn kill_under_load(retry: Value, done: fn(&str) -> bool) -> (Vec<(u16, String)>, String) {
    let dir = tempfile::tempdir().unwrap();
    let co_quic = free_addr(true);
    let co_cert = dir.path().join("co.der");
    let mut co = spawn_with_config(
        "worker",
        &dir.path().join("worker-co.yaml"),
        &worker_file_json(
            "worker-co",
            &[("cnn-s-b1", "cnn-s"), ("cnn-m-b1", "cnn-m")],
            co_quic,
            &co_cert,
        ),
    );
    let cloud = start(cloud_config(dir.path(), "127.0.0.1:0")).await;
    wait_file(&co_cert).await;
    let cloud_up = json!({"name": "worker-cloud", "cluster": "cloud", "protocol": "quic",
                          "address": cloud.quic_addr().to_string(), "cert": dir.path().join("cloud.der")});
    // assumption: 300 ms is 6 of the worker's 50 ms report periods, far above a report's
    // delay on a loaded test machine, and far below the stream's 5 s deadline.
    let cfg = gateway_json_with(
        dir.path(),
        co_quic,
        cloud_up,
        json!({"worker_silence_ms": 300, "retry": retry}),
    );
    let gw = continuum_gateway::Gateway::start(serde_json::from_value(cfg).unwrap())
        .await
        .expect("gateway starts");
    assert!(
        gw.wait_workers_up(Duration::from_secs(60)).await,
        "workers up"
    );
    let a = gw.http_addr();
    // Connected is not yet reachable: wait until both workers' load reports are in the view
    // (co-0's two variants and the cloud's two), or the open may find no worker (it did once).
    wait_reachable(a, 4, Duration::from_secs(60)).await;
    // Served by either cluster; least-impedance puts it on the central office.
    let s = open(a, &stream_req(5000.0, 0.2)).await;
    assert_eq!(s["cluster"], "co-0");
    let path = format!("/v1/streams/{}/infer", s["stream_id"].as_str().unwrap());
    // Four clients send the stream's queries back to back until told to stop.
    let stop = Arc::new(AtomicBool::new(false));
    // Answers seen from each cluster.
    let (from_co, from_cloud) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let load: Vec<_> = (0..4)
        .map(|_| {
            let (path, stop) = (path.clone(), stop.clone());
            let (from_co, from_cloud) = (from_co.clone(), from_cloud.clone());
            tokio::spawn(async move {
                let mut seen = Vec::new();
                while !stop.load(Ordering::Acquire) {
                    let (st, h, _) = http(a, post_json(a, &path, &infer_json(1))).await;
                    let cluster = h
                        .get("x-continuum-cluster")
                        .map_or("-", |v| v.to_str().unwrap_or("?"))
                        .to_string();
                    match (st.as_u16(), cluster.as_str()) {
                        (200, "co-0") => from_co.fetch_add(1, Ordering::AcqRel),
                        (200, "cloud") => from_cloud.fetch_add(1, Ordering::AcqRel),
                        _ => 0,
                    };
                    seen.push((st.as_u16(), cluster));
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                seen
            })
        })
        .collect();
    // Queries flowing to the central office (each client has had answers from it)...
    wait_until(Duration::from_secs(30), "answers from co-0", async || {
        from_co.load(Ordering::Acquire) >= 8
    })
    .await;
    co.kill().expect("SIGKILL");
    let _ = co.wait();
    // ... the silence, the retries, then a while on the cloud.
    wait_until(
        Duration::from_secs(30),
        "answers from the cloud",
        async || from_cloud.load(Ordering::Acquire) >= 8 && done(&metrics_of(a).await),
    )
    .await;
    stop.store(true, Ordering::Release);
    let mut seen = Vec::new();
    for h in load {
        seen.extend(h.await.unwrap());
    }
    let m = metrics_of(a).await;
    gw.shutdown().await;
    cloud.shutdown().await;
    (seen, m)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_killed_workers_queries_are_answered_by_the_other_worker() {
    let (seen, m) = kill_under_load(json!({}), |m| {
        retries(m, "retried") >= 1.0 && retries(m, "answered") >= 1.0
    })
    .await;
    let not_ok: Vec<_> = seen.iter().filter(|(s, _)| *s != 200).collect();
    assert!(not_ok.is_empty(), "every query answered 200: {not_ok:?}");
    assert!(
        seen.iter().any(|(_, c)| c == "co-0"),
        "answers before the kill"
    );
    assert!(
        seen.iter().any(|(_, c)| c == "cloud"),
        "answers after the kill"
    );
    // The queries in flight at the kill were re-sent and answered, none refused.
    assert!(retries(&m, "retried") >= 1.0, "{m}");
    assert!(retries(&m, "answered") >= 1.0, "{m}");
    assert_eq!(retries(&m, "budget_refused"), 0.0, "{m}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn without_retry_budget_the_same_queries_fail() {
    let (seen, m) = kill_under_load(json!({"budget_ratio": 0.0, "min_per_s": 0.0}), |m| {
        retries(m, "budget_refused") >= 1.0
    })
    .await;
    let failed = seen.iter().filter(|(s, _)| *s == 502).count();
    assert!(failed >= 1, "502s without retries: {seen:?}");
    assert!(retries(&m, "budget_refused") >= 1.0, "{m}");
    assert_eq!(retries(&m, "retried"), 0.0, "{m}");
    // Streams still move to the cloud: only the queries in flight at the kill failed.
    assert!(
        seen.iter().any(|(s, c)| *s == 200 && c == "cloud"),
        "{seen:?}"
    );
}
