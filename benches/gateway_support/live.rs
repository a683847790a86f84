//! The live phases of benches/gateway.rs, (b)–(d): the worker and the two gateway processes
//! (the release `continuum` binary) and their start, then gateway memory per open stream,
//! open-loop added latency and closed-loop saturation, each reported as it ends, and the
//! summary of benches/gateway.rs at the close.

use crate::support::*;
use crate::{CONCURRENCY, LOOP_STREAMS, RATES, RUN, STREAMS, WARMUP, pct, print_summary};
use hdrhistogram::Histogram;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The worker and the two gateway processes (QUIC and HTTP upstream), and their addresses.
struct Procs {
    worker: Child,
    gateways: [Child; 2],
    worker_http: String,
    worker_quic: std::net::SocketAddr,
    gateway_http: [String; 2],
    cert: Vec<u8>,
    /// The QUIC endpoint of the QUIC worker's gateway, and its certificate.
    gateway_quic: std::net::SocketAddr,
    gateway_cert: Vec<u8>,
    _dir: tempfile::TempDir,
}

async fn start_gateway(
    dir: &Path,
    name: &str,
    upstream: Value,
    quic: Option<Value>,
    c: &HttpClient,
) -> (Child, String) {
    let port = free_tcp();
    // publish_ms: docs/model.md §8 default Δ. assumption: a 10-minute idle timeout outlasts the bench,
    // and the open rate, burst and in-flight limits are set so high that they never bind.
    let cfg = json!({"name": name, "topology": repo("benches/gateway-null.yaml"),
        "profiles": repo("benches/null-profile.yaml"), "scheduler": "ant-00",
        "http": {"listen": format!("127.0.0.1:{port}")}, "publish_ms": 100,
        "stream_idle_timeout_ms": 600_000, "stream_open_rate": 1e6, "stream_open_burst": 1e6,
        "max_streams": 100_000, "max_in_flight_per_worker": 4096, "workers": [upstream],
        "tasks": {"object-detection": {"input": "input", "output": "output",
                                        "shape": [3, 64, 64], "output_shape": [16]}}});
    let mut cfg = cfg;
    if let Some(q) = quic {
        cfg["quic"] = q;
    }
    let path = dir.join(format!("{name}.yaml"));
    std::fs::write(&path, serde_json::to_string_pretty(&cfg).unwrap()).unwrap();
    let child = spawn("gateway", &path);
    let http = format!("http://127.0.0.1:{port}");
    wait_ok(c, &format!("{http}/v1/workers"), |b| {
        let v: Value = serde_json::from_slice(b).unwrap_or_default();
        v["workers"]
            .as_array()
            .is_some_and(|w| !w.is_empty() && w.iter().all(|x| x["up"] == true))
    })
    .await;
    // Its first published load view with the worker in it (every 100 ms): a stream binds.
    let until = Instant::now() + Duration::from_secs(10); // assumption: 100 Δ periods
    let uri = format!("{http}/v1/streams");
    while send(c, "POST", &uri, Body::Json(stream_open())).await.0 != 201 {
        assert!(
            Instant::now() < until,
            "{name}: no stream bound within 10 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    (child, http)
}

async fn start_procs(c: &HttpClient) -> Procs {
    let dir = tempfile::tempdir().unwrap();
    let (wh, wq) = (free_tcp(), free_udp());
    let cert = dir.path().join("worker.der");
    // The null model's manifest (models/models.yaml leaves it out so that `continuum profile`
    // does not profile it): accuracy 0, it is no detector.
    let manifest = json!({"task": "object-detection", "metric": "COCO mAP@0.5",
        "models": [{"name": "null-model", "file": repo("models/null.onnx"), "accuracy": 0.0,
                    "stands_in_for": "nothing", "input": [3, 64, 64], "batches": [1]}]});
    std::fs::write(dir.path().join("models.yaml"), manifest.to_string()).unwrap();
    let wcfg = json!({"name": "worker-null", "backend": "auto", "models_dir": dir.path(),
        "http": {"listen": format!("127.0.0.1:{wh}")},
        "quic": {"listen": format!("127.0.0.1:{wq}"), "dev_cert_out": cert},
        "variants": [{"name": "null-b1", "model": "null-model", "max_batch": 1, "max_queue_delay_ms": 0.0}]});
    let wpath = dir.path().join("worker.yaml");
    std::fs::write(&wpath, serde_json::to_string_pretty(&wcfg).unwrap()).unwrap();
    let worker = spawn("worker", &wpath);
    let worker_http = format!("http://127.0.0.1:{wh}");
    wait_ok(c, &format!("{worker_http}/v2/health/ready"), |_| true).await;
    let quic = json!({"name": "worker-null", "cluster": "edge", "protocol": "quic",
                      "address": format!("127.0.0.1:{wq}"), "cert": cert});
    let http = json!({"name": "worker-null", "cluster": "edge", "protocol": "http",
                      "address": worker_http});
    // The QUIC worker's gateway takes QUIC clients too.
    let (gq, gq_cert) = (free_udp(), dir.path().join("gateway.der"));
    let front = json!({"listen": format!("127.0.0.1:{gq}"), "dev_cert_out": gq_cert});
    let (g0, h0) = start_gateway(dir.path(), "gateway-quic", quic, Some(front), c).await;
    let (g1, h1) = start_gateway(dir.path(), "gateway-http", http, None, c).await;
    Procs {
        worker,
        gateways: [g0, g1],
        worker_http,
        worker_quic: format!("127.0.0.1:{wq}").parse().unwrap(),
        gateway_http: [h0, h1],
        cert: std::fs::read(&cert).unwrap(),
        gateway_quic: format!("127.0.0.1:{gq}").parse().unwrap(),
        gateway_cert: std::fs::read(&gq_cert).unwrap(),
        _dir: dir,
    }
}

/// One open-loop run: route, rate, p50/p99/p999 (µs), failures, the gateway's own mean
/// added latency (µs).
pub struct Row {
    pub route: Route,
    pub rate: f64,
    pub q: [f64; 3],
    pub failed: Failures,
    pub own: Option<f64>,
}

/// (b)–(d) on a worker and two gateways started here, then the summary with (a)'s `dec`.
pub async fn live(dec: &[(&'static str, Histogram<u64>, usize)]) {
    let c = http_client();
    let p = start_procs(&c).await;
    let gw = p.gateway_http.clone();
    let gpid = p.gateways.each_ref().map(|g| g.pid());
    let cert = rustls::pki_types::CertificateDer::from(p.cert.clone());
    let quic = continuum_wire::QuicClient::connect(p.worker_quic, &[cert])
        .await
        .unwrap();
    let worker_uri = format!("{}/v2/models/null-b1/infer", p.worker_http);
    let mut target = Target::new(c.clone(), quic, worker_uri, "null-b1");

    // (d) memory per open stream, first: before other phases free memory the allocator could
    // hand back to the new streams.
    let per_stream = memory_per_stream(&c, &gw[0], gpid[0]).await;

    // (b) added latency, open loop. The streams above stay open (idle) on the QUIC gateway.
    open_gateway_streams(&mut target, &c, &p).await;
    let target = Arc::new(target);
    let rows = latency(&target, &c, &gw).await;

    // (c) saturation, closed loop: the worker alone (both protocols), then through each gateway.
    let sat = saturation(&target, p.worker.pid(), gpid).await;

    print_summary(dec, &rows, &sat, per_stream);
    drop(p);
}

/// (d): the growth of the resident memory of gateway `gw` (process `pid`) per open stream,
/// over `STREAMS` streams opened after a first 200.
async fn memory_per_stream(c: &HttpClient, gw: &str, pid: u32) -> f64 {
    open_streams(c, gw, 200, 8).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss0 = rss_bytes(pid);
    let t = Instant::now();
    open_streams(c, gw, STREAMS, 8).await;
    let open_s = t.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss1 = rss_bytes(pid);
    println!(
        "(d) memory: gateway VmRSS {:.1} MiB → {:.1} MiB after {STREAMS} more open streams \
        ({:.0} opens/s over HTTP, 8 connections)",
        rss0 as f64 / 1048576.0,
        rss1 as f64 / 1048576.0,
        STREAMS as f64 / open_s
    );
    (rss1 as f64 - rss0 as f64) / STREAMS as f64
}

/// Opens `LOOP_STREAMS` streams on each gateway of `p` for `target`'s gateway routes, and
/// connects to the QUIC gateway's front end, whose frames name the same streams.
async fn open_gateway_streams(target: &mut Target, c: &HttpClient, p: &Procs) {
    for (i, g) in p.gateway_http.iter().enumerate() {
        let ids = open_streams(c, g, LOOP_STREAMS, 1).await;
        target.gateway_uris[i] = ids
            .iter()
            .map(|id| format!("{g}/v1/streams/{id}/infer"))
            .collect();
    }
    // The same streams of the QUIC worker's gateway take QUIC frames too.
    let gcert = rustls::pki_types::CertificateDer::from(p.gateway_cert.clone());
    let front = continuum_wire::QuicClient::connect(p.gateway_quic, &[gcert])
        .await
        .unwrap();
    let frames = target.gateway_uris[0]
        .iter()
        .map(|u| {
            let id = u.rsplit('/').nth(1).expect("…/streams/{id}/infer");
            quic_frame(id)
        })
        .collect();
    target.gateway_quic = Some((front, frames));
}

/// (b): an open-loop run per rate and route (gateways `gw`), each reported as it ends.
async fn latency(target: &Arc<Target>, c: &HttpClient, gw: &[String; 2]) -> Vec<Row> {
    println!(
        "(b) open-loop latency, null model, {} s per run after {} s warm-up; queries over \
        {LOOP_STREAMS} streams; latency from send to answer",
        RUN.as_secs(),
        WARMUP.as_secs()
    );
    let mut rows = Vec::new();
    for rate in RATES {
        for route in Route::ALL {
            rows.push(open_loop_row(target, c, gw, route, rate).await);
        }
    }
    rows
}

/// One open-loop run along `route` at `rate` after a warm-up, with the gateway's own added
/// latency from its metrics before and after (and, over QUIC, its transport's figures).
async fn open_loop_row(
    target: &Arc<Target>,
    c: &HttpClient,
    gw: &[String; 2],
    route: Route,
    rate: f64,
) -> Row {
    open_loop(target, route, rate, WARMUP).await;
    let g = route.gateway().map(|i| gw[i].clone());
    let m0 = match &g {
        Some(g) => metrics_text(c, g).await,
        None => String::new(),
    };
    let (h, failed) = open_loop(target, route, rate, RUN).await;
    let (own, transport) = match &g {
        Some(g) => {
            let m1 = metrics_text(c, g).await;
            let quic = matches!(route, Route::GatewayQuic | Route::QuicGatewayQuic);
            (own_mean_us(&m0, &m1), quic.then(|| quic_delta(&m0, &m1)))
        }
        None => (None, None),
    };
    let q = [pct(&h, 0.5), pct(&h, 0.99), pct(&h, 0.999)];
    println!(
        "    {rate:>5} qps  {:<18} n {:>6}  p50 {:>8.1} µs  p99 {:>9.1} µs  p999 {:>9.1} µs  \
        failed {failed}{}",
        route.label(),
        h.len(),
        q[0],
        q[1],
        q[2],
        own.map_or(String::new(), |m| format!(
            "  (gateway's own added latency: mean {m:.1} µs)"
        ))
    );
    if let Some(t) = transport {
        println!("          {t}");
    }
    Row {
        route,
        rate,
        q,
        failed,
        own,
    }
}

/// (c): per route, the closed-loop queries per second and the gateway's busy cores (of
/// gateways `gpid`; the worker is process `wpid`).
async fn saturation(target: &Arc<Target>, wpid: u32, gpid: [u32; 2]) -> Vec<(Route, f64, f64)> {
    let wpid = wpid.to_string();
    println!(
        "(c) saturation: {CONCURRENCY} closed-loop clients, {} s after {} s warm-up; CPU cores \
        busy from /proc/<pid>/stat utime+stime",
        RUN.as_secs(),
        WARMUP.as_secs()
    );
    let mut sat = Vec::new();
    for route in Route::ALL {
        let gpid = route
            .gateway()
            .map_or(String::new(), |i| gpid[i].to_string());
        let gcpu = || if gpid.is_empty() { 0.0 } else { cpu_s(&gpid) };
        closed_loop(target, route, CONCURRENCY, WARMUP).await;
        let (g0, w0, c0) = (gcpu(), cpu_s(&wpid), cpu_s("self"));
        let t = Instant::now();
        let (ok, bad) = closed_loop(target, route, CONCURRENCY, RUN).await;
        let wall = t.elapsed().as_secs_f64();
        let cpu = [gcpu() - g0, cpu_s(&wpid) - w0, cpu_s("self") - c0].map(|x| x / wall);
        let qps = ok as f64 / wall;
        println!(
            "    {:<18} {qps:>7.0} qps ({bad} failed)  cores: gateway {:.2}, worker {:.2}, client {:.2}",
            route.label(),
            cpu[0],
            cpu[1],
            cpu[2]
        );
        sat.push((route, qps, cpu[0]));
    }
    sat
}
