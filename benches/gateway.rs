//! Gateway benchmarks: (a) decision time of one binding (`Decider::bind`: feasibility and
//! policy over a published snapshot of topologies/full-edge.yaml); (b) latency the gateway adds
//! to a query of the null model (models/null.onnx) at fixed open-loop rates on loopback, against
//! a client talking to the worker directly (HTTP clients, and QUIC clients of the gateway's
//! QUIC front end against QUIC clients of the worker); (c) forwarded queries per second per CPU core of
//! the gateway process; (d) gateway memory per open stream.
//!
//! Run: `cargo bench --bench gateway`. (a) runs in this process; (b)–(d) start the release
//! `continuum` binary twice, as a worker serving `null-b1` (QUIC + HTTP) and as a gateway in
//! front of it (benches/gateway-null.yaml, benches/null-profile.yaml), so that the gateway's
//! CPU time and resident memory are its own (`/proc/<pid>`). Client, worker and gateway share
//! the machine's cores: on a small shared machine the figures include that contention.
//! `CONTINUUM_BENCH_BIN=<path>` runs (b)–(d) on another build of the binary (a release profile
//! variant, an older commit), so that builds are compared by one bench.

#[path = "gateway_support/mod.rs"]
mod support;

use continuum_core::load::WorkerLoad;
use continuum_core::rng::{Purpose, stream_rng};
use continuum_gateway::Decider;
use continuum_gateway::GatewayConfig;
use continuum_gateway::plan::Plan;
use continuum_gateway::state::GatewayState;
use continuum_gateway::state::live::{LiveLoads, publish};
use continuum_gateway::state::streams::{OpenRequest, Stream};
use continuum_gateway::upstream::Upstream;
use hdrhistogram::Histogram;
use serde_json::{Value, json};
use std::hint::black_box;
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::*;

/// Timed `bind` calls per policy, after as many untimed. assumption: 200 000 (the issue asks
/// for ≥ 100 000) keeps p999 on 200 samples.
const DECISIONS: usize = 200_000;
/// Open-loop rates, qps (the 1k and 5k).
const RATES: [f64; 2] = [1000.0, 5000.0];
/// Measured time per open-loop run (the issue's ~5 s), after `WARMUP` at the same rate.
const RUN: Duration = Duration::from_secs(5);
/// assumption: 1 s warms connections, pools and caches.
const WARMUP: Duration = Duration::from_secs(1);
/// Closed-loop clients for the saturation run. assumption: 64 outstanding queries keep every
/// path busy (the worker alone answers ~28k qps over HTTP with them here).
const CONCURRENCY: usize = 64;
/// Open streams for the memory figure (the N).
const STREAMS: usize = 20_000;
/// Gateway streams the open-loop queries are spread over. assumption: a handful, like one
/// antenna's cameras.
const LOOP_STREAMS: usize = 16;

fn pct(h: &Histogram<u64>, q: f64) -> f64 {
    h.value_at_quantile(q) as f64 / 1e3
}

/// (a) `bind` on a gateway for ant-00 of full-edge, every worker up and half loaded.
fn decisions() -> Vec<(&'static str, Histogram<u64>, usize)> {
    let profiles =
        continuum_core::profiles::Profiles::load(&repo("profiles/object-detection.yaml"))
            .expect("profiles");
    let topo =
        continuum_core::topology::Topology::load(&repo("topologies/full-edge.yaml"), &profiles)
            .unwrap();
    // One HTTP upstream per cluster that hosts workers; never contacted (port 9: discard).
    let mut clusters: Vec<&str> = topo
        .workers
        .iter()
        .map(|w| topo.clusters[w.cluster].id.as_str())
        .collect();
    clusters.sort_unstable();
    clusters.dedup();
    let workers: Vec<Value> = clusters
        .iter()
        .map(|c| json!({"name": c, "cluster": c, "protocol": "http", "address": "http://127.0.0.1:9"}))
        .collect();
    let cfg: GatewayConfig = serde_json::from_value(json!({
        "topology": repo("topologies/full-edge.yaml"), "profiles": repo("profiles/object-detection.yaml"),
        "scheduler": "ant-00", "workers": workers,
        "tasks": {"object-detection": {"input": "input", "output": "output", "shape": [3, 64, 64]}}}))
    .unwrap();
    let plan = Arc::new(Plan::build(cfg).expect("plan"));
    let ups: Vec<Arc<Upstream>> = plan
        .cfg
        .workers
        .iter()
        .map(|u| Arc::new(Upstream::new(u.clone(), 1024, Duration::from_secs(5)).unwrap()))
        .collect();
    let loads = LiveLoads::default();
    let now = Instant::now();
    for w in 0..plan.topology.workers.len() {
        let Some(u) = plan.served_by[w] else { continue };
        ups[u].set_up(true);
        ups[u].reported();
        // assumption: every worker at half its capacity, so that the load check is evaluated
        // but passes.
        let cap = plan.fleet.workers[w].capacity_qps;
        let l = WorkerLoad {
            load_qps: cap / 2.0,
            streams: 10,
            throughput_qps: cap / 2.0,
        };
        loads.set(&ups[u].cfg.name, plan.variant_name(w), l, now);
    }
    let snap = publish(&plan, &Arc::new(ups), &loads, 0, now, 0.0);
    let state = GatewayState::new(snap, now);
    let snap = state.snapshot();
    let reach = snap.reach.len();
    // The app classes of workloads/default.yaml at their mean rate, size and deadline.
    let classes = [
        (75.0, 0.2, 22.5, 40.0),
        (225.0, 0.3, 10.0, 50.0),
        (175.0, 0.3, 15.0, 60.0),
        (175.0, 0.5, 15.0, 60.0),
        (750.0, 0.5, 7.5, 60.0),
    ];
    let streams: Vec<Stream> = classes
        .iter()
        .enumerate()
        .map(|(i, &(d, a, r, kb))| Stream {
            id: i as u64 + 1,
            nonce: i as u128 + 1,
            token: Arc::from(""),
            req: OpenRequest {
                task: "object-detection".into(),
                app: None,
                max_delay_ms: d,
                min_accuracy: a,
                rate_qps: r,
                frame_kb: kb,
                access_ms: None,
                tx_ms: None,
                items: None,
            },
            app: Arc::from("bench"),
            access_ms: plan.cfg.default_access_ms,
            bucket: 0,
            binding: Mutex::new(None),
            last_ms: AtomicU64::new(0),
            rng: Mutex::new(stream_rng(1, Purpose::Uplink, 0, i as u64)),
        })
        .collect();
    let mut out = Vec::new();
    for p in continuum_core::policy::REGISTRY {
        state.pin_policy(None, *p);
        let mut h = histogram();
        let mut infeasible = 0;
        for i in 0..2 * DECISIONS {
            let s = &streams[i % streams.len()];
            let t = Instant::now();
            let r = black_box(Decider::new(&state).bind(&snap, s));
            let ns = t.elapsed().as_nanos() as u64;
            if i >= DECISIONS {
                h.saturating_record(ns);
                infeasible += usize::from(r.is_err());
            }
        }
        out.push((p.name(), h, infeasible));
    }
    println!(
        "(a) decision time: Decider::bind, full-edge ant-00, {reach} reachable workers, \
        {DECISIONS} timed calls per policy (each timed alone with Instant), app classes of \
        workloads/default.yaml round-robin"
    );
    let mut tick = histogram();
    for _ in 0..100_000 {
        let t = Instant::now();
        tick.saturating_record(black_box(t.elapsed().as_nanos() as u64));
    }
    println!(
        "    timer overhead (Instant::now + elapsed): p50 {:.3} µs",
        pct(&tick, 0.5)
    );
    for (name, h, inf) in &out {
        println!(
            "    {name:<22} p50 {:>7.2} µs  p99 {:>7.2} µs  p999 {:>7.2} µs  ({inf} infeasible)",
            pct(h, 0.5),
            pct(h, 0.99),
            pct(h, 0.999)
        );
    }
    out
}

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
struct Row {
    route: Route,
    rate: f64,
    q: [f64; 3],
    failed: Failures,
    own: Option<f64>,
}

async fn live(dec: &[(&'static str, Histogram<u64>, usize)]) {
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
    open_streams(&c, &gw[0], 200, 8).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss0 = rss_bytes(gpid[0]);
    let t = Instant::now();
    open_streams(&c, &gw[0], STREAMS, 8).await;
    let open_s = t.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss1 = rss_bytes(gpid[0]);
    let per_stream = (rss1 as f64 - rss0 as f64) / STREAMS as f64;
    println!(
        "(d) memory: gateway VmRSS {:.1} MiB → {:.1} MiB after {STREAMS} more open streams \
        ({:.0} opens/s over HTTP, 8 connections)",
        rss0 as f64 / 1048576.0,
        rss1 as f64 / 1048576.0,
        STREAMS as f64 / open_s
    );

    // (b) added latency, open loop. The streams above stay open (idle) on the QUIC gateway.
    for (i, g) in gw.iter().enumerate() {
        let ids = open_streams(&c, g, LOOP_STREAMS, 1).await;
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
    let target = Arc::new(target);
    let mut rows = Vec::new();
    println!(
        "(b) open-loop latency, null model, {} s per run after {} s warm-up; queries over \
        {LOOP_STREAMS} streams; latency from send to answer",
        RUN.as_secs(),
        WARMUP.as_secs()
    );
    for rate in RATES {
        for route in Route::ALL {
            open_loop(&target, route, rate, WARMUP).await;
            let g = route.gateway().map(|i| gw[i].clone());
            let m0 = match &g {
                Some(g) => metrics_text(&c, g).await,
                None => String::new(),
            };
            let (h, failed) = open_loop(&target, route, rate, RUN).await;
            let (own, transport) = match &g {
                Some(g) => {
                    let m1 = metrics_text(&c, g).await;
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
            rows.push(Row {
                route,
                rate,
                q,
                failed,
                own,
            });
        }
    }

    // (c) saturation, closed loop: the worker alone (both protocols), then through each gateway.
    let wpid = p.worker.pid().to_string();
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
        closed_loop(&target, route, CONCURRENCY, WARMUP).await;
        let (g0, w0, c0) = (gcpu(), cpu_s(&wpid), cpu_s("self"));
        let t = Instant::now();
        let (ok, bad) = closed_loop(&target, route, CONCURRENCY, RUN).await;
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

    let ds = dec
        .iter()
        .find(|d| d.0 == "least-impedance")
        .unwrap_or(&dec[0]);
    let worst = dec.iter().map(|d| pct(&d.1, 0.99)).fold(0.0, f64::max);
    println!("\n==================== gateway benchmark summary ====================");
    println!(
        "machine: {} logical CPUs shared by the client, the gateway and the worker processes (and, \
        at times, other builds): every live figure includes that contention",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "decision ({}): p50 {:.2} µs, p99 {:.2} µs, p999 {:.2} µs [target p99 ≤ 10 µs: {}]; \
        worst p99 over all {} policies {:.2} µs",
        ds.0,
        pct(&ds.1, 0.5),
        pct(&ds.1, 0.99),
        pct(&ds.1, 0.999),
        verdict(pct(&ds.1, 0.99) <= 10.0),
        dec.len(),
        worst
    );
    let base = |route: Route, rate: f64| rows.iter().find(|r| r.route == route && r.rate == rate);
    for rate in RATES {
        let dh = base(Route::DirectHttp, rate).expect("row");
        let dq = base(Route::DirectQuic, rate).expect("row");
        println!(
            "{rate:>5} qps: direct HTTP p50 {:.1} / p99 {:.1} µs; direct QUIC p50 {:.1} / p99 {:.1} µs",
            dh.q[0], dh.q[1], dq.q[0], dq.q[1]
        );
        let q = base(Route::QuicGatewayQuic, rate).expect("row");
        let a50 = q.q[0] - dq.q[0];
        println!(
            "    {:<15} p50 {:.1} / p99 {:.1} µs; vs direct QUIC +p50 {a50:.1} µs [≤ 100: {}], +p99 \
            {:.1} µs; own mean {:.1} µs; failed {}",
            Route::QuicGatewayQuic.label(),
            q.q[0],
            q.q[1],
            verdict(a50 <= 100.0),
            q.q[1] - dq.q[1],
            q.own.unwrap_or(f64::NAN),
            q.failed
        );
        for route in [Route::GatewayQuic, Route::GatewayHttp] {
            let g = base(route, rate).expect("row");
            let (a50, a99) = (g.q[0] - dh.q[0], g.q[1] - dh.q[1]);
            println!(
                "    {:<15} p50 {:.1} / p99 {:.1} µs; vs direct HTTP +p50 {a50:.1} µs [≤ 100: {}], \
                +p99 {a99:.1} µs [≤ 1000: {}]; vs direct QUIC +p50 {:.1}, +p99 {:.1} µs; own mean \
                {:.1} µs; failed {}",
                route.label(),
                g.q[0],
                g.q[1],
                verdict(a50 <= 100.0),
                verdict(a99 <= 1000.0),
                g.q[0] - dq.q[0],
                g.q[1] - dq.q[1],
                g.own.unwrap_or(f64::NAN),
                g.failed
            );
        }
    }
    for (route, qps, cores) in &sat {
        match route.gateway() {
            None => println!(
                "max qps, {:<15}: {qps:.0} (the worker alone)",
                route.label()
            ),
            Some(_) => println!(
                "max qps, {:<15}: {qps:.0}, gateway busy {cores:.2} cores → {:.0} qps per gateway \
                CPU-second [target ≥ 20 000: {}]",
                route.label(),
                qps / cores,
                verdict(qps / cores >= 20_000.0)
            ),
        }
    }
    println!("memory per open stream: {per_stream:.0} B (gateway VmRSS growth / {STREAMS})");
    println!("===================================================================");
    drop(p);
}

fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "MISSED" }
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dec = {
        let _in_runtime = rt.enter();
        decisions()
    };
    rt.block_on(live(&dec));
}
