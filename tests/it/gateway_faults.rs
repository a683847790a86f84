//! The gateway under faults and changes: a worker killed mid-stream (every query answered,
//! streams re-bound, the worker used again when it comes back), reload without dropping
//! streams, and the DQN meta-policy switching the policy live.

use crate::gateway_support::*;
use serde_json::{Value, json};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_worker_streams_move_and_it_is_used_again_when_back() {
    let mut l = live(false, json!({})).await;
    let a = l.addr();
    // Served by either cluster; least-impedance puts it on the central office.
    let s = open(a, &stream_req(5000.0, 0.2)).await;
    assert_eq!(s["cluster"], "co-0");
    // Every variant reachable: what the view must show again once the worker is back.
    let (_, _, w) = http(a, get(a, "/v1/workers")).await;
    let all = serde_json::from_slice::<Value>(&w).unwrap()["reachable_variants"]
        .as_u64()
        .unwrap();
    let path = format!("/v1/streams/{}/infer", s["stream_id"].as_str().unwrap());
    let co = l.co.take().unwrap();
    let co_quic = co.quic_addr().to_string();
    // Queries in flight while the worker goes away: every one gets an answer.
    let body = infer_json(1);
    let inflight: Vec<_> = (0..16)
        .map(|_| {
            let (p, b) = (path.clone(), body.clone());
            tokio::spawn(async move { http(a, post_json(a, &p, &b)).await })
        })
        .collect();
    co.shutdown().await;
    let mut statuses = Vec::new();
    for h in inflight {
        let (st, _, _) = tokio::time::timeout(Duration::from_secs(30), h)
            .await
            .expect("every in-flight query is answered")
            .unwrap();
        statuses.push(st.as_u16());
    }
    assert!(
        statuses
            .iter()
            .all(|s| [200, 429, 502, 503, 504].contains(s)),
        "{statuses:?}"
    );
    // The stream moves to the cloud on its next query.
    let mut moved = false;
    for _ in 0..50 {
        let (st, h, _) = http(a, post_json(a, &path, &body)).await;
        if st == 200 && h["x-continuum-cluster"] == "cloud" {
            moved = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(moved, "the stream was re-bound to the cloud");
    // The worker_up gauge follows the next load publication (every Δ), which may come just
    // after the re-binding: read the metrics until it does, for at most 5 s.
    let down = "continuum_gateway_worker_up{worker=\"worker-co\"} 0";
    let mut m = String::new();
    for _ in 0..50 {
        let (_, _, body) = http(a, get(a, "/metrics")).await;
        m = String::from_utf8(body.to_vec()).unwrap();
        if m.contains(down) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        metric_sum(&m, "continuum_gateway_rebinds_total") >= 1.0,
        "{m}"
    );
    assert!(m.contains(down), "{m}");
    // The worker comes back on the same address: new streams use it again.
    let co = start(co_config(l.dir.path(), &co_quic)).await;
    assert!(
        l.gw.wait_workers_up(Duration::from_secs(20)).await,
        "worker back up"
    );
    // Up is not yet in the view: wait for its load report before opening.
    wait_reachable(a, all, Duration::from_secs(20)).await;
    let s2 = open(a, &stream_req(5000.0, 0.2)).await;
    assert_eq!(s2["cluster"], "co-0");
    let (st, h, _) = http(
        a,
        post_json(
            a,
            &format!("/v1/streams/{}/infer", s2["stream_id"].as_str().unwrap()),
            &body,
        ),
    )
    .await;
    assert_eq!(
        (st.as_u16(), h["x-continuum-cluster"].to_str().unwrap()),
        (200, "co-0")
    );
    l.co = Some(co);
    l.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_applies_the_new_file_and_keeps_open_streams() {
    let (l, file) = live_from_file(json!({"policy": "least-impedance"})).await;
    let a = l.addr();
    let s = open(a, &stream_req(5000.0, 0.2)).await;
    let path = format!("/v1/streams/{}/infer", s["stream_id"].as_str().unwrap());
    l.write_config(&file, json!({"policy": "farthest"}));
    let (st, _, b) = http(a, request(a, "POST", "/v1/reload", Some("s3cret"), None)).await;
    assert_eq!(st, 200, "{}", String::from_utf8_lossy(&b));
    // The open stream keeps its binding and works; new streams follow the new policy.
    let (st, h, _) = http(a, post_json(a, &path, &infer_json(1))).await;
    assert_eq!(
        (st.as_u16(), h["x-continuum-cluster"].to_str().unwrap()),
        (200, "co-0")
    );
    let s2 = open(a, &stream_req(5000.0, 0.2)).await;
    assert_eq!(s2["cluster"], "cloud");
    // A broken file is refused and the running configuration kept.
    std::fs::write(&file, "topology: [").unwrap();
    let (st, _, b) = http(a, request(a, "POST", "/v1/reload", Some("s3cret"), None)).await;
    assert_eq!(st, 400);
    assert!(error_of(&b).contains("kept"));
    let (st, _, _) = http(a, post_json(a, &path, &infer_json(1))).await;
    assert_eq!(st, 200);
    l.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_meta_policy_switches_the_policy_every_window() {
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("live.dqn");
    train_live(&repo("tests/fixtures/tiny-dqn.yaml"), &ck);
    // `random` is not among the agent's actions: once the agent decides, the policy changes.
    let l = live(
        false,
        json!({"agent": ck, "policy": "random", "window_ms": 200}),
    )
    .await;
    let a = l.addr();
    let policy = || async {
        let (_, _, b) = http(a, get(a, "/v1/policy")).await;
        serde_json::from_slice::<Value>(&b).unwrap()
    };
    let p0 = policy().await;
    assert_eq!(p0["agent"], true);
    assert!(!p0["actions"].as_array().unwrap().contains(&json!("random")));
    let s = open(a, &stream_req(5000.0, 0.2)).await;
    let path = format!("/v1/streams/{}/infer", s["stream_id"].as_str().unwrap());
    for _ in 0..10 {
        let (st, _, _) = http(a, post_json(a, &path, &infer_json(1))).await;
        assert_eq!(st, 200);
        tokio::time::sleep(Duration::from_millis(60)).await;
    }
    // Each of the checkpoint's classes (one per app of workloads/live.yaml) gets its choice.
    let p = policy().await;
    assert_eq!(p["source"], "agent", "{p}");
    let classes = p["classes"].as_array().unwrap();
    let names: Vec<&str> = classes
        .iter()
        .map(|c| c["class"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ar-lite", "analytics"]);
    for c in classes {
        assert!(
            p0["actions"].as_array().unwrap().contains(&c["policy"]),
            "{p}"
        );
    }
    let (_, _, m) = http(a, get(a, "/metrics")).await;
    let m = String::from_utf8(m.to_vec()).unwrap();
    assert!(
        metric_sum(&m, "continuum_gateway_agent_decisions_total") >= 2.0,
        "{m}"
    );
    // An operator's pin wins over the agent until removed.
    let (st, _, _) = http(
        a,
        request(
            a,
            "PUT",
            "/v1/policy",
            Some("s3cret"),
            Some(&json!({"policy": "closest"})),
        ),
    )
    .await;
    assert_eq!(st, 200);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(policy().await["source"], "pinned");
    l.stop().await;
}
