//! The gateway's plain-HTTP upstream against a real continuum worker on loopback (JSON and
//! binary infer bodies, errors, readiness, metadata, scraped load), against stand-in servers
//! (Triton-style metrics on their own port, arbitrary error answers, a server that never
//! answers) and against a dead address.

use continuum_testkit::worker as worker_support;

use bytes::Bytes;
use continuum_gateway::bench::{HttpUpstream, ScrapedLoad, UpstreamError};
use continuum_wire::Tensor;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use worker_support::*;

/// Bound on calls to the loopback worker (assumption: generous for debug builds on a loaded
/// machine; the stand-in models answer in milliseconds).
const TIMEOUT: Duration = Duration::from_secs(30);

fn upstream(a: SocketAddr) -> HttpUpstream {
    HttpUpstream::new(&format!("http://{a}"), None, TIMEOUT).expect("valid address")
}

/// Splits a binary-tensor answer into its JSON header and its FP32 output.
fn binary_output_of(body: &[u8], header_len: usize, shape: Vec<usize>) -> (Value, Tensor) {
    let v: Value = serde_json::from_slice(&body[..header_len]).unwrap();
    let data = body[header_len..]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    (v, Tensor { shape, data })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_and_binary_bodies_match_direct_requests() {
    let w = start(config(&[("s4", "cnn-s", 4, 1.0)], json!({}))).await;
    let a = w.http_addr();
    let up = upstream(a);
    // JSON in, JSON out.
    let body = Bytes::from(serde_json::to_vec(&infer_json(3)).unwrap());
    let ans = up.infer("s4", body, None).await.expect("answer");
    assert_eq!(ans.header_len, None);
    assert_eq!(ans.content_type.as_deref(), Some("application/json"));
    let (st, _, direct_body) = http(a, post_json(a, "/v2/models/s4/infer", &infer_json(3))).await;
    assert_eq!(st, StatusCode::OK);
    let via = output_of(&ans.body);
    assert_close(&via, &output_of(&direct_body), 1e-6);
    assert_close(&via, &direct("cnn-s", 3), 1e-5);
    let v: Value = serde_json::from_slice(&ans.body).unwrap();
    assert_eq!(
        (v["model_name"].as_str(), v["id"].as_str()),
        (Some("s4"), Some("q1"))
    );
    // Binary tensors in and out.
    let (body, header_len) = infer_binary(2);
    let ans = up
        .infer("s4", Bytes::from(body.clone()), Some(header_len))
        .await
        .expect("answer");
    assert_eq!(
        ans.content_type.as_deref(),
        Some("application/octet-stream")
    );
    let n = ans.header_len.expect("binary answer");
    let (v, via) = binary_output_of(&ans.body, n, vec![2, 16]);
    assert_eq!(
        v["outputs"][0]["parameters"]["binary_data_size"],
        2 * 16 * 4
    );
    let req = Request::post(format!("http://{a}/v2/models/s4/infer"))
        .header("host", "localhost")
        .header("inference-header-content-length", header_len)
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    let (st, headers, direct_body) = http(a, req).await;
    assert_eq!(st, StatusCode::OK);
    // Each answer's JSON head has its own length (queue and compute times differ).
    let dn = header_len_of(&headers);
    assert_close(
        &via,
        &binary_output_of(&direct_body, dn, vec![2, 16]).1,
        1e-6,
    );
    assert_close(&via, &direct("cnn-s", 2), 1e-5);
    w.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_errors_readiness_and_metadata() {
    let w = start(config(
        &[("s1", "cnn-s", 1, 0.0), ("l1", "cnn-l", 1, 0.0)],
        json!({}),
    ))
    .await;
    let up = Arc::new(upstream(w.http_addr()));
    assert!(up.ready().await);
    let body = || Bytes::from(serde_json::to_vec(&infer_json(1)).unwrap());
    assert_eq!(
        up.infer("nope", body(), None).await,
        Err(UpstreamError::NotFound("nope".into()))
    );
    match up
        .infer("s1", Bytes::from_static(b"{\"inputs\": ["), None)
        .await
    {
        Err(UpstreamError::BadRequest(m)) => {
            assert!(m.contains("invalid inference request JSON"), "{m}")
        }
        other => panic!("malformed body: {other:?}"),
    }
    // The binary header length announced but not matching the body.
    match up.infer("s1", Bytes::from_static(b"{}"), Some(5000)).await {
        Err(UpstreamError::BadRequest(m)) => assert!(m.contains("5000"), "{m}"),
        other => panic!("bad header length: {other:?}"),
    }
    // Admission refuses an impossible deadline: 429 → Rejected.
    let mut late = infer_json(1);
    late["parameters"] = json!({"deadline_ms": 0.001});
    match up
        .infer("l1", Bytes::from(serde_json::to_vec(&late).unwrap()), None)
        .await
    {
        Err(e @ UpstreamError::Rejected(_)) => {
            assert!(e.to_string().contains("cannot be met"), "{e}");
            assert!(!e.worker_down());
        }
        other => panic!("impossible deadline: {other:?}"),
    }
    // Concurrent calls share the pooled client.
    let calls: Vec<_> = (0..8)
        .map(|_| {
            let up = up.clone();
            tokio::spawn(async move { up.infer("s1", body(), None).await })
        })
        .collect();
    for c in calls {
        assert!(c.await.unwrap().is_ok());
    }
    let meta = up.metadata("s1").await.expect("metadata");
    assert_eq!(meta["name"], "s1");
    assert_eq!(meta["inputs"][0]["shape"], json!([-1, 3, 64, 64]));
    assert_eq!(
        up.metadata("nope").await,
        Err(UpstreamError::NotFound("nope".into()))
    );
    w.shutdown().await;
}

fn load<'a>(loads: &'a [ScrapedLoad], m: &str) -> &'a ScrapedLoad {
    loads
        .iter()
        .find(|x| x.model == m)
        .unwrap_or_else(|| panic!("`{m}` missing from {loads:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scrape_reports_the_busy_model_and_the_idle_ones() {
    let w = start(config(
        &[("s1", "cnn-s", 1, 0.0), ("m1", "cnn-m", 1, 0.0)],
        json!({}),
    ))
    .await;
    let up = upstream(w.http_addr());
    let first = up.scrape().await.expect("scrape");
    for m in ["s1", "m1"] {
        let l = load(&first, m);
        assert_eq!(
            (l.incoming_qps, l.throughput_qps, l.pending),
            (0.0, 0.0, 0.0)
        );
        assert_eq!(l.open_streams, Some(0));
    }
    let mut body = infer_json(1);
    body["parameters"] = json!({"stream_id": 7});
    let body = Bytes::from(serde_json::to_vec(&body).unwrap());
    for _ in 0..5 {
        up.infer("s1", body.clone(), None).await.expect("answer");
    }
    let loads = up.scrape().await.expect("scrape");
    let s1 = load(&loads, "s1");
    assert!(s1.throughput_qps > 0.0, "{s1:?}");
    assert!(s1.incoming_qps > 0.0, "{s1:?}");
    assert_eq!(s1.open_streams, Some(1));
    assert_eq!(s1.pending, 0.0);
    let m1 = load(&loads, "m1");
    assert_eq!(
        (
            m1.incoming_qps,
            m1.throughput_qps,
            m1.pending,
            m1.open_streams
        ),
        (0.0, 0.0, 0.0, Some(0))
    );
    w.shutdown().await;
}

/// A stand-in server: every request gets `answer(path)` (status, content type, body).
async fn stand_in(
    answer: impl Fn(&str) -> (StatusCode, &'static str, String) + Send + Sync + 'static,
) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let answer = Arc::new(answer);
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let answer = answer.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                    let answer = answer.clone();
                    async move {
                        let path = req.uri().path().to_string();
                        let _ = req.into_body().collect().await;
                        let (status, ct, body) = answer(&path);
                        let mut r = Response::new(Full::new(Bytes::from(body)));
                        *r.status_mut() = status;
                        r.headers_mut().insert("content-type", ct.parse().unwrap());
                        Ok::<_, std::convert::Infallible>(r)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tcp), svc)
                    .await;
            });
        }
    });
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn triton_style_metrics_on_their_own_port() {
    let text = Arc::new(Mutex::new(String::new()));
    let set = |success: u32, items: u32| {
        format!(
            "# HELP nv_inference_request_success Number of successful inference requests, all batch sizes\n\
             # TYPE nv_inference_request_success counter\n\
             nv_inference_request_success{{model=\"resnet\",version=\"1\"}} {success}.000000\n\
             nv_inference_request_success{{model=\"bert\",version=\"1\"}} 9.000000\n\
             # TYPE nv_inference_count counter\n\
             nv_inference_count{{model=\"resnet\",version=\"1\"}} {items}.000000\n\
             nv_inference_count{{model=\"bert\",version=\"1\"}} 9.000000\n\
             # TYPE nv_inference_pending_request_count gauge\n\
             nv_inference_pending_request_count{{model=\"resnet\",version=\"1\"}} 2.000000\n"
        )
    };
    *text.lock().unwrap() = set(100, 400);
    let t = text.clone();
    let metrics = stand_in(move |path| {
        assert_eq!(path, "/metrics");
        (StatusCode::OK, "text/plain", t.lock().unwrap().clone())
    })
    .await;
    let up = HttpUpstream::new(
        "http://127.0.0.1:9",
        Some(&format!("http://{metrics}/metrics")),
        Duration::from_secs(5),
    )
    .unwrap();
    let first = up.scrape().await.expect("scrape");
    let r = load(&first, "resnet");
    assert_eq!(
        (r.incoming_qps, r.throughput_qps, r.pending),
        (0.0, 0.0, 2.0)
    );
    assert_eq!(r.open_streams, None);
    let t0 = Instant::now();
    tokio::time::sleep(Duration::from_millis(200)).await;
    *text.lock().unwrap() = set(150, 600);
    let second = up.scrape().await.expect("scrape");
    let elapsed = t0.elapsed().as_secs_f64();
    let r = load(&second, "resnet");
    // 50 requests and 200 items over a little more than 0.2 s.
    assert!(
        r.incoming_qps <= 50.0 / 0.2 && r.incoming_qps >= 50.0 / elapsed * 0.9,
        "{r:?}"
    );
    assert!(
        (r.throughput_qps / r.incoming_qps - 4.0).abs() < 1e-9,
        "{r:?}"
    );
    let b = load(&second, "bert");
    assert_eq!((b.incoming_qps, b.throughput_qps), (0.0, 0.0));
    // Restarted server: counters back near zero; rates stay non-negative.
    tokio::time::sleep(Duration::from_millis(100)).await;
    *text.lock().unwrap() = set(5, 20);
    let third = up.scrape().await.expect("scrape");
    let r = load(&third, "resnet");
    assert!(r.incoming_qps > 0.0 && r.incoming_qps <= 5.0 / 0.1, "{r:?}");
    assert!(
        r.throughput_qps > 0.0 && r.throughput_qps <= 20.0 / 0.1,
        "{r:?}"
    );
    assert!(
        third
            .iter()
            .all(|l| l.incoming_qps >= 0.0 && l.throughput_qps >= 0.0)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_answers_of_other_servers() {
    let addr = stand_in(|path| match path {
        "/v2/models/busy/infer" => (
            StatusCode::TOO_MANY_REQUESTS,
            "application/json",
            r#"{"error":"too busy"}"#.into(),
        ),
        "/v2/models/down/infer" => (
            StatusCode::SERVICE_UNAVAILABLE,
            "text/plain",
            "draining".into(),
        ),
        "/v2/models/broken/infer" => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "application/json",
            r#"{"error":"CUDA out of memory"}"#.into(),
        ),
        "/v2/models/huge/infer" => (
            StatusCode::PAYLOAD_TOO_LARGE,
            "text/plain",
            "x".repeat(10_000),
        ),
        "/v2/health/ready" => (StatusCode::SERVICE_UNAVAILABLE, "text/plain", String::new()),
        "/metrics" => (StatusCode::NOT_FOUND, "text/plain", String::new()),
        _ => (StatusCode::NOT_FOUND, "text/plain", "no".into()),
    })
    .await;
    let up = HttpUpstream::new(&format!("http://{addr}"), None, Duration::from_secs(5)).unwrap();
    let call = |m: &'static str| up.infer(m, Bytes::from_static(b"{}"), None);
    assert_eq!(
        call("busy").await,
        Err(UpstreamError::Rejected("too busy".into()))
    );
    let down = call("down").await.unwrap_err();
    assert_eq!(down, UpstreamError::Unavailable("draining".into()));
    assert!(down.worker_down());
    assert_eq!(
        call("broken").await,
        Err(UpstreamError::Internal("CUDA out of memory".into()))
    );
    match call("huge").await {
        Err(UpstreamError::BadRequest(m)) => assert!(m.contains("413") && m.len() < 1000, "{m}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        call("other").await,
        Err(UpstreamError::NotFound("other".into()))
    );
    assert!(!up.ready().await);
    assert!(matches!(up.scrape().await, Err(UpstreamError::Internal(m)) if m.contains("404")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_address_is_unavailable_quickly() {
    // A port that was just free: nothing listens there.
    let addr = {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        l.local_addr().unwrap()
    };
    let up = HttpUpstream::new(&format!("http://{addr}"), None, Duration::from_secs(10)).unwrap();
    let t0 = Instant::now();
    let e = up
        .infer("s1", Bytes::from_static(b"{}"), None)
        .await
        .unwrap_err();
    assert!(matches!(e, UpstreamError::Unavailable(_)), "{e:?}");
    assert!(e.worker_down());
    assert!(!up.ready().await);
    assert!(matches!(
        up.scrape().await,
        Err(UpstreamError::Unavailable(_))
    ));
    assert!(
        t0.elapsed() < Duration::from_secs(2),
        "took {:?}",
        t0.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_server_times_out_within_the_bound() {
    // Accepts connections, reads nothing, answers nothing.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let holder = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((tcp, _)) = listener.accept().await {
            held.push(tcp);
        }
    });
    let bound = Duration::from_millis(300);
    let up = HttpUpstream::new(&format!("http://{addr}"), None, bound).unwrap();
    let t0 = Instant::now();
    let e = up
        .infer("s1", Bytes::from_static(b"{}"), None)
        .await
        .unwrap_err();
    let took = t0.elapsed();
    assert_eq!(e, UpstreamError::Timeout(bound));
    assert!(e.worker_down());
    assert!(took >= bound && took < bound * 4, "took {took:?}");
    let t0 = Instant::now();
    assert!(!up.ready().await);
    assert_eq!(up.metadata("s1").await, Err(UpstreamError::Timeout(bound)));
    assert!(t0.elapsed() < bound * 8, "took {:?}", t0.elapsed());
    holder.abort();
}
