//! Unit tests of the HTTP upstream: reading Triton's and continuum's metrics, load rates, status mapping, addresses.

use super::*;

/// Triton-style output: HELP and TYPE lines, `model`/`version` labels, two versions of one
/// model, failures split by `reason`, GPU metrics without a `model` label, six-decimal
/// values as Triton prints them.
const TRITON: &str = r#"# HELP nv_inference_request_success Number of successful inference requests, all batch sizes
# TYPE nv_inference_request_success counter
nv_inference_request_success{model="resnet",version="1"} 120.000000
nv_inference_request_success{model="resnet",version="2"} 30.000000
nv_inference_request_success{model="bert",version="1"} 0.000000
# HELP nv_inference_request_failure Number of failed inference requests, all batch sizes
# TYPE nv_inference_request_failure counter
nv_inference_request_failure{model="resnet",reason="REJECTED",version="1"} 4.000000
nv_inference_request_failure{model="resnet",reason="BACKEND",version="1"} 1.000000
nv_inference_request_failure{model="bert",reason="REJECTED",version="1"} 0.000000
# HELP nv_inference_count Number of inferences performed (does not include cached requests)
# TYPE nv_inference_count counter
nv_inference_count{model="resnet",version="1"} 480.000000
nv_inference_count{model="resnet",version="2"} 60.000000
nv_inference_count{model="bert",version="1"} 0.000000
# HELP nv_inference_exec_count Number of model executions performed (does not include cached requests)
# TYPE nv_inference_exec_count counter
nv_inference_exec_count{model="resnet",version="1"} 60.000000
nv_inference_exec_count{model="bert",version="1"} 0.000000
# HELP nv_inference_pending_request_count Instantaneous number of pending requests awaiting execution per-model.
# TYPE nv_inference_pending_request_count gauge
nv_inference_pending_request_count{model="resnet",version="1"} 3.000000
nv_inference_pending_request_count{model="resnet",version="2"} 1.000000
nv_inference_pending_request_count{model="bert",version="1"} 0.000000
# HELP nv_gpu_utilization GPU utilization rate [0.0 - 1.0)
# TYPE nv_gpu_utilization gauge
nv_gpu_utilization{gpu_uuid="GPU-5e3b3b8e-0000-0000-0000-000000000000"} 0.730000
"#;

fn l(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn parses_triton_output() {
    let s = parse_prometheus(TRITON);
    assert_eq!(s.len(), 15);
    assert_eq!(
        s[0],
        PromSample {
            name: "nv_inference_request_success".into(),
            labels: l(&[("model", "resnet"), ("version", "1")]),
            value: 120.0,
        }
    );
    assert_eq!(s[3].label("reason"), Some("REJECTED"));
    assert_eq!(s[14].name, "nv_gpu_utilization");
    assert_eq!(s[14].value, 0.73);
}

#[test]
fn parses_continuum_worker_output() {
    // What prometheus-client 0.24 writes for continuum_worker::metrics (OpenMetrics text).
    let m = continuum_worker::metrics::Metrics::new();
    let lab = continuum_worker::metrics::Metrics::label("s1");
    m.success.get_or_create(&lab).inc_by(3);
    m.inference_count.get_or_create(&lab).inc_by(5);
    m.incoming_qps.get_or_create(&lab).set(2.5);
    m.throughput_qps.get_or_create(&lab).set(1.5);
    m.open_streams.get_or_create(&lab).set(2);
    m.pending.get_or_create(&lab).set(1);
    let text = m.encode();
    assert!(text.contains("nv_inference_request_success_total{model=\"s1\"} 3"));
    let (loads, counters) = compute_loads(&parse_prometheus(&text), None);
    assert_eq!(
        loads,
        [ScrapedLoad {
            model: "s1".into(),
            incoming_qps: 2.5,
            throughput_qps: 1.5,
            pending: 1.0,
            open_streams: Some(2),
        }]
    );
    assert_eq!(
        counters[&(Kind::Items, "s1".to_string(), String::new())],
        5.0
    );
}

fn find<'a>(loads: &'a [ScrapedLoad], m: &str) -> &'a ScrapedLoad {
    loads.iter().find(|x| x.model == m).expect("model listed")
}

#[test]
fn triton_rates_come_from_counter_increases() {
    let (first, base) = compute_loads(&parse_prometheus(TRITON), None);
    // The first scrape is a baseline: gauges only.
    assert_eq!(
        first.iter().map(|x| x.model.as_str()).collect::<Vec<_>>(),
        ["bert", "resnet"]
    );
    let r = find(&first, "resnet");
    assert_eq!(
        (r.incoming_qps, r.throughput_qps, r.pending),
        (0.0, 0.0, 4.0)
    );
    assert_eq!(r.open_streams, None);
    // Two seconds later: +20 successes and +2 rejections on v1, +10 successes on v2,
    // +80 and +20 items.
    let later = TRITON
        .replace("version=\"1\"} 120.0", "version=\"1\"} 140.0")
        .replace("version=\"2\"} 30.0", "version=\"2\"} 40.0")
        .replace(
            "\"REJECTED\",version=\"1\"} 4.0",
            "\"REJECTED\",version=\"1\"} 6.0",
        )
        .replace("version=\"1\"} 480.0", "version=\"1\"} 560.0")
        .replace("version=\"2\"} 60.0", "version=\"2\"} 80.0");
    let (second, base2) = compute_loads(&parse_prometheus(&later), Some((&base, 2.0)));
    let r = find(&second, "resnet");
    assert_eq!(r.incoming_qps, (20.0 + 10.0 + 2.0) / 2.0);
    assert_eq!(r.throughput_qps, (80.0 + 20.0) / 2.0);
    let b = find(&second, "bert");
    assert_eq!(
        (b.incoming_qps, b.throughput_qps, b.pending),
        (0.0, 0.0, 0.0)
    );
    // Restart: counters drop to small values; rates count from 0, never negative.
    let restarted = "\
nv_inference_request_success{model=\"resnet\",version=\"1\"} 6
nv_inference_count{model=\"resnet\",version=\"1\"} 12
nv_inference_count{model=\"resnet\",version=\"3\"} 4
";
    let (third, _) = compute_loads(&parse_prometheus(restarted), Some((&base2, 4.0)));
    let r = find(&third, "resnet");
    assert_eq!(r.incoming_qps, 6.0 / 4.0);
    assert_eq!(r.throughput_qps, (12.0 + 4.0) / 4.0);
}

#[test]
fn gauges_win_over_counters_and_bad_values_are_skipped() {
    let base = "\
nv_inference_request_success_total{model=\"a\"} 10
continuum_rejected_total{model=\"a\"} 0
nv_inference_count_total{model=\"a\"} 10
";
    let (_, b) = compute_loads(&parse_prometheus(base), None);
    let next = "\
nv_inference_request_success_total{model=\"a\"} 20
continuum_rejected_total{model=\"a\"} 10
nv_inference_count_total{model=\"a\"} 20
nv_inference_pending_request_count{model=\"a\"} NaN
";
    let (loads, _) = compute_loads(&parse_prometheus(next), Some((&b, 1.0)));
    assert_eq!(find(&loads, "a").incoming_qps, 20.0);
    assert_eq!(find(&loads, "a").throughput_qps, 10.0);
    assert_eq!(find(&loads, "a").pending, 0.0);
    let with_gauges = format!(
        "{next}continuum_incoming_qps{{model=\"a\"}} 3.5\ncontinuum_throughput_qps{{model=\"a\"}} 2.5\n"
    );
    let (loads, _) = compute_loads(&parse_prometheus(&with_gauges), Some((&b, 1.0)));
    assert_eq!(find(&loads, "a").incoming_qps, 3.5);
    assert_eq!(find(&loads, "a").throughput_qps, 2.5);
    // A zero interval gives no rate rather than a division by zero.
    let (loads, _) = compute_loads(&parse_prometheus(next), Some((&b, 0.0)));
    assert_eq!(find(&loads, "a").incoming_qps, 0.0);
}

#[test]
fn status_mapping() {
    let json = br#"{"error": "queue full", "status": "rejected"}"#;
    let nf = || UpstreamError::NotFound("m".into());
    assert_eq!(
        status_error(StatusCode::TOO_MANY_REQUESTS, json, nf),
        UpstreamError::Rejected("queue full".into())
    );
    assert_eq!(
        status_error(StatusCode::BAD_REQUEST, b"plain words\n", nf),
        UpstreamError::BadRequest("plain words".into())
    );
    assert_eq!(
        status_error(StatusCode::NOT_FOUND, json, nf),
        UpstreamError::NotFound("m".into())
    );
    assert_eq!(
        status_error(StatusCode::SERVICE_UNAVAILABLE, b"", nf),
        UpstreamError::Unavailable("status Service Unavailable".into())
    );
    assert_eq!(
        status_error(StatusCode::INTERNAL_SERVER_ERROR, json, nf),
        UpstreamError::Internal("queue full".into())
    );
    assert_eq!(
        status_error(StatusCode::BAD_GATEWAY, b"upstream gone", nf),
        UpstreamError::Internal("upstream gone".into())
    );
    assert!(matches!(
        status_error(StatusCode::PAYLOAD_TOO_LARGE, json, nf),
        UpstreamError::BadRequest(m) if m.contains("413") && m.contains("queue full")
    ));
    assert!(matches!(
        status_error(StatusCode::CREATED, b"", nf),
        UpstreamError::Internal(m) if m.contains("unexpected status 201")
    ));
    // Long bodies are cut on a character boundary.
    let long = "é".repeat(MAX_MESSAGE_BYTES);
    match status_error(StatusCode::BAD_REQUEST, long.as_bytes(), nf) {
        UpstreamError::BadRequest(m) => {
            assert!(m.len() <= MAX_MESSAGE_BYTES + '…'.len_utf8());
            assert!(m.ends_with('…'));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn addresses_are_checked() {
    let t = Duration::from_secs(1);
    let up = HttpUpstream::new("http://127.0.0.1:8000/", None, t).unwrap();
    assert_eq!(up.base(), "http://127.0.0.1:8000");
    assert_eq!(up.metrics.to_string(), "http://127.0.0.1:8000/metrics");
    let up = HttpUpstream::new(
        "http://triton:8000/prefix/",
        Some("http://triton:8002/metrics"),
        t,
    )
    .unwrap();
    assert_eq!(up.base(), "http://triton:8000/prefix");
    assert_eq!(up.metrics.to_string(), "http://triton:8002/metrics");
    for (bad, needle) in [
        ("https://h:8000", "https needs the worker's tls settings"),
        ("ftp://h:8000", "scheme `ftp`"),
        ("h:8000", "no scheme"),
        ("127.0.0.1:8000", "no scheme"),
        ("http://h", "no port"),
        ("http://h:0", "port 0"),
        ("http://h:8000/?x=1", "query"),
        ("http://h :8000", "not a valid URI"),
        ("", "not a valid URI"),
    ] {
        let e = HttpUpstream::new(bad, None, t).unwrap_err().to_string();
        assert!(e.contains(needle), "`{bad}`: `{e}` lacks `{needle}`");
    }
    let e = HttpUpstream::new("http://h:1", Some("https://h:2/metrics"), t)
        .unwrap_err()
        .to_string();
    assert!(e.contains("metrics address"), "{e}");
    assert!(HttpUpstream::new("http://h:1", None, Duration::ZERO).is_err());
    // With TLS settings (a CA to trust), https:// is kept, for the metrics too.
    let dir = tempfile::tempdir().unwrap();
    let p = continuum_wire::dev_pki::generate(dir.path(), "").unwrap();
    let tls = continuum_wire::tcp_tls::ClientTls {
        ca: p.ca,
        cert: None,
        key: None,
    };
    let cfg = Some(tls.client_config(&[]).unwrap());
    let up = HttpUpstream::with_tls("https://127.0.0.1:8443/", None, t, cfg).unwrap();
    assert_eq!(up.base(), "https://127.0.0.1:8443");
    assert_eq!(up.metrics.to_string(), "https://127.0.0.1:8443/metrics");
}

#[test]
fn variants_are_path_encoded() {
    assert_eq!(path_segment("cnn-s_4.v~1"), "cnn-s_4.v~1");
    assert_eq!(path_segment("a b/c?"), "a%20b%2Fc%3F");
}

#[test]
fn upstream_is_shareable() {
    fn check<T: Send + Sync + 'static>() {}
    check::<HttpUpstream>();
}
