//! A worker on loopback with free ports, direct inference, a small HTTP client.

use bytes::Bytes;
use continuum_wire::QuicClient;
use continuum_worker::inference::{Model, Tensor, reference_input};
use continuum_worker::{Worker, WorkerConfig};
use http_body_util::{BodyExt, Full};
use hyper::{HeaderMap, Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::json;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// Shape of one input item of every model in models/.
pub const ITEM: [usize; 3] = [3, 64, 64];

/// The models directory of the repository: the first `models/` above the package that builds
/// the test kit (the repository's root).
pub fn models_dir() -> PathBuf {
    let mut dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    while !dir.join("models").is_dir() {
        assert!(dir.pop(), "no models/ above {}", env!("CARGO_MANIFEST_DIR"));
    }
    dir.join("models")
}

/// A worker config on 127.0.0.1 port 0 serving `variants` (name, model, max_batch, queue delay
/// ms), with `extra` JSON merged at the top level.
pub fn config(variants: &[(&str, &str, usize, f64)], extra: serde_json::Value) -> WorkerConfig {
    let vs: Vec<_> = variants
        .iter()
        .map(|(n, m, b, d)| json!({"name": n, "model": m, "max_batch": b, "max_queue_delay_ms": d}))
        .collect();
    let mut v = json!({
        "name": "test-worker",
        "backend": std::env::var("CONTINUUM_BACKEND").unwrap_or_else(|_| "auto".into()),
        "models_dir": models_dir(),
        "http": {"listen": "127.0.0.1:0"},
        "quic": {"listen": "127.0.0.1:0"},
        "load_report_ms": 50,
        "variants": vs,
    });
    if let serde_json::Value::Object(m) = extra {
        for (k, x) in m {
            match (v.get_mut(&k), x) {
                (Some(serde_json::Value::Object(dst)), serde_json::Value::Object(src)) => {
                    dst.extend(src);
                }
                (_, x) => v[k] = x,
            }
        }
    }
    serde_json::from_value(v).expect("valid test config")
}

/// Starts a worker, bounded in time.
pub async fn start(cfg: WorkerConfig) -> Worker {
    tokio::time::timeout(Duration::from_secs(60), Worker::start(cfg))
        .await
        .expect("worker started in time")
        .expect("worker started")
}

/// A QUIC client of `w`.
pub async fn quic(w: &Worker) -> QuicClient {
    QuicClient::connect(w.quic_addr(), std::slice::from_ref(w.certificate()))
        .await
        .expect("QUIC connect")
}

/// Direct in-process inference of `n` reference items on `model`.
pub fn direct(model: &str, n: usize) -> Tensor {
    let mut m = Model::load(&models_dir().join(format!("{model}.onnx")), 1, &ITEM).unwrap();
    m.run(n, &reference_input(n, &ITEM)).unwrap()
}

/// Asserts two tensors agree (same shape, values within `tol`).
pub fn assert_close(a: &Tensor, b: &Tensor, tol: f32) {
    assert_eq!(a.shape, b.shape);
    for (i, (x, y)) in a.data.iter().zip(&b.data).enumerate() {
        assert!((x - y).abs() <= tol, "element {i}: {x} vs {y}");
    }
}

/// Sends `head` (a request's line and headers, no body) on a fresh TCP connection and returns
/// the answer as text: its head and the body its `content-length` announces (or what came before
/// the server closed). For requests refused from their headers alone (a declared body over the
/// limit), where a client still writing the body could see the connection closed under it.
pub async fn head_only(addr: SocketAddr, head: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let read = async {
        let mut buf = [0u8; 4096];
        loop {
            let text = String::from_utf8_lossy(&got).to_string();
            if let Some(end) = text.find("\r\n\r\n") {
                let len = text[..end]
                    .lines()
                    .find_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        k.eq_ignore_ascii_case("content-length")
                            .then(|| v.trim().parse::<usize>().ok())?
                    })
                    .unwrap_or(0);
                if got.len() >= end + 4 + len {
                    return;
                }
            }
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(30), read)
        .await
        .expect("an answer in time");
    String::from_utf8_lossy(&got).to_string()
}

/// One HTTP/1.1 request on a fresh connection; returns status, headers and body.
pub async fn http(addr: SocketAddr, req: Request<Full<Bytes>>) -> (StatusCode, HeaderMap, Bytes) {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .unwrap();
    tokio::spawn(conn);
    let resp = tokio::time::timeout(Duration::from_secs(30), sender.send_request(req))
        .await
        .expect("HTTP answer in time")
        .unwrap();
    let (parts, body) = resp.into_parts();
    (
        parts.status,
        parts.headers,
        body.collect().await.unwrap().to_bytes(),
    )
}

/// The status of one request on a fresh connection, or `None` when the server cannot be
/// reached or does not answer within 10 s.
pub async fn try_status(addr: SocketAddr, req: Request<Full<Bytes>>) -> Option<u16> {
    let tcp = tokio::net::TcpStream::connect(addr).await.ok()?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .ok()?;
    tokio::spawn(conn);
    let r = tokio::time::timeout(Duration::from_secs(10), sender.send_request(req))
        .await
        .ok()?
        .ok()?;
    Some(r.status().as_u16())
}

/// A GET request.
pub fn get(addr: SocketAddr, path: &str) -> Request<Full<Bytes>> {
    Request::get(format!("http://{addr}{path}"))
        .header("host", "localhost")
        .body(Full::default())
        .unwrap()
}

/// A POST request with a JSON body.
pub fn post_json(addr: SocketAddr, path: &str, body: &serde_json::Value) -> Request<Full<Bytes>> {
    Request::post(format!("http://{addr}{path}"))
        .header("host", "localhost")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(serde_json::to_vec(body).unwrap())))
        .unwrap()
}

/// An OIP JSON infer body of `n` reference items.
pub fn infer_json(n: usize) -> serde_json::Value {
    json!({"id": "q1", "inputs": [{"name": "input", "shape": [n, 3, 64, 64], "datatype": "FP32",
        "data": reference_input(n, &ITEM)}]})
}

/// The `Inference-Header-Content-Length` of a binary-tensor answer (the length of its JSON part).
pub fn header_len_of(headers: &HeaderMap) -> usize {
    headers["inference-header-content-length"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap()
}

/// An OIP body of `n` reference items with the binary tensor extension (input and output);
/// returns it with the length of its JSON header.
pub fn infer_binary(n: usize) -> (Vec<u8>, usize) {
    let x = reference_input(n, &ITEM);
    let header = serde_json::to_vec(&json!({
        "inputs": [{"name": "input", "shape": [n, 3, 64, 64], "datatype": "FP32",
                    "parameters": {"binary_data_size": x.len() * 4}}],
        "outputs": [{"name": "output", "parameters": {"binary_data": true}}]}))
    .unwrap();
    let len = header.len();
    let mut body = header;
    body.extend(x.iter().flat_map(|f| f.to_le_bytes()));
    (body, len)
}

/// The `error` field of a JSON error body.
pub fn error_of(body: &[u8]) -> String {
    let v: serde_json::Value = serde_json::from_slice(body).expect("error body is JSON");
    v["error"].as_str().expect("an `error` string").to_string()
}

/// The output tensor of an OIP JSON answer.
pub fn output_of(body: &[u8]) -> Tensor {
    output_of_json(&serde_json::from_slice(body).unwrap())
}

/// The output tensor of a parsed OIP JSON answer.
pub fn output_of_json(v: &serde_json::Value) -> Tensor {
    let out = &v["outputs"][0];
    Tensor {
        shape: serde_json::from_value(out["shape"].clone()).unwrap(),
        data: serde_json::from_value(out["data"].clone()).unwrap(),
    }
}

/// The status and message of a QUIC error frame (panics on an answer).
pub fn error_frame(r: continuum_wire::frame::Response) -> (u8, String) {
    match r {
        continuum_wire::frame::Response::Error { status, message } => (status, message),
        continuum_wire::frame::Response::Ok { .. } => panic!("expected an error frame"),
    }
}
