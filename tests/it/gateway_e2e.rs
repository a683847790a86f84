//! The gateway end to end on loopback with real workers: binding, forwarding (outputs equal
//! direct inference), one-shot OIP queries, HTTP upstreams, every bad input, admin auth and
//! the metrics.

use crate::gateway_support::*;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_bind_by_policy_and_answers_equal_direct_inference() {
    let l = live(false, json!({})).await;
    let a = l.addr();
    // Any model: least-impedance picks the nearest, fastest variant (the deadline is loose so
    // that slow debug builds still answer in time).
    let near = open(a, &stream_req(2000.0, 0.2)).await;
    assert_eq!(near["cluster"], "co-0");
    assert_eq!(near["variant"], "cnn-s-b1");
    assert_eq!(near["policy"], "least-impedance");
    assert_eq!(near["class"], "all");
    // Only cnn-l is accurate enough: the cloud.
    let far = open(a, &stream_req(2000.0, 0.5)).await;
    assert_eq!(far["cluster"], "cloud");
    assert_eq!(far["variant"], "cnn-l-b1");
    let expected = far["expected_delay_ms"].as_f64().unwrap();
    assert!(
        expected > 2.0 * (2.0 + 26.0),
        "expected delay {expected} ms"
    );

    for (s, model) in [(&near, "cnn-s"), (&far, "cnn-l")] {
        let path = format!("/v1/streams/{}/infer", s["stream_id"].as_str().unwrap());
        let (st, h, body) = http(a, post_json(a, &path, &infer_json(1))).await;
        assert_eq!(st, 200, "{}", String::from_utf8_lossy(&body));
        assert_eq!(h["x-continuum-outcome"], "success");
        assert_close(&output_of(&body), &direct(model, 1), 1e-4);
        // The binary tensor extension: the gateway relays the tensor's bytes to the QUIC worker.
        let (bin, header_len) = infer_binary(1);
        let req = hyper::Request::post(format!("http://{a}{path}"))
            .header("host", "localhost")
            .header("inference-header-content-length", header_len)
            .body(http_body_util::Full::new(bytes::Bytes::from(bin)))
            .unwrap();
        let (st, h, body) = http(a, req).await;
        assert_eq!(st, 200, "{}", String::from_utf8_lossy(&body));
        let n = header_len_of(&h);
        let v: Value = serde_json::from_slice(&body[..n]).unwrap();
        let out = continuum_wire::Tensor {
            shape: serde_json::from_value(v["outputs"][0]["shape"].clone()).unwrap(),
            data: continuum_wire::fp32::decode_le(&body[n..]),
        };
        assert_close(&out, &direct(model, 1), 1e-4);
    }
    // GET shows the binding; DELETE closes; the closed stream is unknown.
    let id = near["stream_id"].as_str().unwrap();
    let (st, _, body) = http(a, get(a, &format!("/v1/streams/{id}"))).await;
    assert_eq!(st, 200);
    assert_eq!(
        serde_json::from_slice::<Value>(&body).unwrap()["worker"],
        "worker-co"
    );
    let (st, _, _) = http(
        a,
        request(a, "DELETE", &format!("/v1/streams/{id}"), None, None),
    )
    .await;
    assert_eq!(st, 204);
    let (st, _, body) = http(
        a,
        post_json(a, &format!("/v1/streams/{id}/infer"), &infer_json(1)),
    )
    .await;
    assert_eq!(st, 404);
    assert!(error_of(&body).contains("unknown stream"));

    // Every query counted exactly once, by outcome, app, variant and cluster.
    let (_, _, m) = http(a, get(a, "/metrics")).await;
    let m = String::from_utf8(m.to_vec()).unwrap();
    assert_eq!(
        metric_sum(&m, "continuum_gateway_queries_total{outcome=\"success\""),
        4.0,
        "{m}"
    );
    assert!(m.contains("cluster=\"cloud\""));
    assert!(metric_sum(&m, "continuum_gateway_decision_seconds_count") >= 2.0);
    assert!(
        m.contains("continuum_gateway_active_policy{class=\"all\",policy=\"least-impedance\"} 1")
    );
    assert!(m.contains("continuum_gateway_load_view_age_seconds"));
    // The QUIC worker connection's transport counters are exported.
    assert!(
        metric_sum(
            &m,
            "continuum_gateway_upstream_quic{worker=\"worker-co\",stat=\"sent_packets\"}"
        ) > 0.0,
        "{m}"
    );
    assert!(m.contains("stat=\"lost_packets\""));
    l.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_shot_oip_queries_and_metadata_work_as_against_a_server() {
    // The cloud worker over plain HTTP (any OIP v2 server), the central office over QUIC.
    let l = live(true, json!({})).await;
    let a = l.addr();
    let (st, _, _) = http(a, get(a, "/v2/health/ready")).await;
    assert_eq!(st, 200);
    let (st, _, body) = http(a, get(a, "/v2/models/object-detection")).await;
    assert_eq!(st, 200);
    let meta: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(meta["inputs"][0]["shape"], json!([-1, 3, 64, 64]));
    let mut q = infer_json(1);
    q["parameters"] = json!({"max_delay_ms": 2000.0, "min_accuracy": 0.5});
    let (st, h, body) = http(a, post_json(a, "/v2/models/object-detection/infer", &q)).await;
    assert_eq!(st, 200, "{}", String::from_utf8_lossy(&body));
    assert_eq!(h["x-continuum-cluster"], "cloud");
    assert_close(&output_of(&body), &direct("cnn-l", 1), 1e-4);
    q["parameters"] = json!({"max_delay_ms": 100.0, "min_accuracy": 0.2});
    let (st, h, body) = http(a, post_json(a, "/v2/models/object-detection/infer", &q)).await;
    assert_eq!(st, 200, "{}", String::from_utf8_lossy(&body));
    assert_eq!(h["x-continuum-cluster"], "co-0");
    assert_close(&output_of(&body), &direct("cnn-s", 1), 1e-4);
    // The HTTP worker's load reaches the view through its metrics endpoint.
    let (_, _, w) = http(a, get(a, "/v1/workers")).await;
    let w: Value = serde_json::from_slice(&w).unwrap();
    assert!(
        w["workers"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x["up"] == true),
        "{w}"
    );
    l.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_clear_errors_and_nothing_breaks() {
    // A body limit between one and two images in JSON.
    let one = serde_json::to_vec(&infer_json(1)).unwrap().len();
    let l = live(
        false,
        json!({"stream_open_rate": 0.5, "stream_open_burst": 4.0,
               "http": {"listen": "127.0.0.1:0", "max_body_bytes": one + 1000}}),
    )
    .await;
    let a = l.addr();
    let raw = |body: &'static str| {
        hyper::Request::post(format!("http://{a}/v1/streams"))
            .header("host", "localhost")
            .body(http_body_util::Full::new(bytes::Bytes::from(body)))
            .unwrap()
    };
    // Malformed JSON: 400 with the parser's position.
    let (st, _, body) = http(a, raw("{\"task\": ")).await;
    assert_eq!(st, 400);
    assert!(
        error_of(&body).contains("line 1 column"),
        "{}",
        error_of(&body)
    );
    // A field out of range: 400 naming it.
    let mut r = stream_req(60.0, 0.2);
    r["rate_qps"] = json!(-1);
    let (st, _, body) = http(a, post_json(a, "/v1/streams", &r)).await;
    assert_eq!(st, 400);
    assert!(error_of(&body).starts_with("rate_qps"));
    // The rate's deprecated name is accepted, and the answer says what to send instead.
    let mut r = stream_req(2000.0, 0.2);
    let rate = r.as_object_mut().unwrap().remove("rate_qps").unwrap();
    r["rate_fps"] = rate;
    let (st, _, body) = http(a, post_json(a, "/v1/streams", &r)).await;
    assert_eq!(st, 201, "{}", String::from_utf8_lossy(&body));
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert!(
        v["warnings"][0]
            .as_str()
            .unwrap()
            .contains("send `rate_qps`"),
        "{v}"
    );
    let id = v["stream_id"].as_str().unwrap();
    let (st, _, _) = http(
        a,
        request(a, "DELETE", &format!("/v1/streams/{id}"), None, None),
    )
    .await;
    assert_eq!(st, 204);
    // Both names at once: 400.
    r["rate_qps"] = json!(15);
    let (st, _, body) = http(a, post_json(a, "/v1/streams", &r)).await;
    assert_eq!(st, 400);
    assert!(
        error_of(&body).contains("deprecated name"),
        "{}",
        error_of(&body)
    );
    // Unknown task: 404.
    let mut r = stream_req(60.0, 0.2);
    r["task"] = json!("pose-estimation");
    let (st, _, body) = http(a, post_json(a, "/v1/streams", &r)).await;
    assert_eq!(st, 404);
    assert!(error_of(&body).contains("unknown task"));
    // Impossible requirements: 503 naming the constraint.
    // A deadline every worker meets, so accuracy alone rules them out whatever the RTTs.
    let (st, _, body) = http(a, post_json(a, "/v1/streams", &stream_req(500.0, 0.9))).await;
    assert_eq!(st, 503);
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["constraint"], "accuracy", "{v}");
    let (st, _, body) = http(a, post_json(a, "/v1/streams", &stream_req(1.0, 0.2))).await;
    assert_eq!(st, 503);
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["constraint"], "latency", "{v}");
    // One good stream, then bad queries on it.
    let s = open(a, &stream_req(500.0, 0.2)).await;
    let path = format!("/v1/streams/{}/infer", s["stream_id"].as_str().unwrap());
    let mut q = infer_json(1);
    q["inputs"][0]["shape"] = json!([1, 3, 64]);
    let (st, _, body) = http(a, post_json(a, &path, &q)).await;
    assert_eq!(st, 400, "{}", String::from_utf8_lossy(&body));
    let (st, _, _) = http(a, post_json(a, &path, &infer_json(2))).await;
    assert_eq!(st, 413, "two images in JSON exceed the limit");
    let (st, _, _) = http(a, post_json(a, "/v1/streams/999999/infer", &infer_json(1))).await;
    assert_eq!(st, 404);
    let (st, _, _) = http(a, get(a, "/v1/nowhere")).await;
    assert_eq!(st, 404, "an unknown path is not found, whatever its prefix");
    let (st, _, _) = http(a, get(a, "/v1/streams")).await;
    assert_eq!(st, 405, "a known path with the wrong method");
    // A flood of opens: the bucket of 4 is spent (2 above + 1 good + this one), then 429.
    let mut limited = 0;
    for _ in 0..6 {
        let (st, _, _) = http(a, post_json(a, "/v1/streams", &stream_req(500.0, 0.2))).await;
        if st == 429 {
            limited += 1;
        }
    }
    assert!(limited >= 4, "{limited} opens limited");
    // The good stream still works.
    let (st, _, _) = http(a, post_json(a, &path, &infer_json(1))).await;
    assert_eq!(st, 200);
    l.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policy_can_be_pinned_only_with_the_admin_token() {
    let l = live(false, json!({})).await;
    let a = l.addr();
    let body = json!({"policy": "farthest"});
    for token in [None, Some("wrong")] {
        let (st, _, _) = http(a, request(a, "PUT", "/v1/policy", token, Some(&body))).await;
        assert_eq!(st, 401);
    }
    let (st, _, _) = http(a, request(a, "POST", "/v1/reload", None, None)).await;
    assert_eq!(st, 401);
    let (st, _, b) = http(
        a,
        request(
            a,
            "PUT",
            "/v1/policy",
            Some("s3cret"),
            Some(&json!({"policy": "nope"})),
        ),
    )
    .await;
    assert_eq!(st, 400);
    assert!(error_of(&b).contains("known policies"));
    let (st, _, b) = http(
        a,
        request(a, "PUT", "/v1/policy", Some("s3cret"), Some(&body)),
    )
    .await;
    assert_eq!(st, 200, "{}", String::from_utf8_lossy(&b));
    let (_, _, b) = http(a, get(a, "/v1/policy")).await;
    let p: Value = serde_json::from_slice(&b).unwrap();
    assert_eq!(
        (p["policy"].as_str(), p["source"].as_str()),
        (Some("farthest"), Some("pinned"))
    );
    // farthest: a stream any worker can serve goes to the cloud.
    let s = open(a, &stream_req(2000.0, 0.2)).await;
    assert_eq!(s["cluster"], "cloud");
    // Unpin: back to the configured policy.
    let (st, _, _) = http(
        a,
        request(
            a,
            "PUT",
            "/v1/policy",
            Some("s3cret"),
            Some(&json!({"policy": null})),
        ),
    )
    .await;
    assert_eq!(st, 200);
    let s = open(a, &stream_req(2000.0, 0.2)).await;
    assert_eq!(s["cluster"], "co-0");
    l.stop().await;
}

#[test]
fn bad_gateway_configs_fail_with_the_field_and_no_panic() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::read_to_string(repo("config/gateway.yaml")).unwrap();
    let cases = [
        (
            "scheduler: ant-00",
            "scheduler: co-0",
            "not an access cluster",
        ),
        (
            "policy: least-impedance ",
            "policy: nearest ",
            "unknown policy `nearest`",
        ),
        (
            "window_ms: 5000 ",
            "window_ms: 0 ",
            "window_ms: expected >= 1",
        ),
        (
            "address: 127.0.0.1:8011",
            "address: nowhere",
            "workers[0].address",
        ),
        ("cluster: co-0", "cluster: co-9", "no cluster `co-9`"),
    ];
    for (from, to, needle) in cases {
        assert!(base.contains(from), "config/gateway.yaml has `{from}`");
        let f = dir.path().join("g.yaml");
        std::fs::write(&f, base.replacen(from, to, 1)).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_continuum"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["gateway", "--config"])
            .arg(&f)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{to}: {err}");
        assert!(err.contains(needle), "{to}: `{err}` lacks `{needle}`");
        assert!(!err.contains("panicked"), "{err}");
    }
}
