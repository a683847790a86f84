//! Seed corpora: the repository's real input files where a target reads files, hand-made
//! messages encoded by the project's own encoders where it reads a protocol; and the saved
//! regression inputs (`fuzz/regressions/<target>/`).

use crate::wire::{FuzzModel, join_oip};
use continuum_wire::Tensor;
use continuum_wire::frame::{self, InferFrame, Response};
use continuum_wire::grpc::pb;
use continuum_wire::oip::{self, ParsedInfer};
use prost::Message;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The workspace root (where `models/`, `topologies/` and `fuzz/` are).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The files of `dir` (relative to the root) and its subfolders whose names end with `ext`,
/// sorted.
fn files(dir: &str, ext: &str) -> Vec<Vec<u8>> {
    let mut paths = Vec::new();
    let mut todo = vec![repo_root().join(dir)];
    while let Some(d) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if p.to_string_lossy().ends_with(ext) {
                paths.push(p);
            }
        }
    }
    paths.sort();
    paths.iter().filter_map(|p| std::fs::read(p).ok()).collect()
}

fn parsed(id: Option<&str>, parameters: Value) -> ParsedInfer {
    let Value::Object(parameters) = parameters else {
        unreachable!("parameters are an object")
    };
    ParsedInfer {
        id: id.map(String::from),
        shape: vec![1, 2],
        data: vec![0.5, -1.25],
        raw: None,
        deadline: None,
        stream: None,
        binary_output: false,
        parameters,
    }
}

fn oip_seeds() -> Vec<Vec<u8>> {
    let json_bodies = [
        json!({"inputs": [{"name": "input", "shape": [1, 2], "datatype": "FP32", "data": [0.5, -1.25]}]}),
        json!({"id": "q1", "parameters": {"deadline_ms": 50, "stream_id": "tok.en"},
               "inputs": [{"name": "input", "shape": [2, 2], "datatype": "FP32", "data": [[1, 2], [3, 4]]}],
               "outputs": [{"name": "output", "parameters": {"binary_data": true}}]}),
        json!({"parameters": {"stream_id": 7, "binary_data_output": true, "max_delay_ms": 80.5},
               "inputs": [{"name": "input", "shape": [0], "datatype": "FP32", "data": []}]}),
    ];
    let mut out: Vec<Vec<u8>> = json_bodies
        .iter()
        .map(|b| join_oip(None, &serde_json::to_vec(b).expect("JSON")))
        .collect();
    for p in [
        parsed(None, json!({})),
        parsed(Some("x"), json!({"deadline_ms": 12.5, "stream_id": 3})),
    ] {
        let (bytes, n) = oip::encode_request(&FuzzModel, &p);
        out.push(join_oip(Some(n), &bytes));
    }
    let answer = json!({"model_name": "cnn-s", "outputs": [{"name": "output", "shape": [1, 2],
                        "datatype": "FP32", "parameters": {"binary_data_size": 8}}],
                        "parameters": {"queue_us": 5}});
    let mut body = serde_json::to_vec(&answer).expect("JSON");
    let n = body.len();
    body.extend_from_slice(&[0, 0, 0, 63, 0, 0, 128, 191]);
    out.push(join_oip(Some(n), &body));
    out
}

fn param(c: pb::infer_parameter::ParameterChoice) -> pb::InferParameter {
    pb::InferParameter {
        parameter_choice: Some(c),
    }
}

fn grpc_seeds() -> Vec<Vec<u8>> {
    use pb::infer_parameter::ParameterChoice as P;
    let input = |contents: Option<Vec<f32>>| pb::model_infer_request::InferInputTensor {
        name: "input".into(),
        datatype: "FP32".into(),
        shape: vec![1, 2],
        contents: contents.map(|fp32_contents| pb::InferTensorContents {
            fp32_contents,
            ..Default::default()
        }),
        ..Default::default()
    };
    let output = pb::model_infer_request::InferRequestedOutputTensor {
        name: "output".into(),
        ..Default::default()
    };
    let mut with_params = pb::ModelInferRequest {
        model_name: "cnn-s".into(),
        id: "q7".into(),
        inputs: vec![input(Some(vec![0.5, -1.25]))],
        outputs: vec![output],
        ..Default::default()
    };
    for (k, v) in [
        ("deadline_ms", param(P::DoubleParam(40.0))),
        ("stream_id", param(P::StringParam("tok.en".into()))),
        ("max_delay_ms", param(P::Int64Param(90))),
        ("min_accuracy", param(P::Uint64Param(0))),
        ("binary_data_output", param(P::BoolParam(true))),
    ] {
        with_params.parameters.insert(k.into(), v);
    }
    let raw = pb::ModelInferRequest {
        model_name: "cnn-s".into(),
        inputs: vec![input(None)],
        raw_input_contents: vec![
            [0.5f32, -1.25]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect(),
        ],
        ..Default::default()
    };
    vec![with_params.encode_to_vec(), raw.encode_to_vec()]
}

fn frame_seeds() -> Vec<Vec<u8>> {
    let t = Tensor {
        shape: vec![1, 2],
        data: vec![0.5, -1.25],
    };
    vec![
        frame::encode_infer(&InferFrame {
            stream_id: 7,
            deadline_us: 50_000,
            model: "cnn-s-b4".into(),
            input: t.clone(),
        }),
        frame::encode_subscribe(100),
        frame::encode_response(&Response::Ok {
            queue_us: 10,
            compute_us: 2000,
            batch_items: 4,
            output: t,
        }),
        frame::encode_response(&Response::Error {
            status: frame::STATUS_REJECTED,
            message: "queue full".into(),
        }),
    ]
}

fn scrape_seeds() -> Vec<Vec<u8>> {
    let prom = "# HELP continuum_queue_len Items waiting.\n# TYPE continuum_queue_len gauge\n\
                continuum_queue_len{variant=\"cnn-s-b4\",note=\"a\\\"b\\\\c\\n\"} 3 1700000000\n\
                continuum_served_total{variant=\"cnn-s-b4\"} +Inf\nup NaN # {trace=\"1\"} 1\n# EOF\n";
    let report = json!({"worker": "w0", "seq": 3, "uptime_ms": 1200, "window_ms": 1000,
        "variants": [{"variant": "cnn-s-b4", "incoming_qps": 12.5, "throughput_qps": 12.0,
        "open_streams": 2, "queue_len": 1, "max_batch": 4, "served_total": 40, "rejected_total": 1}]});
    vec![
        prom.as_bytes().to_vec(),
        serde_json::to_vec(&report).expect("JSON"),
    ]
}

fn token_seeds() -> Vec<Vec<u8>> {
    let claims = json!({"n": "0123456789abcdef0123456789abcdef", "req": {"task": "object-detection",
        "max_delay_ms": 100.0, "min_accuracy": 0.3, "rate_qps": 15.0, "frame_kb": 48.0,
        "app": "cam", "access_ms": 2.0}});
    let payload = serde_json::to_vec(&claims).expect("JSON");
    let token = continuum_gateway::bench::sign_token(b"continuum fuzz stream key, 32 B.", &payload)
        .expect("the key is long enough");
    let mut signed = vec![1];
    signed.extend_from_slice(&payload);
    let mut sent = vec![0];
    sent.extend_from_slice(token.as_bytes());
    vec![signed, sent, b"\0not.a-token".to_vec()]
}

/// The largest topology file taken as a seed, bytes.
const MAX_TOPOLOGY_SEED: usize = 64 * 1024;

/// The seed corpus of the target `name`, from the repository's files and the project's own
/// encoders (empty for an unknown name).
pub fn seeds(name: &str) -> Vec<Vec<u8>> {
    match name {
        "oip_json" => oip_seeds(),
        "grpc_infer" => grpc_seeds(),
        "quic_frame" => frame_seeds(),
        "worker_scrape" => scrape_seeds(),
        "stream_token" => token_seeds(),
        "yaml_profiles" => files("profiles", ".yaml"),
        // The two imported topologies (200 and 430 KB) take half a second each to load: as
        // seeds they would set libFuzzer's input length and slow every run a hundredfold.
        "yaml_topology" => files("topologies", ".yaml")
            .into_iter()
            .filter(|b| b.len() <= MAX_TOPOLOGY_SEED)
            .collect(),
        "yaml_workload" => files("workloads", ".yaml"),
        "gateway_config" => {
            let mut v = files("config", "/gateway.yaml");
            for f in ["0", "1", "2", "single"] {
                v.extend(files("config/fleet", &format!("gateway-{f}.yaml")));
            }
            v
        }
        "checkpoint" => files("models", ".dqn"),
        _ => Vec::new(),
    }
}

/// The saved inputs that once failed the target `name` (`fuzz/regressions/<name>/*`), sorted.
pub fn regressions(name: &str) -> Vec<(String, Vec<u8>)> {
    let dir = repo_root().join("fuzz/regressions").join(name);
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            std::fs::read(e.path()).ok().map(|b| (name, b))
        })
        .collect();
    out.sort();
    out
}
