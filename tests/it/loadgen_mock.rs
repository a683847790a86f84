//! The load generator against a tiny in-process mock gateway that follows the gateway's client
//! API: every query offered ends as exactly one outcome, refused streams' queries are counted
//! as rejected, and late answers are failures. Last, against a real gateway serving HTTPS.

use bytes::Bytes;
use continuum_core::profiles::Profiles;
use continuum_core::workload::emission::ClientArrivals;
use continuum_core::workload::{Lambda, Workload};
use continuum_loadgen::{self as loadgen, BodyFormat, LoadOptions, LoadReport};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Input shape the mock publishes: 3·8·8 f32 = 768 bytes.
const SHAPE: [i64; 4] = [-1, 3, 8, 8];
const INPUT_BYTES: usize = 3 * 8 * 8 * 4;
/// The app the mock never binds (503, constraint `accuracy`).
const REFUSED_APP: &str = "video-surveillance";
/// The app whose answers come after its deadline (its max delay is at most 250 ms).
const LATE_APP: &str = "traffic-analytics";
const LATE_MS: u64 = 300;
/// Every this-many-th stream open is rate-limited (429).
const RATE_LIMIT_EVERY: u64 = 4;

#[derive(Default)]
struct Mock {
    opens: AtomicU64,
    rate_limited: AtomicU64,
    infers: AtomicU64,
    bad_bodies: AtomicU64,
    deletes: AtomicU64,
    next_id: AtomicU64,
    streams: Mutex<HashMap<u64, String>>,
}

fn reply(status: StatusCode, body: Value) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap()
}

async fn handle(m: Arc<Mock>, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let (parts, body) = req.into_parts();
    let body = body.collect().await.unwrap().to_bytes();
    let path: Vec<&str> = parts.uri.path().trim_matches('/').split('/').collect();
    match (&parts.method, path.as_slice()) {
        (&Method::GET, ["v2", "models", task]) => reply(
            StatusCode::OK,
            json!({"name": task, "platform": "mock",
                   "inputs": [{"name": "input", "datatype": "FP32", "shape": SHAPE}],
                   "outputs": [{"name": "output", "datatype": "FP32", "shape": [-1, 16]}]}),
        ),
        (&Method::POST, ["v1", "streams"]) => {
            let v: Value = serde_json::from_slice(&body).unwrap();
            let n = m.opens.fetch_add(1, Ordering::SeqCst) + 1;
            let app = v["app"].as_str().unwrap().to_string();
            assert_eq!(v["task"], "object-detection");
            for k in [
                "max_delay_ms",
                "min_accuracy",
                "rate_qps",
                "frame_kb",
                "access_ms",
                "tx_ms",
            ] {
                assert!(v[k].as_f64().is_some(), "open request lacks {k}: {v}");
            }
            if app == REFUSED_APP {
                return reply(
                    StatusCode::SERVICE_UNAVAILABLE,
                    json!({"error": "no feasible binding", "constraint": "accuracy"}),
                );
            }
            if n % RATE_LIMIT_EVERY == 0 {
                m.rate_limited.fetch_add(1, Ordering::SeqCst);
                return reply(StatusCode::TOO_MANY_REQUESTS, json!({"error": "slow down"}));
            }
            let id = m.next_id.fetch_add(1, Ordering::SeqCst) + 1000;
            m.streams.lock().unwrap().insert(id, app);
            reply(
                StatusCode::CREATED,
                json!({"stream_id": id, "variant": "cnn-s-b1", "cluster": "co-0",
                       "expected_delay_ms": 12.5, "policy": "least-impedance"}),
            )
        }
        (&Method::POST, ["v1", "streams", id, "infer"]) => {
            m.infers.fetch_add(1, Ordering::SeqCst);
            let id: u64 = id.parse().unwrap();
            let Some(app) = m.streams.lock().unwrap().get(&id).cloned() else {
                return reply(StatusCode::NOT_FOUND, json!({"error": "unknown stream"}));
            };
            let ok = match parts.headers.get("inference-header-content-length") {
                Some(h) => {
                    let n: usize = h.to_str().unwrap().parse().unwrap();
                    let header: Value = serde_json::from_slice(&body[..n]).unwrap();
                    body.len() == n + INPUT_BYTES
                        && header["inputs"][0]["parameters"]["binary_data_size"] == INPUT_BYTES
                }
                None => {
                    let v: Value = serde_json::from_slice(&body).unwrap();
                    v["inputs"][0]["data"].as_array().map(Vec::len) == Some(INPUT_BYTES / 4)
                }
            };
            if !ok {
                m.bad_bodies.fetch_add(1, Ordering::SeqCst);
                return reply(StatusCode::BAD_REQUEST, json!({"error": "bad body"}));
            }
            let wait = if app == LATE_APP { LATE_MS } else { 2 };
            tokio::time::sleep(Duration::from_millis(wait)).await;
            let mut r = reply(
                StatusCode::OK,
                json!({"model_name": "cnn-s-b1", "model_version": "1",
                       "outputs": [{"name": "output", "datatype": "FP32", "shape": [1, 16], "data": vec![0.0; 16]}]}),
            );
            r.headers_mut()
                .insert("x-continuum-outcome", "success".parse().unwrap());
            r
        }
        (&Method::DELETE, ["v1", "streams", id]) => {
            let id: u64 = id.parse().unwrap();
            m.streams.lock().unwrap().remove(&id);
            m.deletes.fetch_add(1, Ordering::SeqCst);
            Response::builder()
                .status(StatusCode::NO_CONTENT)
                .body(Full::new(Bytes::new()))
                .unwrap()
        }
        _ => reply(StatusCode::NOT_FOUND, json!({"error": "no route"})),
    }
}

async fn start_mock() -> (String, Arc<Mock>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mock = Arc::new(Mock::default());
    let m = mock.clone();
    tokio::spawn(async move {
        loop {
            let (tcp, _) = listener.accept().await.unwrap();
            let m = m.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req| {
                    let m = m.clone();
                    async move { Ok::<_, std::convert::Infallible>(handle(m, req).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tcp), svc)
                    .await;
            });
        }
    });
    (format!("http://{addr}"), mock)
}

fn options(gateway: &str, lambda: f64, duration_s: f64) -> LoadOptions {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let profiles = Profiles::load(&root.join("profiles/object-detection.yaml")).unwrap();
    let mut workload = Workload::load(&root.join("workloads/default.yaml"), &profiles).unwrap();
    workload.lambda = Lambda::Constant(lambda);
    let mut o = LoadOptions::new(gateway, workload, &profiles).unwrap();
    o.duration_s = duration_s;
    o.seed = 7;
    o.timeout = Duration::from_secs(5);
    o
}

/// Queries the options' clients offer, computed from the shared arrival and emission code.
fn scheduled(o: &LoadOptions) -> u64 {
    let horizon = o.duration_s * 1000.0;
    ClientArrivals::new(&o.workload, o.seed, o.scheduler, horizon)
        .map(|c| {
            let mut e = c.emission(o.seed, o.scheduler, horizon);
            std::iter::from_fn(|| e.next(o.workload.jitter)).count() as u64
        })
        .sum()
}

fn app<'a>(r: &'a LoadReport, name: &str) -> &'a loadgen::AppReport {
    r.per_app.iter().find(|a| a.app == name).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn counts_add_up_against_a_mock_gateway() {
    let (url, mock) = start_mock().await;
    let o = options(&url, 1200.0, 2.0);
    let r = loadgen::run(&o).await.unwrap();
    println!("{}", r.to_text_table());
    let q = &r.queries;
    assert!(q.conserved(), "{q:?}");
    assert_eq!(q.offered, scheduled(&o), "offered = the schedule");
    assert!(q.offered > 100, "{q:?}");
    assert_eq!(
        r.per_app.iter().map(|a| a.queries.offered).sum::<u64>(),
        q.offered
    );
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(mock.bad_bodies.load(Ordering::SeqCst), 0);
    // Every query sent reached the mock; every bound stream was closed.
    assert_eq!(mock.infers.load(Ordering::SeqCst), r.sent);
    assert_eq!(mock.deletes.load(Ordering::SeqCst), r.streams.opened);
    assert_eq!(
        r.close_status.get("204").copied().unwrap_or(0),
        r.streams.opened
    );
    assert_eq!(r.infer_status.get("200").copied().unwrap_or(0), r.sent);
    // Streams: opened + refused = arrived; refusals by reason.
    let refused: u64 = r.streams.refused.values().sum();
    assert_eq!(r.streams.opened + refused, r.streams.arrived);
    assert_eq!(r.streams.arrived, mock.opens.load(Ordering::SeqCst));
    let limited = mock.rate_limited.load(Ordering::SeqCst);
    assert!(limited > 0);
    assert_eq!(
        r.streams.refused.get("rate-limited").copied(),
        Some(limited)
    );
    assert_eq!(r.open_status.get("429").copied(), Some(limited));
    // The refused app: every query it would have sent is rejected, none was sent.
    let v = app(&r, REFUSED_APP);
    assert!(v.streams.arrived > 0);
    assert_eq!(v.streams.opened, 0);
    assert_eq!(
        v.streams.refused.get("accuracy").copied(),
        Some(v.streams.arrived)
    );
    assert_eq!(v.queries.rejected, v.queries.offered);
    assert_eq!(v.latency_ms.count, 0);
    // The late app: every answered query is a failure.
    let late = app(&r, LATE_APP);
    assert_eq!(late.queries.success, 0);
    assert!(
        late.latency_ms.p50 >= LATE_MS as f64,
        "{:?}",
        late.latency_ms
    );
    // Prompt answers within generous deadlines are successes.
    let ar = app(&r, "ar-overlay");
    assert!(ar.queries.success > ar.queries.failure, "{:?}", ar.queries);
    // Rejected = the queries of refused streams (none sent was refused here).
    assert_eq!(q.offered - r.sent, q.rejected);
    assert_eq!(r.gateway_outcome.get("success").copied(), Some(r.sent));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn json_bodies_and_the_stream_cap() {
    let (url, mock) = start_mock().await;
    let mut o = options(&url, 1200.0, 1.0);
    o.body = BodyFormat::Json;
    o.max_streams = Some(3);
    let r = loadgen::run(&o).await.unwrap();
    let q = &r.queries;
    assert!(q.conserved(), "{q:?}");
    assert_eq!(q.offered, scheduled(&o));
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(mock.bad_bodies.load(Ordering::SeqCst), 0);
    let capped = r.streams.refused.get("max-streams").copied().unwrap_or(0);
    assert!(capped > 0, "{:?}", r.streams);
    // Capped clients never reached the gateway.
    assert_eq!(
        mock.opens.load(Ordering::SeqCst),
        r.streams.arrived - capped
    );
    assert!(r.streams.opened <= r.streams.arrived);
}

/// `--warm-up N` guarantees N clients at the start, even where the run's own arrivals are fewer
/// (λ 1/min for 1 s: almost surely none); a run with no client is named as such.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn warm_up_guarantees_its_clients_and_an_empty_run_is_named() {
    let (url, _mock) = start_mock().await;
    let mut o = options(&url, 1.0, 1.0);
    let empty = loadgen::run(&o).await.unwrap();
    assert_eq!(empty.streams.arrived, 0);
    let m = loadgen::no_traffic(&empty, &o).expect("a warning");
    assert!(
        m.contains("no client arrived in 1 s") && m.contains("--warm-up"),
        "{m}"
    );
    o.warm_up = 3;
    let r = loadgen::run(&o).await.unwrap();
    assert_eq!(r.streams.arrived, 3, "{:?}", r.streams);
    assert!(r.queries.conserved(), "{:?}", r.queries);
    assert!(loadgen::no_traffic(&r, &o).is_none());
}

/// A real gateway serving HTTPS and verifying client certificates: the load generator, given
/// the gateway's CA and a client certificate, runs its load over TLS (HTTP/1.1, then HTTP/2
/// by ALPN); without the client certificate, or trusting another CA, it stops before any
/// stream with an error that says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_load_generator_runs_over_tls_against_a_gateway_that_verifies_clients() {
    use continuum_testkit::gateway::{live, repo};
    use continuum_wire::dev_pki;
    use continuum_wire::tcp_tls::ClientTls;
    let dir = tempfile::tempdir().unwrap();
    let pki = dev_pki::generate(dir.path(), "").unwrap();
    let tls = json!({"cert": pki.server_cert, "key": pki.server_key, "client_ca": pki.ca});
    let l = live(
        false,
        json!({"http": {"listen": "127.0.0.1:0", "tls": tls}}),
    )
    .await;
    let profiles = Profiles::load(&repo("profiles/local.yaml")).unwrap();
    let mut workload = Workload::load(&repo("workloads/live.yaml"), &profiles).unwrap();
    // assumption: 60 clients/min for 2 s, two of them at once, offers tens of queries.
    workload.lambda = Lambda::Constant(60.0);
    let url = format!("https://127.0.0.1:{}", l.addr().port());
    let mut o = LoadOptions::new(&url, workload, &profiles).unwrap();
    o.duration_s = 2.0;
    o.warm_up = 2;
    o.seed = 7;
    let client = |ca: &Path, with_cert: bool| ClientTls {
        ca: ca.to_path_buf(),
        cert: with_cert.then(|| pki.client_cert.clone()),
        key: with_cert.then(|| pki.client_key.clone()),
    };
    for http2 in [false, true] {
        o.http2 = http2;
        o.gateway_tls = Some(client(&pki.ca, true));
        let r = loadgen::run(&o).await.unwrap();
        let summary = format!("http2 {http2}: {}", r.to_text_table());
        assert!(r.queries.conserved(), "{summary}");
        assert!(r.errors.is_empty(), "{:?} {summary}", r.errors);
        assert!(r.streams.opened >= 2, "{summary}");
        assert_eq!(r.open_status.get("201").copied(), Some(r.streams.opened));
        assert!(r.sent > 10, "{summary}");
        let answered = r.infer_status.get("200").copied().unwrap_or(0);
        assert!(answered > 10, "{summary}");
        assert!(r.queries.success > 0, "{summary}");
    }
    o.http2 = false;
    // The gateway refuses a client without a certificate. Under TLS 1.3 the refusal comes
    // after the handshake, as the alert or only as a closed connection, so the load generator
    // names the likely cause itself.
    o.gateway_tls = Some(client(&pki.ca, false));
    let e = format!("{:#}", loadgen::run(&o).await.unwrap_err());
    assert!(
        e.contains("cannot reach the gateway")
            && e.contains("no client certificate was offered")
            && e.contains("--gateway-cert"),
        "{e}"
    );
    // The load generator refuses a gateway whose certificate another CA signed.
    let other = dev_pki::generate(dir.path(), "other-").unwrap();
    o.gateway_tls = Some(client(&other.ca, true));
    let e = format!("{:#}", loadgen::run(&o).await.unwrap_err());
    assert!(
        e.contains("cannot reach the gateway") && e.contains("invalid peer certificate"),
        "{e}"
    );
    // And plain http:// to the TLS listener gets no answer.
    o.gateway_tls = None;
    o.set_gateways(&[format!("http://127.0.0.1:{}", l.addr().port())])
        .unwrap();
    assert!(loadgen::run(&o).await.is_err());
    l.stop().await;
}
