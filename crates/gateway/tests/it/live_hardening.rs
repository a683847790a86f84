//! The live path against hostile and unusual clients, on a worker and a gateway: Triton's
//! tooling routes, batch-aware one-shot binding, compressed bodies, 404 for unknown paths,
//! unrepresentable deadlines, oversized headers, bounded metric
//! labels, unguessable stream ids, and bounded property tests over OIP bodies and stream
//! requests (no answer but a JSON one, never a dropped connection).

use bytes::Bytes;
use continuum_testkit::gateway::*;
use http_body_util::Full;
use hyper::{Request, StatusCode};
use proptest::prelude::*;
use serde_json::{Value, json};
use std::io::Write;
use std::net::SocketAddr;

fn body_json(b: &[u8]) -> Value {
    serde_json::from_slice(b).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(b)))
}

fn compressed(addr: SocketAddr, path: &str, enc: &str, body: &[u8]) -> Request<Full<Bytes>> {
    let data = match enc {
        "gzip" => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(body).unwrap();
            e.finish().unwrap()
        }
        "deflate" => {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(body).unwrap();
            e.finish().unwrap()
        }
        _ => body.to_vec(),
    };
    Request::post(format!("http://{addr}{path}"))
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("content-encoding", enc)
        .body(Full::new(Bytes::from(data)))
        .unwrap()
}

/// The tooling routes, compression, 404s and deadlines on one server (`model` is a model it
/// serves with batch size `max_batch`).
async fn common_routes(a: SocketAddr, model: &str, max_batch: usize) {
    // Triton's model configuration, statistics and repository index.
    let (st, _, b) = http(a, get(a, &format!("/v2/models/{model}/config"))).await;
    assert_eq!(st, 200, "{}", String::from_utf8_lossy(&b));
    let c = body_json(&b);
    assert_eq!(c["max_batch_size"], max_batch);
    assert_eq!(c["input"][0]["dims"], json!([3, 64, 64]));
    let (st, _, b) = http(a, get(a, &format!("/v2/models/{model}/versions/1/config"))).await;
    assert_eq!(st, 200);
    assert_eq!(body_json(&b)["name"], model);
    let (_, _, b) = http(a, get(a, &format!("/v2/models/{model}"))).await;
    assert_eq!(body_json(&b)["parameters"]["max_batch_size"], max_batch);
    let (st, _, _) = http(a, get(a, &format!("/v2/models/{model}/versions/2/config"))).await;
    assert_eq!(st, 404, "only version 1 exists");
    let (st, _, b) = http(a, post_json(a, "/v2/repository/index", &json!({}))).await;
    assert_eq!(st, 200);
    assert!(
        body_json(&b)
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["name"] == model)
    );

    // Compressed bodies: gzip and deflate decompress; others get 415.
    let q = serde_json::to_vec(&infer_json(1)).unwrap();
    let path = format!("/v2/models/{model}/infer");
    for enc in ["gzip", "deflate"] {
        let (st, _, b) = http(a, compressed(a, &path, enc, &q)).await;
        assert_eq!(st, 200, "{enc}: {}", String::from_utf8_lossy(&b));
    }
    let (st, _, b) = http(a, compressed(a, &path, "br", &q)).await;
    assert_eq!(st, 415);
    assert!(error_of(&b).contains("br"));
    // The limit applies to the decompressed size: 9 MiB of spaces gzip to a few KiB.
    let mut bomb = q.clone();
    bomb.extend(std::iter::repeat_n(b' ', 9 << 20));
    let (st, _, _) = http(a, compressed(a, &path, "gzip", &bomb)).await;
    assert_eq!(st, 413);

    let (_, _, b) = http(a, get(a, &format!("/v2/models/{model}/stats"))).await;
    let s = body_json(&b);
    assert!(
        s["model_stats"][0]["inference_count"].as_u64().unwrap() >= 2,
        "{s}"
    );
    let (st, _, b) = http(a, get(a, "/v2/models/stats")).await;
    assert_eq!(st, 200);
    assert!(!body_json(&b)["model_stats"].as_array().unwrap().is_empty());

    // Unknown paths are 404 whatever the method; known ones with the wrong method 405.
    for (m, p, want) in [
        ("GET", "/v2/foo", 404),
        ("POST", "/v2/foo/bar", 404),
        ("GET", "/v2/models/x/y/z", 404),
        ("GET", "/v2/repository/index", 405),
        ("DELETE", "/v2", 405),
    ] {
        let (st, _, b) = http(a, request(a, m, p, None, None)).await;
        assert_eq!(st.as_u16(), want, "{m} {p}");
        error_of(&b);
    }

    // Deadlines a Duration cannot hold are a 400 naming the field, not a dropped connection.
    for d in [json!(1.9e22), json!(-1), json!("soon"), json!(1e300)] {
        let mut q = infer_json(1);
        q["parameters"] = json!({"deadline_ms": d});
        let (st, _, b) = http(a, post_json(a, &path, &q)).await;
        assert_eq!(st, 400, "deadline {d}");
        assert!(error_of(&b).contains("parameters.deadline_ms"), "{d}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_and_gateway_serve_tooling_routes_compression_and_checked_deadlines() {
    let w = start(config(&[("s2", "cnn-s", 2, 1.0)], json!({}))).await;
    common_routes(w.http_addr(), "s2", 2).await;
    w.shutdown().await;
    let l = live(false, json!({})).await;
    common_routes(l.addr(), "object-detection", 4).await;
    l.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_one_shot_binds_on_the_request_batch() {
    let l = live(false, json!({})).await;
    let a = l.addr();
    // 4 items: only the cloud's cnn-l-b4 holds them (before, this went to a batch-1 variant
    // and came back 400).
    let (st, h, b) = http(
        a,
        post_json(a, "/v2/models/object-detection/infer", &infer_json(4)),
    )
    .await;
    assert_eq!(st, 200, "{}", String::from_utf8_lossy(&b));
    assert_eq!(h["x-continuum-variant"], "cnn-l-b4");
    assert_close(&output_of(&b), &direct("cnn-l", 4), 1e-4);
    // 5 items: no variant holds them; the answer names the batch constraint.
    let (st, _, b) = http(
        a,
        post_json(a, "/v2/models/object-detection/infer", &infer_json(5)),
    )
    .await;
    assert_eq!(st, 503, "{}", String::from_utf8_lossy(&b));
    assert_eq!(body_json(&b)["constraint"], "batch");
    // A stream may state its items per query too.
    let mut r = stream_req(2000.0, 0.2);
    r["items"] = json!(2);
    let s = open(a, &r).await;
    assert_eq!(s["variant"], "cnn-l-b4");
    l.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_headers_get_a_json_431() {
    let w = start(config(&[("s1", "cnn-s", 1, 0.0)], json!({}))).await;
    let l = live(false, json!({})).await;
    for a in [w.http_addr(), l.addr()] {
        let mut r = get(a, "/v2");
        r.headers_mut()
            .insert("x-big", "a".repeat(20_000).parse().unwrap());
        let (st, _, b) = http(a, r).await;
        assert_eq!(st, 431);
        assert!(error_of(&b).contains("header"));
        let mut r = get(a, "/v2");
        for i in 0..80 {
            r.headers_mut().insert(
                format!("x-h{i}")
                    .parse::<hyper::header::HeaderName>()
                    .unwrap(),
                "1".parse().unwrap(),
            );
        }
        let (st, _, b) = http(a, r).await;
        assert_eq!(st, 431);
        assert!(error_of(&b).contains("header fields"));
    }
    w.shutdown().await;
    l.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn app_labels_are_bounded_and_stream_ids_unguessable() {
    let l = live(
        false,
        json!({"app_classes": ["ar-overlay"], "stream_open_burst": 1000}),
    )
    .await;
    let a = l.addr();
    // 40 streams, each with its own app name: one configured class, the rest `other`.
    let mut tokens = Vec::new();
    for i in 0..40 {
        let mut r = stream_req(2000.0, 0.2);
        r["app"] = json!(if i == 0 {
            "ar-overlay".to_string()
        } else {
            format!("app-{i}")
        });
        let s = open(a, &r).await;
        let t = s["stream_id"].as_str().expect("a token").to_string();
        let (st, _, _) = http(
            a,
            post_json(a, &format!("/v1/streams/{t}/infer"), &infer_json(1)),
        )
        .await;
        assert_eq!(st, 200);
        tokens.push(t);
    }
    let (_, _, m) = http(a, get(a, "/metrics")).await;
    let m = String::from_utf8(m.to_vec()).unwrap();
    let apps: std::collections::BTreeSet<&str> = m
        .lines()
        .filter(|l| l.starts_with("continuum_gateway_queries_total{"))
        .filter_map(|l| l.split("app=\"").nth(1)?.split('"').next())
        .collect();
    assert_eq!(
        apps.into_iter().collect::<Vec<_>>(),
        ["ar-overlay", "other"]
    );
    // An app name over the limit is refused.
    let mut r = stream_req(2000.0, 0.2);
    r["app"] = json!("x".repeat(256 << 10));
    let (st, _, b) = http(a, post_json(a, "/v1/streams", &r)).await;
    assert_eq!(st, 400);
    assert!(error_of(&b).starts_with("app"));

    // Ids are 128-bit random tokens: distinct, long, and neither small integers nor altered
    // tokens name a stream.
    let set: std::collections::HashSet<&String> = tokens.iter().collect();
    assert_eq!(set.len(), tokens.len());
    assert!(tokens.iter().all(|t| t.len() > 60));
    let t = &tokens[1];
    let mut altered = t.clone().into_bytes();
    let i = altered.len() - 3;
    altered[i] = if altered[i] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).unwrap();
    for id in ["1", "2", "0", altered.as_str()] {
        for (m, p) in [
            ("GET", format!("/v1/streams/{id}")),
            ("DELETE", format!("/v1/streams/{id}")),
        ] {
            let (st, _, _) = http(a, request(a, m, &p, None, None)).await;
            assert_eq!(st, 404, "{m} {id}");
        }
    }
    // The holder can close it; it stays closed.
    let (st, _, _) = http(
        a,
        request(a, "DELETE", &format!("/v1/streams/{t}"), None, None),
    )
    .await;
    assert_eq!(st, 204);
    let (st, _, _) = http(
        a,
        post_json(a, &format!("/v1/streams/{t}/infer"), &infer_json(1)),
    )
    .await;
    assert_eq!(st, 404);
    l.stop().await;
}

/// Every answer of a server to a request: a status and, for errors, a JSON `error`.
async fn answered_with_json(a: SocketAddr, req: Request<Full<Bytes>>) -> u16 {
    let (st, _, b) = http(a, req).await;
    if st != StatusCode::OK && st != StatusCode::CREATED && st != StatusCode::NO_CONTENT {
        error_of(&b);
    }
    st.as_u16()
}

fn oip_body() -> impl Strategy<Value = Value> {
    let dims = prop::collection::vec(-2i64..70, 0..5);
    let datatype = prop_oneof![Just("FP32"), Just("FP64"), Just("INT8"), Just("")];
    let data = prop_oneof![
        Just(json!(null)),
        Just(json!([0.5, 1.0])),
        Just(json!("x")),
        Just(json!([[1e39]])),
        prop::collection::vec(-1e3f64..1e3, 0..8).prop_map(|v| json!(v)),
    ];
    let deadline = prop_oneof![
        Just(json!(null)),
        Just(json!(1.9e22)),
        Just(json!(-5)),
        Just(json!(f64::MAX)),
        (0.0f64..1e9).prop_map(|v| json!(v)),
    ];
    (dims, datatype, data, deadline, any::<bool>()).prop_map(|(shape, dt, data, d, binary)| {
        let mut input = json!({"name": "input", "shape": shape, "datatype": dt, "data": data});
        if binary {
            input["parameters"] = json!({"binary_data_size": 8});
        }
        let mut q = json!({"inputs": [input]});
        if !d.is_null() {
            q["parameters"] = json!({"deadline_ms": d, "max_delay_ms": d});
        }
        q
    })
}

fn stream_body() -> impl Strategy<Value = Value> {
    let num = prop_oneof![
        Just(json!(0)),
        Just(json!(-1)),
        Just(json!(1e308)),
        Just(json!("5")),
        (0.0f64..5000.0).prop_map(|v| json!(v)),
    ];
    (
        num.clone(),
        num.clone(),
        num.clone(),
        num,
        prop::option::of("[a-z]{0,80}"),
        prop::option::of(0u32..6),
    )
        .prop_map(|(d, acc, r, kb, app, items)| {
            json!({"task": "object-detection", "max_delay_ms": d, "min_accuracy": acc,
                   "rate_qps": r, "frame_kb": kb, "app": app, "items": items})
        })
}

#[test]
fn property_hostile_bodies_always_get_a_json_answer() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (w, l) = rt.block_on(async {
        let w = start(config(&[("s1", "cnn-s", 1, 0.0)], json!({}))).await;
        let l = live(
            false,
            json!({"stream_open_burst": 10000, "stream_open_rate": 10000}),
        )
        .await;
        (w, l)
    });
    let (wa, ga) = (w.http_addr(), l.addr());
    let cfg = ProptestConfig {
        cases: 48,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(cfg, |(q in oip_body(), s in stream_body())| {
        rt.block_on(async {
            let body = serde_json::to_vec(&q).unwrap();
            let r = |a: SocketAddr, p: &str| Request::post(format!("http://{a}{p}"))
                .header("host", "x")
                .header("inference-header-content-length", body.len().saturating_sub(8).max(1))
                .body(Full::new(Bytes::from(body.clone()))).unwrap();
            answered_with_json(wa, post_json(wa, "/v2/models/s1/infer", &q)).await;
            answered_with_json(wa, r(wa, "/v2/models/s1/infer")).await;
            answered_with_json(ga, post_json(ga, "/v2/models/object-detection/infer", &q)).await;
            answered_with_json(ga, r(ga, "/v2/models/object-detection/infer")).await;
            answered_with_json(ga, post_json(ga, "/v1/streams", &s)).await;
        });
    });
    rt.block_on(async {
        w.shutdown().await;
        l.stop().await;
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_queries_reach_open_streams_and_errors_carry_grpc_codes() {
    use continuum_wire::grpc::{GrpcInferenceServiceClient, pb};
    let l = live(false, json!({"grpc": {"listen": "127.0.0.1:0"}})).await;
    let a = l.addr();
    let s = open(a, &stream_req(2000.0, 0.5)).await;
    let token = s["stream_id"].as_str().unwrap().to_string();
    let url = format!("http://{}", l.gw.grpc_addr().unwrap());
    let mut c = GrpcInferenceServiceClient::connect(url).await.unwrap();
    let req = grpc_infer_request;
    use pb::infer_parameter::ParameterChoice as P;
    // A query of the open stream goes to its binding (accuracy 0.5: the cloud's cnn-l).
    let r = c
        .model_infer(req(vec![("stream_id", P::StringParam(token.clone()))]))
        .await
        .unwrap()
        .into_inner();
    let variant = &r.parameters["variant"].parameter_choice;
    assert_eq!(
        *variant,
        Some(P::StringParam(s["variant"].as_str().unwrap().into()))
    );
    let out: Vec<f32> = r.raw_output_contents[0]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    assert_close(
        &continuum_wire::Tensor {
            shape: vec![1, 16],
            data: out,
        },
        &direct("cnn-l", 1),
        1e-4,
    );
    // A forged stream id is NOT_FOUND, a bad deadline INVALID_ARGUMENT, an unknown model
    // NOT_FOUND; the task's statistics count the query.
    let e = c
        .model_infer(req(vec![(
            "stream_id",
            P::StringParam("forged.token".into()),
        )]))
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound);
    let e = c
        .model_infer(req(vec![("deadline_ms", P::DoubleParam(1.9e22))]))
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument);
    assert!(e.message().contains("parameters.deadline_ms"));
    let mut bad = req(vec![]);
    bad.model_name = "nope".into();
    assert_eq!(
        c.model_infer(bad).await.unwrap_err().code(),
        tonic::Code::NotFound
    );
    let st = c
        .model_statistics(pb::ModelStatisticsRequest {
            name: "object-detection".into(),
            version: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(st.model_stats[0].inference_count >= 1);
    l.stop().await;
}
