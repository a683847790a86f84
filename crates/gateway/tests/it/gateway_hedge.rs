//! Tail-latency mitigation in the gateway, end to end on loopback: a worker that is slower
//! than its profile says, the hedge (`reissue@r`) that answers from another worker, and the
//! early rejection (`discard@r`) through the worker's admission.

use continuum_gateway::{Gateway, GatewayConfig};
use continuum_testkit::gateway::*;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// `PUT /v1/policy` with the admin token and `body`.
async fn put_policy(a: std::net::SocketAddr, body: Value) -> (u16, Value) {
    let (st, _, b) = http(
        a,
        request(a, "PUT", "/v1/policy", Some("s3cret"), Some(&body)),
    )
    .await;
    (
        st.as_u16(),
        serde_json::from_slice(&b).unwrap_or(Value::Null),
    )
}

/// The central office's `cnn-s-b1` really waits up to this long to fill a batch of 4 (its
/// profile says batch 1, no wait): a lone query answers about this late.
const SLOW_MS: f64 = 800.0;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_query_is_hedged_to_another_worker_and_the_first_answer_wins() {
    let dir = tempfile::tempdir().unwrap();
    let co = start(config(
        &[("cnn-s-b1", "cnn-s", 4, SLOW_MS), ("cnn-m-b1", "cnn-m", 1, 0.0)],
        json!({"name": "worker-co", "quic": {"listen": "127.0.0.1:0", "dev_cert_out": dir.path().join("co.der")}}),
    ))
    .await;
    let cloud = start(cloud_config(dir.path(), "127.0.0.1:0")).await;
    let cfg: GatewayConfig =
        serde_json::from_value(gateway_json(dir.path(), &co, &cloud, false, json!({}))).unwrap();
    let gw = Gateway::start(cfg).await.expect("gateway starts");
    assert!(gw.wait_workers_up(Duration::from_secs(20)).await);
    let a = gw.http_addr();

    // least-impedance binds the fastest profile: cnn-s-b1 on the central office, once the
    // gateway has the worker's report of it (a worker is up at its first report, which on a
    // cold machine may reach the published view after the first open): wait until all four
    // variants of topologies/live.yaml are in the view, then open once.
    wait_reachable(a, 4, Duration::from_secs(20)).await;
    let s = open(a, &stream_req(3000.0, 0.2)).await;
    assert_eq!(s["variant"], "cnn-s-b1");
    let path = format!("/v1/streams/{}/infer", s["stream_id"].as_str().unwrap());
    let query = || async {
        let t = Instant::now();
        let (st, h, body) = http(a, post_json(a, &path, &infer_json(1))).await;
        assert_eq!(st, 200, "{}", String::from_utf8_lossy(&body));
        assert_eq!(h["x-continuum-outcome"], "success");
        let variant = h["x-continuum-variant"].to_str().unwrap().to_string();
        (t.elapsed(), variant)
    };

    // No mitigation: the slow batcher holds every answer back.
    for _ in 0..2 {
        let (took, variant) = query().await;
        assert_eq!(variant, "cnn-s-b1");
        assert!(took.as_secs_f64() * 1e3 >= SLOW_MS * 0.9, "{took:?}");
    }

    // Pin reissue at 0.1 × 3000 ms: at 300 ms the query goes again, to the next-best
    // binding (cnn-m-b1, same site), which answers first. Each query waits for the previous
    // loser's batch window to close first, so every loser is alone in its batch.
    let (st, v) = put_policy(a, json!({"mitigation": "reissue@0.1"})).await;
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["mitigation"], "reissue@0.1");
    assert_eq!(v["mitigation_source"], "pinned");
    assert_eq!(v["policy"], "least-impedance", "the policy is left alone");
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_secs_f64(SLOW_MS * 1.2 / 1e3)).await;
        let (took, variant) = query().await;
        assert_eq!(variant, "cnn-m-b1", "the copy's worker answered");
        let ms = took.as_secs_f64() * 1e3;
        assert!((300.0..SLOW_MS * 0.9).contains(&ms), "{ms} ms");
    }
    let (_, _, m) = http(a, get(a, "/metrics")).await;
    let m = String::from_utf8(m.to_vec()).unwrap();
    let count = |r: &str| {
        metric_sum(
            &m,
            &format!("continuum_gateway_mitigation_total{{result=\"{r}\"}}"),
        )
    };
    assert_eq!(count("reissued"), 3.0, "{m}");
    assert_eq!(count("reissue_won"), 3.0);
    assert_eq!(count("cancelled"), 3.0);
    assert_eq!(
        metric_sum(&m, "continuum_gateway_queries_total{outcome=\"success\""),
        5.0
    );
    assert_eq!(
        metric_sum(&m, "continuum_gateway_answer_seconds_count"),
        5.0
    );

    // Bad values are refused; `null` returns to the configured mitigation.
    let (st, v) = put_policy(a, json!({"mitigation": "reissue@2"})).await;
    assert_eq!(st, 400);
    assert!(v["error"].as_str().unwrap().contains("(0, 1]"), "{v}");
    // The per-job kinds are the simulator's only.
    for m in ["restart@0.8", "tdp@0.8"] {
        let (st, v) = put_policy(a, json!({"mitigation": m})).await;
        assert_eq!(st, 400);
        let e = v["error"].as_str().unwrap();
        assert!(e.contains(m) && e.contains("simulator-only"), "{v}");
    }
    let (st, v) = put_policy(a, json!({"mitigation": null})).await;
    assert_eq!(st, 200);
    assert_eq!(
        (v["mitigation"].as_str(), v["mitigation_source"].as_str()),
        (Some("none"), Some("static"))
    );

    // The losers were withdrawn: the gateway stopped their QUIC streams, and the worker left
    // them out of their batches (once each batch window closed).
    tokio::time::sleep(Duration::from_secs_f64(SLOW_MS * 1.2 / 1e3)).await;
    let (_, _, wm) = http(co.http_addr(), get(co.http_addr(), "/metrics")).await;
    let wm = String::from_utf8(wm.to_vec()).unwrap();
    assert_eq!(
        metric_sum(&wm, "continuum_cancelled_total{model=\"cnn-s-b1\"}"),
        3.0,
        "{wm}"
    );

    // Discard at 0.1: the worker's admission gets 300 ms, sees the 800 ms batching wait and
    // drops the query at once; the client hears `rejected` long before the deadline.
    assert_eq!(
        put_policy(a, json!({"mitigation": "discard@0.1"})).await.0,
        200
    );
    let t = Instant::now();
    let (st, _, body) = http(a, post_json(a, &path, &infer_json(1))).await;
    assert_eq!(st, 429, "{}", String::from_utf8_lossy(&body));
    assert!(
        t.elapsed() < Duration::from_millis(300),
        "{:?}",
        t.elapsed()
    );
    let (_, _, m) = http(a, get(a, "/metrics")).await;
    let m = String::from_utf8(m.to_vec()).unwrap();
    assert_eq!(
        metric_sum(
            &m,
            "continuum_gateway_mitigation_total{result=\"discarded\"}"
        ),
        1.0
    );

    gw.shutdown().await;
    co.shutdown().await;
    cloud.shutdown().await;
}
