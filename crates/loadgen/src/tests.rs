use super::*;
use continuum_core::fixtures;
use continuum_core::metrics::Outcome;
use continuum_core::workload::QueryJitter;
use continuum_core::workload::emission::ClientArrivals;
use continuum_sim::{SimConfig, Simulation};
use serde_json::json;
use std::sync::Arc;

mod args;

#[test]
fn outcomes_are_judged_against_the_deadline() {
    assert_eq!(classify(Some(200), 50.0, 50.0), Outcome::Success);
    assert_eq!(classify(Some(200), 50.001, 50.0), Outcome::Failure);
    for s in [429, 404, 502, 503, 504, 500, 400] {
        assert_eq!(classify(Some(s), 1.0, 50.0), Outcome::Rejected, "{s}");
    }
    assert_eq!(classify(None, 1.0, 50.0), Outcome::Rejected);
}

#[test]
fn the_recorder_adds_up_per_app_and_in_total() {
    let mut r = Recorder::new(&["a".into(), "b".into()]);
    r.arrived(0);
    r.open_status("201");
    r.opened(0);
    for i in 0..100u64 {
        r.sent(10);
        // 1..=100 ms against a 90 ms deadline: 90 successes, 10 failures.
        let o = r.query(
            0,
            Some(200),
            "",
            i * 1000 + 1000,
            (i + 1) as f64,
            90.0,
            Some("success"),
        );
        assert_eq!(
            o,
            if i < 90 {
                Outcome::Success
            } else {
                Outcome::Failure
            }
        );
    }
    r.sent(10);
    r.query(0, Some(503), "", 500, 0.5, 90.0, None);
    r.sent(10);
    r.query(0, None, "timeout", 10_000_000, 10_000.0, 90.0, None);
    r.arrived(1);
    r.open_status("503");
    r.refused(1, "latency", 40);
    r.arrived(1);
    r.open_status("429");
    r.refused(1, "rate-limited", 7);
    r.close_status("204");
    let rep = r.report(
        RunConfig {
            duration_s: 10.0,
            ..RunConfig::default()
        },
        12.0,
        false,
    );
    let a = &rep.per_app[0];
    assert_eq!(
        (
            a.queries.offered,
            a.queries.success,
            a.queries.failure,
            a.queries.rejected
        ),
        (102, 90, 10, 2)
    );
    let b = &rep.per_app[1];
    assert_eq!((b.queries.offered, b.queries.rejected), (47, 47));
    assert_eq!(b.streams.arrived, 2);
    assert_eq!(b.streams.opened, 0);
    assert_eq!(b.streams.refused["latency"], 1);
    assert_eq!(b.streams.refused["rate-limited"], 1);
    let q = &rep.queries;
    assert_eq!(
        (q.offered, q.success, q.failure, q.rejected),
        (149, 90, 10, 49)
    );
    assert!(q.conserved());
    assert!((q.success_ratio - 90.0 / 149.0).abs() < 1e-12);
    assert_eq!(rep.sent, 102);
    assert!((rep.offered_qps - 14.9).abs() < 1e-9);
    assert_eq!(rep.infer_status["200"], 100);
    assert_eq!(rep.infer_status["503"], 1);
    assert_eq!(rep.infer_status["timeout"], 1);
    assert_eq!(rep.open_status["503"], 1);
    assert_eq!(rep.gateway_outcome["success"], 100);
    assert_eq!(rep.streams.refused.values().sum::<u64>(), 2);
    // Latency only of answered queries: 1..=100 ms.
    assert_eq!(rep.latency_ms.count, 100);
    assert!(
        (rep.latency_ms.p50 - 50.0).abs() < 0.1,
        "{:?}",
        rep.latency_ms
    );
    assert!(
        (rep.latency_ms.p99 - 99.0).abs() < 0.1,
        "{:?}",
        rep.latency_ms
    );
    assert!(
        (rep.latency_ms.max - 100.0).abs() < 0.1,
        "{:?}",
        rep.latency_ms
    );
    assert_eq!(rep.per_app[1].latency_ms.count, 0);
    // Both renderings work.
    let v: serde_json::Value = serde_json::from_str(&rep.to_json()).unwrap();
    assert_eq!(v["queries"]["offered"], 149);
    assert!(rep.to_text_table().contains("total"));
}

/// The character offset just past `label` in `header`.
fn end_of(header: &str, label: &str) -> usize {
    let at = header.find(label).expect(label);
    header[..at].chars().count() + label.chars().count()
}

/// The whitespace-delimited cell of `line` ending at character offset `end` (a panic when
/// none ends exactly there).
fn cell_ending_at(line: &str, end: usize) -> String {
    let chars: Vec<char> = line.chars().collect();
    assert!(
        end <= chars.len() && chars[end - 1] != ' ' && chars.get(end).is_none_or(|c| *c == ' '),
        "no cell ends at column {end} of {line:?}"
    );
    let start = chars[..end]
        .iter()
        .rposition(|c| *c == ' ')
        .map_or(0, |i| i + 1);
    chars[start..end].iter().collect()
}

#[test]
fn the_table_prints_ratios_as_percents_under_their_headers_whatever_the_names() {
    let long = "per-class:/tmp/some/very/long/path/app-class-name";
    let mut r = Recorder::new(&[long.into(), "b".into()]);
    r.set_gateways(&[
        "http://127.0.0.1:8190".into(),
        "http://a-gateway-with-a-long-host-name.example:8191".into(),
    ]);
    r.arrived(0);
    r.opened(0);
    r.opened_at(1);
    for i in 0..10u64 {
        r.sent(10);
        // 1..=10 ms against an 8 ms deadline: 8 successes, 2 failures.
        r.query(
            0,
            Some(200),
            "",
            (i + 1) * 1000,
            (i + 1) as f64,
            8.0,
            Some("success"),
        );
        r.answered_at(1);
    }
    r.arrived(1);
    r.refused(1, "latency", 2);
    let rep = r.report(RunConfig::default(), 1.0, false);
    let text = rep.to_text_table();
    let lines: Vec<&str> = text.lines().collect();
    let h = lines.iter().position(|l| l.starts_with("app ")).unwrap();
    let header = lines[h];
    let labels = [
        "streams",
        "offered",
        "success",
        "failure",
        "success %",
        "max ms",
    ];
    let cells: Vec<Vec<String>> = lines[h + 1..h + 4]
        .iter()
        .map(|l| {
            labels
                .iter()
                .map(|x| cell_ending_at(l, end_of(header, x)))
                .collect()
        })
        .collect();
    // The success ratio in percent with two decimals, as `compare` prints it.
    assert_eq!(cells[0][..5], ["1/1", "10", "8", "2", "80.00%"], "{text}");
    assert!(cells[0][5].starts_with("10.0"), "{text}");
    assert_eq!(cells[1][4], "0.00%", "{text}");
    assert_eq!(cells[2][4], "66.67%", "{text}");
    assert!(lines[h + 1].starts_with(&format!("{long} ")), "{text}");
    assert!(lines[h + 3].starts_with("total "), "{text}");
    assert!(
        !text.contains("0.8000") && !text.contains("0.6667"),
        "{text}"
    );
    // The fleet's gateways: every count under its header whatever the URL's length.
    let g = lines
        .iter()
        .position(|l| l.starts_with("  gateway "))
        .unwrap();
    let end = end_of(lines[g], "answered");
    let answered: Vec<String> = lines[g + 1..g + 3]
        .iter()
        .map(|l| cell_ending_at(l, end))
        .collect();
    assert_eq!(answered, ["0", "10"], "{text}");
    // The JSON keeps the ratio.
    let v: serde_json::Value = serde_json::from_str(&rep.to_json()).unwrap();
    assert!((v["queries"]["success_ratio"].as_f64().unwrap() - 8.0 / 12.0).abs() < 1e-12);
}

fn signature() -> ModelSignature {
    ModelSignature::from_metadata(&json!({
        "name": "object-detection", "platform": "onnxruntime",
        "inputs": [{"name": "images", "datatype": "FP32", "shape": [-1, 3, 4, 5]}],
        "outputs": [{"name": "scores", "datatype": "FP32", "shape": [-1, 16]}],
    }))
    .unwrap()
}

#[test]
fn model_metadata_gives_the_signature() {
    let s = signature();
    assert_eq!(s.input, "images");
    assert_eq!(s.output, "scores");
    assert_eq!(s.shape, vec![1, 3, 4, 5]);
    assert_eq!(s.len(), 60);
    for bad in [
        json!({}),
        json!({"inputs": [{"name": "x", "datatype": "INT8", "shape": [-1, 3]}]}),
        json!({"inputs": [{"name": "x", "datatype": "FP32", "shape": [-1, -1]}]}),
        json!({"inputs": [{"name": "x", "datatype": "FP32", "shape": []}]}),
    ] {
        assert!(ModelSignature::from_metadata(&bad).is_err(), "{bad}");
    }
}

#[test]
fn json_bodies_carry_the_data() {
    let s = signature();
    let b = InferBody::reference(&s, BodyFormat::Json);
    assert_eq!(b.content_type, "application/json");
    assert_eq!(b.header_len, None);
    let v: serde_json::Value = serde_json::from_slice(&b.bytes).unwrap();
    let input = &v["inputs"][0];
    assert_eq!(input["name"], "images");
    assert_eq!(input["datatype"], "FP32");
    assert_eq!(input["shape"], json!([1, 3, 4, 5]));
    let data: Vec<f32> = serde_json::from_value(input["data"].clone()).unwrap();
    assert_eq!(data, continuum_wire::reference_input(1, &[3, 4, 5]));
}

#[test]
fn binary_bodies_follow_the_tensor_extension() {
    let s = signature();
    let b = InferBody::reference(&s, BodyFormat::Binary);
    assert_eq!(b.content_type, "application/octet-stream");
    let n = b.header_len.unwrap();
    let header: serde_json::Value = serde_json::from_slice(&b.bytes[..n]).unwrap();
    let input = &header["inputs"][0];
    assert_eq!(input["name"], "images");
    assert_eq!(input["shape"], json!([1, 3, 4, 5]));
    assert_eq!(input["parameters"]["binary_data_size"], 240);
    assert!(input.get("data").is_none());
    assert_eq!(header["outputs"][0]["name"], "scores");
    assert_eq!(header["outputs"][0]["parameters"]["binary_data"], true);
    let raw = &b.bytes[n..];
    assert_eq!(raw.len(), 240);
    let data: Vec<f32> = raw
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(data, continuum_wire::reference_input(1, &[3, 4, 5]));
}

/// Two app classes with random rates and durations, on the tiny fixture profiles.
const WORKLOAD: &str = r#"
lambda_per_min: 90
jitter: {uniform_ms: 3}
access_delay_ms: {uniform: [2, 10]}
apps:
  - {name: fast, share: 0.6, task: detect, rate_qps: {choice: [10, 30]}, frame_kb: {uniform: [5, 15]}, uplink_mbps: 80, max_delay_ms: 60, min_accuracy: 0, duration_s: {exponential: {mean: 20}}}
  - {name: slow, share: 0.4, task: detect, rate_qps: {choice: [2, 5]}, frame_kb: 10, uplink_mbps: 40, max_delay_ms: 500, min_accuracy: 0.5, duration_s: {exponential: {mean: 40}}}
"#;

/// Per window, scheduler and app: queries the load generator's clients would offer.
fn loadgen_offered(
    w: &continuum_core::workload::Workload,
    seed: u64,
    sched: u64,
    horizon_ms: f64,
    window_ms: f64,
    windows: usize,
) -> Vec<u64> {
    let mut out = vec![0; windows * w.apps.len()];
    for c in ClientArrivals::new(w, seed, sched, horizon_ms) {
        let mut e = c.emission(seed, sched, horizon_ms);
        while let Some(t) = e.next(w.jitter) {
            let win = ((t / window_ms) as usize).min(windows - 1);
            out[win * w.apps.len() + usize::from(c.params.app)] += 1;
        }
    }
    out
}

#[test]
fn clients_and_emissions_match_the_simulator() {
    let jitters = [
        QueryJitter::Periodic,
        QueryJitter::Uniform(3.0),
        QueryJitter::Poisson,
    ];
    let lambdas = [
        continuum_core::workload::Lambda::Constant(90.0),
        continuum_core::workload::Lambda::Sine {
            mean: 60.0,
            amplitude: 50.0,
            period_ms: 40_000.0,
        },
    ];
    for jitter in jitters {
        for lambda in &lambdas {
            let mut sc = fixtures::scenario(fixtures::TOPOLOGY, WORKLOAD);
            sc.workload.jitter = jitter;
            sc.workload.lambda = lambda.clone();
            let sc = Arc::new(sc);
            let cfg = SimConfig {
                duration_s: 90.0,
                seed: 5,
                ..SimConfig::default()
            };
            let mut sim = Simulation::new(
                sc.clone(),
                cfg,
                continuum_core::policy::by_name("closest").unwrap(),
            );
            sim.finish();
            let m = sim.metrics();
            let apps = sc.workload.apps.len();
            for sched in 0..2u64 {
                let live = loadgen_offered(
                    &sc.workload,
                    cfg.seed,
                    sched,
                    sim.horizon_ms(),
                    m.window_ms(),
                    m.windows(),
                );
                let simulated: Vec<u64> = (0..m.windows())
                    .flat_map(|w| (0..apps).map(move |a| (w, a)))
                    .map(|(w, a)| {
                        m.sum(|x, s, y| x == w && s == sched as usize && y == a)
                            .offered
                    })
                    .collect();
                assert_eq!(live, simulated, "{jitter:?} {lambda:?} scheduler {sched}");
                assert!(live.iter().sum::<u64>() > 1000);
            }
        }
    }
}
