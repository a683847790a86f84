//! Helpers shared by the gateway tests: two real workers on loopback (the central office and
//! the cloud of topologies/live.yaml) behind a gateway started in-process, and a small HTTP
//! client. The root package's tests of the `continuum` binary include this file too.

pub use crate::worker::*;

use bytes::Bytes;
use continuum_gateway::{Gateway, GatewayConfig};
use continuum_worker::Worker;
use http_body_util::Full;
use hyper::Request;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A file of the repository: `p` under the first directory above the package that builds the
/// test (the gateway's tests, or the root package's) that holds `topologies/`.
pub fn repo(p: &str) -> PathBuf {
    let mut dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    while !dir.join("topologies").is_dir() {
        assert!(
            dir.pop(),
            "no topologies/ above {}",
            env!("CARGO_MANIFEST_DIR")
        );
    }
    dir.join(p)
}

/// The central-office worker of topologies/live.yaml, certificate written into `dir`.
pub fn co_config(dir: &Path, quic: &str) -> continuum_worker::WorkerConfig {
    config(
        &[("cnn-s-b1", "cnn-s", 1, 0.0), ("cnn-m-b1", "cnn-m", 1, 0.0)],
        json!({"name": "worker-co", "quic": {"listen": quic, "dev_cert_out": dir.join("co.der")}}),
    )
}

/// The cloud worker of topologies/live.yaml.
pub fn cloud_config(dir: &Path, quic: &str) -> continuum_worker::WorkerConfig {
    config(
        &[("cnn-l-b1", "cnn-l", 1, 0.0), ("cnn-l-b4", "cnn-l", 4, 5.0)],
        json!({"name": "worker-cloud", "quic": {"listen": quic, "dev_cert_out": dir.join("cloud.der")}}),
    )
}

/// Gateway settings for antenna ant-00 of topologies/live.yaml in front of `co` (QUIC) and
/// `cloud` (QUIC, or HTTP when `cloud_http`), with `extra` merged at the top level.
pub fn gateway_json(
    dir: &Path,
    co: &Worker,
    cloud: &Worker,
    cloud_http: bool,
    extra: Value,
) -> Value {
    let cloud_up = if cloud_http {
        json!({"name": "worker-cloud", "cluster": "cloud", "protocol": "http",
               "address": format!("http://{}", cloud.http_addr())})
    } else {
        json!({"name": "worker-cloud", "cluster": "cloud", "protocol": "quic",
               "address": cloud.quic_addr().to_string(), "cert": dir.join("cloud.der")})
    };
    gateway_json_with(dir, co.quic_addr(), cloud_up, extra)
}

/// As [`gateway_json`], with the central office's worker at QUIC address `co` (certificate
/// `co.der` in `dir`) and the cloud's upstream settings given.
pub fn gateway_json_with(dir: &Path, co: SocketAddr, cloud_up: Value, extra: Value) -> Value {
    let mut v = json!({
        "name": "test-gateway",
        "topology": repo("topologies/live.yaml"),
        "profiles": repo("profiles/local.yaml"),
        "scheduler": "ant-00",
        "http": {"listen": "127.0.0.1:0"},
        "admin_token": "s3cret",
        "publish_ms": 50,
        // The topology's delays alone decide the bindings the tests expect: on a loaded machine
        // a debug build's QUIC round trips can take tens of milliseconds and, blended in, move
        // the central office past the cloud (the blend itself is a unit test of the load view).
        "rtt_weight": 0.0,
        "workers": [
            {"name": "worker-co", "cluster": "co-0", "protocol": "quic",
             "address": co.to_string(), "cert": dir.join("co.der")},
            cloud_up,
        ],
        "tasks": {"object-detection": {"input": "input", "output": "output",
                                        "shape": [3, 64, 64], "output_shape": [16]}},
    });
    if let Value::Object(m) = extra {
        for (k, x) in m {
            v[k] = x;
        }
    }
    v
}

/// Two workers and a gateway.
pub struct Live {
    /// Central-office worker.
    pub co: Option<Worker>,
    /// Cloud worker.
    pub cloud: Worker,
    /// The gateway.
    pub gw: Gateway,
    /// Certificates and files.
    pub dir: tempfile::TempDir,
}

impl Live {
    /// The gateway's address.
    pub fn addr(&self) -> SocketAddr {
        self.gw.http_addr()
    }

    /// Rewrites the gateway's settings `file` (QUIC workers) with `extra`, for a reload.
    pub fn write_config(&self, file: &Path, extra: Value) {
        let co = self.co.as_ref().expect("the central office runs");
        let v = gateway_json(self.dir.path(), co, &self.cloud, false, extra);
        write_json(file, &v);
    }

    /// Stops everything.
    pub async fn stop(self) {
        self.gw.shutdown().await;
        if let Some(co) = self.co {
            co.shutdown().await;
        }
        self.cloud.shutdown().await;
    }
}

/// Starts both workers and a gateway (settings from [`gateway_json`]), waits until the gateway
/// sees both workers up.
pub async fn live(cloud_http: bool, extra: Value) -> Live {
    let (dir, co, cloud) = workers().await;
    let cfg: GatewayConfig =
        serde_json::from_value(gateway_json(dir.path(), &co, &cloud, cloud_http, extra)).unwrap();
    live_with(dir, co, cloud, Gateway::start(cfg)).await
}

/// As [`live`] (QUIC workers), but the gateway reads its settings from a file, so that it can
/// reload; returns the file too ([`Live::write_config`] rewrites it).
pub async fn live_from_file(extra: Value) -> (Live, PathBuf) {
    let (dir, co, cloud) = workers().await;
    let file = dir.path().join("gateway.yaml");
    write_json(&file, &gateway_json(dir.path(), &co, &cloud, false, extra));
    let l = live_with(dir, co, cloud, Gateway::start_from_file(&file)).await;
    (l, file)
}

async fn workers() -> (tempfile::TempDir, Worker, Worker) {
    let dir = tempfile::tempdir().unwrap();
    let co = start(co_config(dir.path(), "127.0.0.1:0")).await;
    let cloud = start(cloud_config(dir.path(), "127.0.0.1:0")).await;
    (dir, co, cloud)
}

async fn live_with(
    dir: tempfile::TempDir,
    co: Worker,
    cloud: Worker,
    gw: impl std::future::Future<Output = anyhow::Result<Gateway>>,
) -> Live {
    let gw = gw.await.expect("gateway starts");
    assert!(
        gw.wait_workers_up(Duration::from_secs(20)).await,
        "workers up"
    );
    Live {
        co: Some(co),
        cloud,
        gw,
        dir,
    }
}

/// Writes settings as a file (JSON is YAML).
pub fn write_json(file: &Path, v: &Value) {
    std::fs::write(file, serde_json::to_vec_pretty(v).unwrap()).unwrap();
}

/// A stream open request: `max_delay_ms`, `min_accuracy`, 15 fps, 48 KB, δ = 2 ms.
pub fn stream_req(max_delay_ms: f64, min_accuracy: f64) -> Value {
    json!({"task": "object-detection", "app": "test", "max_delay_ms": max_delay_ms,
           "min_accuracy": min_accuracy, "rate_qps": 15, "frame_kb": 48, "access_ms": 2.0})
}

/// Opens a stream; returns the 201 body.
pub async fn open(addr: SocketAddr, req: &Value) -> Value {
    let (st, _, body) = http(addr, post_json(addr, "/v1/streams", req)).await;
    assert_eq!(st, 201, "{}", String::from_utf8_lossy(&body));
    serde_json::from_slice(&body).unwrap()
}

/// A request with a method, optional bearer token and JSON body.
pub fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> Request<Full<Bytes>> {
    let mut b = Request::builder()
        .method(method)
        .uri(format!("http://{addr}{path}"))
        .header("host", "localhost")
        .header("content-type", "application/json");
    if let Some(t) = token {
        b = b.header("authorization", format!("Bearer {t}"));
    }
    let body = body.map_or_else(Bytes::new, |v| Bytes::from(serde_json::to_vec(v).unwrap()));
    b.body(Full::new(body)).unwrap()
}

/// The value of a metric line starting with `prefix` in Prometheus text, summed over lines.
pub fn metric_sum(text: &str, prefix: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(prefix))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// A loopback address with a port free now, for TCP (`udp` false) or UDP.
pub fn free_addr(udp: bool) -> SocketAddr {
    let a = if udp {
        std::net::UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
    } else {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
    };
    a.unwrap()
}

/// Waits until the gateway at `a` answers ready (at most 60 s).
pub async fn wait_ready(a: SocketAddr) {
    let t = std::time::Instant::now();
    while try_status(a, get(a, "/v2/health/ready")).await != Some(200) {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "gateway {a} ready in time"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until `file` exists and is not empty (a worker's certificate; at most 60 s).
pub async fn wait_file(file: &Path) {
    let t = std::time::Instant::now();
    while std::fs::metadata(file).map_or(true, |m| m.len() == 0) {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "{} written in time",
            file.display()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until the gateway at `a` has published a view in which `n` variants are reachable
/// (every worker's load report of each of them has arrived); panics after `within`.
pub async fn wait_reachable(a: SocketAddr, n: u64, within: Duration) {
    let until = std::time::Instant::now() + within;
    loop {
        let (_, _, body) = http(a, get(a, "/v1/workers")).await;
        let v: Value = serde_json::from_slice(&body).unwrap();
        if v["reachable_variants"].as_u64() == Some(n) {
            return;
        }
        assert!(
            std::time::Instant::now() < until,
            "{n} variants never reachable: {v}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The Prometheus text of the gateway at `a`.
pub async fn metrics_of(a: SocketAddr) -> String {
    let (_, _, body) = http(a, get(a, "/metrics")).await;
    String::from_utf8(body.to_vec()).unwrap()
}

/// A KServe gRPC inference of one reference item of the gateway's task (`object-detection`),
/// with the request `parameters` given (e.g. `stream_id`).
pub fn grpc_infer_request(
    parameters: Vec<(
        &str,
        continuum_wire::grpc::pb::infer_parameter::ParameterChoice,
    )>,
) -> continuum_wire::grpc::pb::ModelInferRequest {
    use continuum_wire::grpc::pb;
    let x = continuum_wire::reference_input(1, &ITEM);
    pb::ModelInferRequest {
        model_name: "object-detection".into(),
        inputs: vec![pb::model_infer_request::InferInputTensor {
            name: "input".into(),
            datatype: "FP32".into(),
            shape: vec![1, 3, 64, 64],
            ..Default::default()
        }],
        raw_input_contents: vec![x.iter().flat_map(|f| f.to_le_bytes()).collect()],
        parameters: parameters
            .into_iter()
            .map(|(k, v)| {
                let p = pb::InferParameter {
                    parameter_choice: Some(v),
                };
                (k.to_string(), p)
            })
            .collect(),
        ..Default::default()
    }
}
