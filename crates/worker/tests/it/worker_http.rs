//! The worker's Open Inference Protocol v2 front end on loopback: round trips against direct
//! inference (JSON and binary tensors), metadata and health routes, /metrics, and every kind of
//! bad input with its status and `{"error": …}` body.

use bytes::Bytes;
use continuum_testkit::worker::*;
use continuum_wire::Tensor;
use http_body_util::Full;
use hyper::{Request, StatusCode};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_and_binary_round_trips_match_direct_inference() {
    let w = start(config(
        &[("s4", "cnn-s", 4, 1.0), ("m1", "cnn-m", 1, 0.0)],
        json!({}),
    ))
    .await;
    let a = w.http_addr();
    for (variant, model, n) in [("s4", "cnn-s", 3), ("m1", "cnn-m", 1)] {
        let (st, _, body) = http(
            a,
            post_json(a, &format!("/v2/models/{variant}/infer"), &infer_json(n)),
        )
        .await;
        assert_eq!(st, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["model_name"], variant);
        assert_eq!(v["id"], "q1");
        assert_close(&output_of_json(&v), &direct(model, n), 1e-5);
    }
    // Binary tensor extension, in and out, through the versioned route.
    let (body, header_len) = infer_binary(2);
    let req = Request::post(format!("http://{a}/v2/models/s4/versions/1/infer"))
        .header("host", "localhost")
        .header("inference-header-content-length", header_len)
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    let (st, headers, body) = http(a, req).await;
    assert_eq!(st, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
    let n = header_len_of(&headers);
    let v: Value = serde_json::from_slice(&body[..n]).unwrap();
    assert_eq!(
        v["outputs"][0]["parameters"]["binary_data_size"],
        2 * 16 * 4
    );
    let data: Vec<f32> = body[n..]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let got = Tensor {
        shape: vec![2, 16],
        data,
    };
    assert_close(&got, &direct("cnn-s", 2), 1e-5);
    w.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_health_and_metrics() {
    let w = start(config(&[("s1", "cnn-s", 1, 0.0)], json!({}))).await;
    let a = w.http_addr();
    let (st, _, body) = http(a, get(a, "/v2")).await;
    assert_eq!(st, StatusCode::OK);
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert!(
        v["extensions"]
            .as_array()
            .unwrap()
            .contains(&json!("binary_tensor_data"))
    );
    for path in ["/v2/health/live", "/v2/health/ready", "/v2/models/s1/ready"] {
        assert_eq!(http(a, get(a, path)).await.0, StatusCode::OK, "{path}");
    }
    let (st, _, body) = http(a, get(a, "/v2/models/s1")).await;
    assert_eq!(st, StatusCode::OK);
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        v["inputs"][0],
        json!({"name": "input", "datatype": "FP32", "shape": [-1, 3, 64, 64]})
    );
    assert_eq!(v["outputs"][0]["shape"], json!([-1, 16]));
    let (st, _, _) = http(a, post_json(a, "/v2/models/s1/infer", &infer_json(1))).await;
    assert_eq!(st, StatusCode::OK);
    let (st, _, body) = http(a, get(a, "/metrics")).await;
    assert_eq!(st, StatusCode::OK);
    let text = String::from_utf8(body.to_vec()).unwrap();
    for needle in [
        "nv_inference_pending_request_count{model=\"s1\"} 0",
        "nv_inference_request_success_total{model=\"s1\"} 1",
        "continuum_incoming_qps{model=\"s1\"}",
        "nv_inference_exec_count_total{model=\"s1\"} 1",
    ] {
        assert!(text.contains(needle), "missing `{needle}` in\n{text}");
    }
    w.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_inputs_get_clear_errors() {
    let w = start(config(
        &[("s2", "cnn-s", 2, 0.0)],
        json!({"http": {"max_body_bytes": 500_000}}),
    ))
    .await;
    let a = w.http_addr();
    let infer = "/v2/models/s2/infer";
    let mut wrong_shape = infer_json(1);
    wrong_shape["inputs"][0]["shape"] = json!([1, 3, 32, 128]);
    // Three whole items (data and shape agree; zeros keep the body small) for a variant of
    // batch 1 or 2.
    let mut too_many = infer_json(1);
    too_many["inputs"][0]["shape"] = json!([3, 3, 64, 64]);
    too_many["inputs"][0]["data"] = json!(vec![0u8; 3 * 3 * 64 * 64]);
    let mut wrong_type = infer_json(1);
    wrong_type["inputs"][0]["datatype"] = json!("INT64");
    let mut wrong_name = infer_json(1);
    wrong_name["inputs"][0]["name"] = json!("image");
    let mut short_data = infer_json(1);
    short_data["inputs"][0]["data"] = json!([1.0, 2.0]);
    let mut strings = infer_json(1);
    strings["inputs"][0]["data"] = json!(["a"]);
    let mut bad_deadline = infer_json(1);
    bad_deadline["parameters"] = json!({"deadline_ms": -1});
    let cases: Vec<(&str, Value, StatusCode, &str)> = vec![
        (
            "wrong shape",
            wrong_shape,
            StatusCode::BAD_REQUEST,
            "wrong shape",
        ),
        (
            "batch over B",
            too_many,
            StatusCode::BAD_REQUEST,
            "batch of 3",
        ),
        (
            "wrong datatype",
            wrong_type,
            StatusCode::BAD_REQUEST,
            "datatype INT64",
        ),
        (
            "wrong input name",
            wrong_name,
            StatusCode::BAD_REQUEST,
            "unknown input `image`",
        ),
        (
            "data too short",
            short_data,
            StatusCode::BAD_REQUEST,
            "needs 12288 values, got 2",
        ),
        (
            "non-numeric data",
            strings,
            StatusCode::BAD_REQUEST,
            "must be numbers",
        ),
        (
            "bad deadline",
            bad_deadline,
            StatusCode::BAD_REQUEST,
            "deadline_ms",
        ),
        (
            "not a request",
            json!({"hello": 1}),
            StatusCode::BAD_REQUEST,
            "invalid inference request JSON",
        ),
    ];
    for (what, body, status, needle) in cases {
        let (st, _, resp) = http(a, post_json(a, infer, &body)).await;
        assert_eq!(st, status, "{what}");
        let e = error_of(&resp);
        assert!(e.contains(needle), "{what}: `{e}` lacks `{needle}`");
    }
    // Malformed JSON.
    let req = Request::post(format!("http://{a}{infer}"))
        .header("host", "localhost")
        .body(Full::new(Bytes::from_static(b"{\"inputs\": [")))
        .unwrap();
    let (st, _, resp) = http(a, req).await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    assert!(error_of(&resp).contains("invalid inference request JSON"));
    // Truncated binary data: declares a whole image, sends 100 bytes.
    let header = serde_json::to_vec(
        &json!({"inputs": [{"name": "input", "shape": [1, 3, 64, 64],
        "datatype": "FP32", "parameters": {"binary_data_size": 49152}}]}),
    )
    .unwrap();
    let mut body = header.clone();
    body.extend([0u8; 100]);
    let req = Request::post(format!("http://{a}{infer}"))
        .header("host", "localhost")
        .header("inference-header-content-length", header.len())
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    let (st, _, resp) = http(a, req).await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    assert!(
        error_of(&resp).contains("truncated binary data"),
        "{}",
        error_of(&resp)
    );
    // Header length past the end of the body.
    let req = Request::post(format!("http://{a}{infer}"))
        .header("host", "localhost")
        .header("inference-header-content-length", 5000)
        .body(Full::new(Bytes::from_static(b"{}")))
        .unwrap();
    let (st, _, resp) = http(a, req).await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    assert!(error_of(&resp).contains("Inference-Header-Content-Length is 5000"));
    // Huge body: over the configured 500 000 bytes, refused from its declared length before any
    // of it is read (sent as headers alone: a client still writing a megabyte could see the
    // connection closed under it instead of the answer).
    let answer = head_only(
        a,
        &format!(
            "POST {infer} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: 1000000\r\n\r\n"
        ),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(
        answer.contains("over the limit of 500000 bytes"),
        "{answer}"
    );
    // Unknown model, unknown route, wrong method.
    let (st, _, resp) = http(a, post_json(a, "/v2/models/nope/infer", &infer_json(1))).await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    assert!(error_of(&resp).contains("unknown model `nope`"));
    assert_eq!(
        http(a, get(a, "/v2/models/nope")).await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(http(a, get(a, "/nothing")).await.0, StatusCode::NOT_FOUND);
    let (st, _, resp) = http(a, get(a, infer)).await;
    assert_eq!(st, StatusCode::METHOD_NOT_ALLOWED);
    assert!(error_of(&resp).contains("method not allowed"));
    // After all that, the worker still serves.
    let (st, _, _) = http(a, post_json(a, infer, &infer_json(2))).await;
    assert_eq!(st, StatusCode::OK);
    w.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admission_refuses_an_impossible_deadline_with_429() {
    let w = start(config(&[("l1", "cnn-l", 1, 0.0)], json!({}))).await;
    let a = w.http_addr();
    let mut body = infer_json(1);
    body["parameters"] = json!({"deadline_ms": 0.001});
    let (st, _, resp) = http(a, post_json(a, "/v2/models/l1/infer", &body)).await;
    assert_eq!(st, StatusCode::TOO_MANY_REQUESTS);
    let v: Value = serde_json::from_slice(&resp).unwrap();
    assert_eq!(v["status"], "rejected");
    assert!(
        v["error"].as_str().unwrap().contains("cannot be met"),
        "{v}"
    );
    // A generous deadline is met.
    body["parameters"] = json!({"deadline_ms": 10_000, "stream_id": 4});
    let (st, _, _) = http(a, post_json(a, "/v2/models/l1/infer", &body)).await;
    assert_eq!(st, StatusCode::OK);
    w.shutdown().await;
}
