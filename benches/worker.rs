//! Worker overhead per query: the latency of one query through the worker, over QUIC and over
//! HTTP (OIP JSON and OIP binary tensors), against a direct in-process `Model::run` of the same
//! batch and against the worker's in-process queue (`Variant::infer`), at batch 1 and at the
//! variant's max batch (one request of B items, so the batch runs at once). Loopback only.
//!
//! Run: `cargo bench --bench worker` (backend from CONTINUUM_BACKEND, default auto).
//! Queries are sent one at a time; figures are medians over at least `REPS` queries or
//! `MIN_TIME`, after `WARMUP`.

use bytes::Bytes;
use continuum_wire::InferRequest;
use continuum_wire::QuicClient;
use continuum_wire::frame::{InferFrame, Response};
use continuum_worker::inference::{Model, Tensor, backend, reference_input};
use continuum_worker::{Variant, Worker, WorkerConfig};
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper_util::rt::TokioIo;
use serde_json::json;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// assumption: 20 warm-up queries reach steady state; 200 queries or 2 s give a stable median.
const WARMUP: usize = 20;
const REPS: usize = 200;
const MIN_TIME: Duration = Duration::from_secs(2);
const ITEM: [usize; 3] = [3, 64, 64];

fn stats(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[(v.len() * 9 / 10).min(v.len() - 1)])
}

async fn time<F, Fut>(mut f: F) -> (f64, f64)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    for _ in 0..WARMUP {
        f().await;
    }
    let mut v = Vec::new();
    let start = Instant::now();
    while v.len() < REPS || (start.elapsed() < MIN_TIME && v.len() < 20 * REPS) {
        let t = Instant::now();
        f().await;
        v.push(t.elapsed().as_secs_f64() * 1e3);
    }
    stats(v)
}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

async fn http_once(h: &mut Sender, req: Request<Full<Bytes>>) {
    h.ready().await.unwrap();
    let r = h.send_request(req).await.unwrap();
    assert!(r.status().is_success(), "HTTP {}", r.status());
    r.into_body().collect().await.unwrap();
}

/// As [`time`], for requests on one keep-alive HTTP connection.
async fn time_http(h: &mut Sender, mk: impl Fn() -> Request<Full<Bytes>>) -> (f64, f64) {
    for _ in 0..WARMUP {
        http_once(h, mk()).await;
    }
    let mut v = Vec::new();
    let start = Instant::now();
    while v.len() < REPS || (start.elapsed() < MIN_TIME && v.len() < 20 * REPS) {
        let t = Instant::now();
        http_once(h, mk()).await;
        v.push(t.elapsed().as_secs_f64() * 1e3);
    }
    stats(v)
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run());
}

/// The variants measured: model and max batch.
const VARIANTS: [(&str, usize); 3] = [("cnn-s", 8), ("cnn-m", 8), ("cnn-l", 4)];

async fn run() {
    let models = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models");
    let w = start_worker(&models).await;
    let q = QuicClient::connect(w.quic_addr(), std::slice::from_ref(w.certificate()))
        .await
        .unwrap();
    let mut h = http_connection(&w).await;
    println!("backend: {}", backend::current().unwrap());
    print_header();
    for (m, b) in VARIANTS {
        let name = format!("{m}-b{b}");
        let mut model = Model::load(&models.join(format!("{m}.onnx")), 1, &ITEM).unwrap();
        let variant = w.inner().variants[&name].clone();
        for n in [1, b] {
            let x = reference_input(n, &ITEM);
            let direct = time(|| {
                model.run(n, &x).unwrap();
                async {}
            })
            .await;
            let row = Row {
                direct,
                queue: time_queue(&variant, n, &x).await,
                quic: time_quic(&q, &name, n, &x).await,
                json: time_json(&mut h, &w, &name, n, &x).await,
                binary: time_binary(&mut h, &w, &name, n, &x).await,
            };
            row.print(&name, n);
        }
    }
    q.close().await;
    w.shutdown().await;
}

/// Starts a worker serving every one of [`VARIANTS`] from `models`, on loopback ports.
async fn start_worker(models: &std::path::Path) -> Worker {
    let mut vs = Vec::new();
    for (m, b) in VARIANTS {
        vs.push(json!({"name": format!("{m}-b{b}"), "model": m, "max_batch": b, "max_queue_delay_ms": 0.0}));
    }
    let cfg: WorkerConfig = serde_json::from_value(json!({
        "backend": std::env::var("CONTINUUM_BACKEND").unwrap_or_else(|_| "auto".into()),
        "models_dir": models, "http": {"listen": "127.0.0.1:0"}, "quic": {"listen": "127.0.0.1:0"},
        "variants": vs}))
    .unwrap();
    Worker::start(cfg).await.unwrap()
}

/// One keep-alive HTTP/1 connection to `w` (no Nagle delay).
async fn http_connection(w: &Worker) -> Sender {
    let tcp = tokio::net::TcpStream::connect(w.http_addr()).await.unwrap();
    tcp.set_nodelay(true).unwrap();
    let (h, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .unwrap();
    tokio::spawn(conn);
    h
}

/// The shape of a batch of `n` items.
fn shape_of(n: usize) -> Vec<usize> {
    vec![n, 3, 64, 64]
}

/// The worker's in-process queue: `Variant::infer` of a batch of `n` items `x`.
async fn time_queue(variant: &Arc<Variant>, n: usize, x: &[f32]) -> (f64, f64) {
    let shape = shape_of(n);
    time(|| {
        let (v, req) = (
            variant.clone(),
            InferRequest {
                shape: shape.clone(),
                data: x.to_vec(),
                deadline: None,
                stream: None,
            },
        );
        async move {
            v.infer(req).await.unwrap();
        }
    })
    .await
}

/// One query of `n` items `x` to variant `name` over QUIC.
async fn time_quic(q: &QuicClient, name: &str, n: usize, x: &[f32]) -> (f64, f64) {
    let frame = InferFrame {
        stream_id: 1,
        deadline_us: 0,
        model: name.to_string(),
        input: Tensor {
            shape: shape_of(n),
            data: x.to_vec(),
        },
    };
    time(|| async {
        match q.infer(&frame).await.unwrap() {
            Response::Ok { .. } => {}
            Response::Error { message, .. } => panic!("{message}"),
        }
    })
    .await
}

/// The OIP inference path of variant `name` on `w`.
fn infer_path(w: &Worker, name: &str) -> String {
    format!("http://{}/v2/models/{name}/infer", w.http_addr())
}

/// One query of `n` items `x` to variant `name` over HTTP, OIP JSON.
async fn time_json(h: &mut Sender, w: &Worker, name: &str, n: usize, x: &[f32]) -> (f64, f64) {
    let body_json = Bytes::from(serde_json::to_vec(&json!({"inputs": [{"name": "input", "shape": shape_of(n), "datatype": "FP32", "data": x}]})).unwrap());
    let path = infer_path(w, name);
    time_http(h, || {
        Request::post(&path)
            .header("host", "localhost")
            .body(Full::new(body_json.clone()))
            .unwrap()
    })
    .await
}

/// One query of `n` items `x` to variant `name` over HTTP, OIP binary tensors.
async fn time_binary(h: &mut Sender, w: &Worker, name: &str, n: usize, x: &[f32]) -> (f64, f64) {
    let header = serde_json::to_vec(&json!({"inputs": [{"name": "input", "shape": shape_of(n), "datatype": "FP32",
        "parameters": {"binary_data_size": x.len() * 4}}], "parameters": {"binary_data_output": true}})).unwrap();
    let hlen = header.len();
    let mut bin = header;
    bin.extend(x.iter().flat_map(|f| f.to_le_bytes()));
    let bin = Bytes::from(bin);
    let path = infer_path(w, name);
    time_http(h, || {
        Request::post(&path)
            .header("host", "localhost")
            .header("inference-header-content-length", hlen)
            .body(Full::new(bin.clone()))
            .unwrap()
    })
    .await
}

/// The table's header.
fn print_header() {
    println!(
        "{:<10} {:>3} {:>18} {:>18} {:>18} {:>18} {:>18}",
        "variant",
        "n",
        "direct ms",
        "in-proc queue ms",
        "QUIC ms",
        "HTTP JSON ms",
        "HTTP binary ms"
    );
}

/// One variant and batch size's (median, p90) latencies, ms, by path.
struct Row {
    direct: (f64, f64),
    queue: (f64, f64),
    quic: (f64, f64),
    json: (f64, f64),
    binary: (f64, f64),
}

impl Row {
    /// Prints the latencies, then each path's overhead over the direct run.
    fn print(&self, name: &str, n: usize) {
        let cell = |(med, p90): (f64, f64)| format!("{med:.3} (p90 {p90:.3})");
        let over = |(med, _): (f64, f64)| format!("+{:.3}", med - self.direct.0);
        println!(
            "{:<10} {:>3} {:>18} {:>18} {:>18} {:>18} {:>18}",
            name,
            n,
            cell(self.direct),
            cell(self.queue),
            cell(self.quic),
            cell(self.json),
            cell(self.binary)
        );
        println!(
            "{:<10} {:>3} {:>18} {:>18} {:>18} {:>18} {:>18}",
            "  overhead",
            "",
            "",
            over(self.queue),
            over(self.quic),
            over(self.json),
            over(self.binary)
        );
    }
}
