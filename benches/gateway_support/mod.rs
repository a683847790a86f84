//! Helpers of benches/gateway.rs: the worker and gateway child processes (the release
//! `continuum` binary, so that each process's CPU time and memory can be read from /proc), a
//! pooled HTTP client, the query bodies, and an open-loop pacer.

use bytes::Bytes;
use continuum_wire::QuicClient;
use continuum_wire::frame::{InferFrame, Response};
use continuum_wire::reference_input;
use hdrhistogram::Histogram;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Shape of one input image, as models/models.yaml.
pub const ITEM: [usize; 3] = [3, 64, 64];
/// Linux USER_HZ, the unit of utime/stime in /proc/<pid>/stat. assumption: 100, its value on
/// every mainstream Linux build (sysconf(_SC_CLK_TCK)).
const USER_HZ: f64 = 100.0;

/// A file of the repository.
pub fn repo(p: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(p)
}

/// A child process, killed when dropped.
pub struct Child {
    proc: std::process::Child,
}

impl Child {
    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.proc.id()
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.proc.kill();
        let _ = self.proc.wait();
    }
}

/// Starts `continuum <cmd> --config <cfg>` (the release binary of this package, or the binary
/// `CONTINUUM_BENCH_BIN` names, to compare builds with one bench), logging warnings and errors
/// to `<cfg>.log`.
pub fn spawn(cmd: &str, cfg: &Path) -> Child {
    let log = std::fs::File::create(cfg.with_extension("log")).expect("log file");
    let bin = std::env::var_os("CONTINUUM_BENCH_BIN")
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_continuum").into());
    let proc = Command::new(bin)
        .args([cmd, "--config"])
        .arg(cfg)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("continuum binary starts");
    Child { proc }
}

/// A free loopback TCP port (bound and released: a small race, acceptable for a bench).
pub fn free_tcp() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// A free loopback UDP port.
pub fn free_udp() -> u16 {
    let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    s.local_addr().unwrap().port()
}

/// CPU time (user + system) a process has used, s (`/proc/<pid>/stat`, or `self`).
pub fn cpu_s(pid: &str) -> f64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("proc stat");
    let rest = &s[s.rfind(')').expect("comm") + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // Fields 14 and 15 of proc(5); `rest` starts at field 3.
    let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
    ticks / USER_HZ
}

/// Resident set size of a process, bytes (`VmRSS` of `/proc/<pid>/status`).
pub fn rss_bytes(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    let kb = s
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .expect("VmRSS");
    kb * 1024
}

/// A pooled keep-alive HTTP/1.1 client (TCP_NODELAY).
pub type HttpClient = Client<HttpConnector, Full<Bytes>>;

/// A new [`HttpClient`].
pub fn http_client() -> HttpClient {
    let mut c = HttpConnector::new();
    c.set_nodelay(true);
    Client::builder(TokioExecutor::new()).build(c)
}

/// One request; status and body (status 0: transport error).
pub async fn send(c: &HttpClient, method: &str, uri: &str, body: Body) -> (u16, Bytes) {
    let mut b = Request::builder().method(method).uri(uri);
    let payload = match body {
        Body::Empty => Bytes::new(),
        Body::Json(v) => {
            b = b.header("content-type", "application/json");
            Bytes::from(serde_json::to_vec(&v).unwrap())
        }
        Body::Binary(bytes, hlen) => {
            b = b.header("inference-header-content-length", hlen);
            bytes
        }
    };
    let Ok(r) = c.request(b.body(Full::new(payload)).unwrap()).await else {
        return (0, Bytes::new());
    };
    let st = r.status().as_u16();
    match r.into_body().collect().await {
        Ok(x) => (st, x.to_bytes()),
        Err(_) => (0, Bytes::new()),
    }
}

/// A request body.
pub enum Body {
    /// None.
    Empty,
    /// JSON.
    Json(Value),
    /// OIP v2 binary: the bytes and the JSON header's length.
    Binary(Bytes, usize),
}

/// One image as an OIP v2 binary request (binary output asked for): bytes, header length.
pub fn binary_query() -> (Bytes, usize) {
    let x = reference_input(1, &ITEM);
    let header = serde_json::to_vec(
        &json!({"inputs": [{"name": "input", "shape": [1, 3, 64, 64],
        "datatype": "FP32", "parameters": {"binary_data_size": x.len() * 4}}],
        "parameters": {"binary_data_output": true}}),
    )
    .unwrap();
    let hlen = header.len();
    let mut b = header;
    b.extend(x.iter().flat_map(|f| f.to_le_bytes()));
    (Bytes::from(b), hlen)
}

/// One image as a QUIC frame for `model`.
pub fn quic_frame(model: &str) -> InferFrame {
    InferFrame {
        stream_id: 1,
        deadline_us: 0,
        model: model.into(),
        input: continuum_wire::Tensor {
            shape: vec![1, 3, 64, 64],
            data: reference_input(1, &ITEM),
        },
    }
}

/// The paths a query can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// Client → worker, HTTP OIP v2 binary.
    DirectHttp,
    /// Client → worker, QUIC frame.
    DirectQuic,
    /// Client → gateway (HTTP OIP v2 binary) → QUIC → worker.
    GatewayQuic,
    /// Client → gateway (HTTP OIP v2 binary) → HTTP OIP v2 binary → worker.
    GatewayHttp,
    /// Client → gateway (QUIC frame) → QUIC → worker: QUIC end to end.
    QuicGatewayQuic,
}

impl Route {
    /// All of them, in report order.
    pub const ALL: [Route; 5] = [
        Self::DirectHttp,
        Self::DirectQuic,
        Self::GatewayQuic,
        Self::GatewayHttp,
        Self::QuicGatewayQuic,
    ];

    /// Label for the report.
    pub fn label(self) -> &'static str {
        match self {
            Self::DirectHttp => "direct HTTP binary",
            Self::DirectQuic => "direct QUIC",
            Self::GatewayQuic => "gateway → QUIC",
            Self::GatewayHttp => "gateway → HTTP",
            Self::QuicGatewayQuic => "QUIC gw → QUIC",
        }
    }

    /// Which gateway it goes through.
    pub fn gateway(self) -> Option<usize> {
        match self {
            Self::GatewayQuic | Self::QuicGatewayQuic => Some(0),
            Self::GatewayHttp => Some(1),
            _ => None,
        }
    }
}

/// What the query senders share.
pub struct Target {
    /// Pooled HTTP client.
    pub http: HttpClient,
    /// QUIC connection to the worker.
    pub quic: QuicClient,
    /// The worker's infer URI (HTTP).
    pub worker_uri: String,
    /// Per gateway (QUIC upstream, HTTP upstream), the infer URIs of its open streams, used
    /// round-robin.
    pub gateway_uris: [Vec<String>; 2],
    /// Binary query body and header length.
    pub body: (Bytes, usize),
    /// QUIC query.
    pub frame: InferFrame,
    /// QUIC connection to the QUIC worker's gateway, and one query frame per open stream
    /// there (the stream id in the name field), used round-robin.
    pub gateway_quic: Option<(QuicClient, Vec<InferFrame>)>,
    next: AtomicUsize,
}

impl Target {
    /// A target; `gateway_uris` are filled in later.
    pub fn new(http: HttpClient, quic: QuicClient, worker_uri: String, model: &str) -> Self {
        Self {
            http,
            quic,
            worker_uri,
            gateway_uris: [Vec::new(), Vec::new()],
            body: binary_query(),
            frame: quic_frame(model),
            gateway_quic: None,
            next: AtomicUsize::new(0),
        }
    }

    /// Sends one query along `r`; the HTTP status (QUIC: 200 or 500; 0: transport error).
    pub async fn fire(&self, r: Route) -> u16 {
        let bin = || Body::Binary(self.body.0.clone(), self.body.1);
        match r {
            Route::DirectHttp => send(&self.http, "POST", &self.worker_uri, bin()).await.0,
            Route::DirectQuic => quic_status(self.quic.infer(&self.frame).await),
            Route::QuicGatewayQuic => {
                let (c, frames) = self
                    .gateway_quic
                    .as_ref()
                    .expect("the gateway's QUIC client");
                let i = self.next.fetch_add(1, Ordering::Relaxed) % frames.len();
                quic_status(c.infer(&frames[i]).await)
            }
            Route::GatewayQuic | Route::GatewayHttp => {
                let uris = &self.gateway_uris[r.gateway().unwrap_or(0)];
                let i = self.next.fetch_add(1, Ordering::Relaxed) % uris.len();
                send(&self.http, "POST", &uris[i], bin()).await.0
            }
        }
    }
}

/// A QUIC answer as an HTTP-like status: 200 answered, 500 an error frame, 0 a transport error.
fn quic_status(r: anyhow::Result<Response>) -> u16 {
    match r {
        Ok(Response::Ok { .. }) => 200,
        Ok(_) => 500,
        Err(_) => 0,
    }
}

/// Failed queries by status (0: transport error).
#[derive(Default, Clone)]
pub struct Failures(pub BTreeMap<u16, u64>);

impl std::fmt::Display for Failures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            return write!(f, "0");
        }
        let parts: Vec<String> = self.0.iter().map(|(s, n)| format!("{n}×{s}")).collect();
        write!(f, "{}", parts.join(" "))
    }
}

/// Latencies in ns (1 ns to 60 s, 3 significant digits).
pub fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000_000, 3).unwrap()
}

/// Sends queries along `p` at a fixed rate for `dur`, each on its own task (open loop: a slow
/// answer never delays the next send). A pacing thread sleeps to each send time; latency runs
/// from the send time to the answer. Returns the latencies and the failed count.
pub async fn open_loop(
    t: &Arc<Target>,
    p: Route,
    rate: f64,
    dur: Duration,
) -> (Histogram<u64>, Failures) {
    let hist = Arc::new(Mutex::new(histogram()));
    let failed = Arc::new(Mutex::new(Failures::default()));
    let pending = Arc::new(AtomicU64::new(0));
    let handle = tokio::runtime::Handle::current();
    let (t2, h2, f2, p2) = (t.clone(), hist.clone(), failed.clone(), pending.clone());
    let pacer = std::thread::spawn(move || {
        let start = Instant::now();
        let n = (rate * dur.as_secs_f64()) as u64;
        for k in 0..n {
            let at = start + Duration::from_secs_f64(k as f64 / rate);
            let now = Instant::now();
            if at > now {
                std::thread::sleep(at - now);
            }
            let (t, h, f, pend) = (t2.clone(), h2.clone(), f2.clone(), p2.clone());
            pend.fetch_add(1, Ordering::AcqRel);
            let sent = Instant::now();
            handle.spawn(async move {
                match t.fire(p).await {
                    200 => {
                        let ns = sent.elapsed().as_nanos() as u64;
                        h.lock().unwrap().saturating_record(ns);
                    }
                    st => *f.lock().unwrap().0.entry(st).or_default() += 1,
                }
                pend.fetch_sub(1, Ordering::AcqRel);
            });
        }
    });
    while !pacer.is_finished() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    pacer.join().unwrap();
    let until = Instant::now() + Duration::from_secs(10); // assumption: twice the upstream timeout
    while pending.load(Ordering::Acquire) > 0 && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let h = hist.lock().unwrap().clone();
    let f = failed.lock().unwrap().clone();
    (h, f)
}

/// `concurrency` tasks each sending queries along `p` back to back for `dur` (closed loop);
/// answered and failed counts.
pub async fn closed_loop(
    t: &Arc<Target>,
    p: Route,
    concurrency: usize,
    dur: Duration,
) -> (u64, u64) {
    let until = Instant::now() + dur;
    let tasks: Vec<_> = (0..concurrency)
        .map(|_| {
            let t = t.clone();
            tokio::spawn(async move {
                let (mut ok, mut bad) = (0u64, 0u64);
                while Instant::now() < until {
                    if t.fire(p).await == 200 {
                        ok += 1;
                    } else {
                        bad += 1;
                    }
                }
                (ok, bad)
            })
        })
        .collect();
    let mut r = (0, 0);
    for x in tasks {
        let (a, b) = x.await.unwrap();
        r = (r.0 + a, r.1 + b);
    }
    r
}

/// The sum and count of a Prometheus histogram `name` in exposition text.
pub fn histogram_sum_count(text: &str, name: &str) -> (f64, f64) {
    let get = |suffix: &str| {
        let key = format!("{name}{suffix}");
        text.lines()
            .filter(|l| l.split([' ', '{']).next() == Some(key.as_str()))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum::<f64>()
    };
    (get("_sum"), get("_count"))
}

/// Polls `uri` until it answers 200 with a body `ok` accepts (60 s at most).
pub async fn wait_ok(c: &HttpClient, uri: &str, ok: impl Fn(&[u8]) -> bool) {
    let until = Instant::now() + Duration::from_secs(60); // assumption: ample for a model load
    loop {
        let (st, body) = send(c, "GET", uri, Body::Empty).await;
        if st == 200 && ok(&body) {
            return;
        }
        assert!(Instant::now() < until, "{uri} not ready within 60 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A stream open request the null worker can serve.
pub fn stream_open() -> Value {
    json!({"task": "object-detection", "app": "bench", "max_delay_ms": 1000.0,
           "min_accuracy": 0.0, "rate_qps": 1.0, "frame_kb": 48, "access_ms": 0.0})
}

/// Opens `n` streams on `concurrency` connections; their ids.
pub async fn open_streams(c: &HttpClient, gw: &str, n: usize, concurrency: usize) -> Vec<String> {
    let uri = format!("{gw}/v1/streams");
    let tasks: Vec<_> = (0..concurrency)
        .map(|k| {
            let (c, uri) = (c.clone(), uri.clone());
            let mine = n / concurrency + usize::from(k < n % concurrency);
            tokio::spawn(async move {
                let mut ids = Vec::with_capacity(mine);
                for _ in 0..mine {
                    let (st, b) = send(&c, "POST", &uri, Body::Json(stream_open())).await;
                    assert_eq!(st, 201, "{}", String::from_utf8_lossy(&b));
                    let v: Value = serde_json::from_slice(&b).unwrap();
                    // Stream ids are signed tokens (strings), not counters.
                    let id = v["stream_id"].as_str().expect("stream_id is a string");
                    ids.push(id.to_owned());
                }
                ids
            })
        })
        .collect();
    let mut ids = Vec::with_capacity(n);
    for t in tasks {
        ids.extend(t.await.unwrap());
    }
    ids
}

/// The gateway's own mean added latency (its `continuum_gateway_added_latency_seconds`
/// histogram) between two scrapes of /metrics, µs.
pub fn own_mean_us(before: &str, after: &str) -> Option<f64> {
    let name = "continuum_gateway_added_latency_seconds";
    let ((s0, n0), (s1, n1)) = (
        histogram_sum_count(before, name),
        histogram_sum_count(after, name),
    );
    (n1 > n0).then(|| (s1 - s0) / (n1 - n0) * 1e6)
}

/// One transport counter of the gateway's QUIC worker connections
/// (`continuum_gateway_upstream_quic{stat="…"}`), summed over workers.
pub fn quic_stat(text: &str, stat: &str) -> f64 {
    let tag = format!("stat=\"{stat}\"");
    text.lines()
        .filter(|l| l.starts_with("continuum_gateway_upstream_quic{") && l.contains(&tag))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// What the QUIC worker connections did between two scrapes: lost packets, congestion events,
/// flow-control blocking frames sent, and the congestion window at the end.
pub fn quic_delta(before: &str, after: &str) -> String {
    let d = |s: &str| quic_stat(after, s) - quic_stat(before, s);
    format!(
        "upstream QUIC: lost {} pkts, {} congestion events, blocked {}/{} (conn/stream), cwnd {:.0} KB",
        d("lost_packets"),
        d("congestion_events"),
        d("data_blocked"),
        d("stream_data_blocked"),
        quic_stat(after, "cwnd_bytes") / 1e3
    )
}

/// The gateway's /metrics text.
pub async fn metrics_text(c: &HttpClient, gw: &str) -> String {
    let (_, b) = send(c, "GET", &format!("{gw}/metrics"), Body::Empty).await;
    String::from_utf8_lossy(&b).into_owned()
}
