//! Inference backends: outputs match the reference written by Python ONNX Runtime
//! (models/reference.json), on whichever backend this process runs (`CONTINUUM_BACKEND`,
//! default auto); and, where an ONNX Runtime library is found, tract and ONNX Runtime run in
//! two child processes agree with each other.

use continuum_testkit::worker::*;
use continuum_worker::inference::{Manifest, Model, backend, reference_input};
use std::process::Command;

/// Tolerance between backends. assumption: differences between ONNX Runtime and tract on a
/// similar CNN are of order 1e-7 (float reassociation); 1e-4 leaves room for the deeper cnn-l.
const TOL: f32 = 1e-4;

fn outputs() -> Vec<(String, Vec<f32>)> {
    let manifest = Manifest::load(&models_dir()).unwrap();
    manifest
        .models
        .iter()
        .map(|m| {
            let mut model = Model::load(&manifest.path_of(m), 1, &m.input).unwrap();
            let out = model.run(2, &reference_input(2, &m.input)).unwrap();
            assert_eq!(out.shape, vec![2, 16]);
            (m.name.clone(), out.data)
        })
        .collect()
}

#[test]
fn outputs_match_the_onnxruntime_reference() {
    let reference: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(models_dir().join("reference.json")).unwrap(),
    )
    .unwrap();
    let outs = outputs();
    eprintln!("backend: {}", backend::current().unwrap());
    for (name, data) in outs {
        let want: Vec<f32> = serde_json::from_value(reference[&name]["output"].clone()).unwrap();
        assert_eq!(want.len(), data.len(), "{name}");
        for (i, (x, y)) in data.iter().zip(&want).enumerate() {
            assert!((x - y).abs() <= TOL, "{name}[{i}]: {x} vs reference {y}");
        }
    }
}

/// Run by `both_backends_agree` in a child process: prints this backend's outputs as JSON.
#[test]
fn child_print_outputs() {
    if std::env::var("CONTINUUM_TEST_CHILD").is_err() {
        return;
    }
    let outs = outputs();
    println!("\nBACKEND={}", backend::current().unwrap().name());
    println!("OUTPUTS={}", serde_json::to_string(&outs).unwrap());
}

/// Named output tensors of one run.
type Outputs = Vec<(String, Vec<f32>)>;

/// Runs `child_print_outputs` in a child process on `backend`; its outputs, or why there are
/// none (the child's exit status and the end of what it printed).
fn child(backend: &str) -> Result<(String, Outputs), String> {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "worker_inference::child_print_outputs",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("CONTINUUM_TEST_CHILD", "1")
        .env("CONTINUUM_BACKEND", backend)
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let found = text
        .lines()
        .find_map(|l| l.strip_prefix("BACKEND="))
        .zip(text.lines().find_map(|l| l.strip_prefix("OUTPUTS=")));
    match found {
        Some((b, o)) => Ok((b.to_string(), serde_json::from_str(o).unwrap())),
        None => {
            let all = format!("{text}{}", String::from_utf8_lossy(&out.stderr));
            let lines: Vec<&str> = all.lines().collect();
            let tail = lines[lines.len().saturating_sub(15)..].join("\n");
            Err(format!(
                "the {backend} child ({}) printed no outputs; it ended with:\n{tail}",
                out.status
            ))
        }
    }
}

/// Says on the terminal (past the test harness's capture) that a check did not run.
fn skipped(reason: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "both_backends_agree skipped: {reason}");
}

/// Every model of both outputs, with the same names, lengths and values within `TOL`.
fn assert_agree(a_name: &str, a: &Outputs, b_name: &str, b: &Outputs) {
    let names = |o: &Outputs| o.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(a), names(b), "{a_name} vs {b_name}: models");
    for ((n, x), (_, y)) in a.iter().zip(b) {
        assert_eq!(x.len(), y.len(), "{n}: {a_name} vs {b_name}: lengths");
        for (i, (u, v)) in x.iter().zip(y).enumerate() {
            assert!(
                (u - v).abs() <= TOL,
                "{n}[{i}]: {a_name} {u} vs {b_name} {v}"
            );
        }
    }
}

/// tract and ONNX Runtime, each in a child process, against each other and against the
/// reference that Python's ONNX Runtime wrote. Where ONNX Runtime is asked for
/// (`CONTINUUM_BACKEND=onnxruntime` or `ORT_DYLIB_PATH` set), a child without outputs fails
/// the test; elsewhere the comparison says on the terminal that it was skipped, and why.
#[test]
fn both_backends_agree() {
    let manifest = Manifest::load(&models_dir()).unwrap();
    let reference: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(models_dir().join("reference.json")).unwrap(),
    )
    .unwrap();
    let reference: Outputs = manifest
        .models
        .iter()
        .map(|m| {
            let want: Vec<f32> =
                serde_json::from_value(reference[&m.name]["output"].clone()).unwrap();
            assert_eq!(want.len(), 2 * 16, "{}: reference length", m.name);
            (m.name.clone(), want)
        })
        .collect();
    assert!(!reference.is_empty(), "models/models.yaml lists no model");

    let (b, tract) = child("tract").unwrap_or_else(|e| panic!("tract always runs: {e}"));
    assert_eq!(b, "tract");
    assert_agree("tract", &tract, "reference", &reference);

    let asked = std::env::var("CONTINUUM_BACKEND").is_ok_and(|b| b == "onnxruntime")
        || std::env::var_os("ORT_DYLIB_PATH").is_some_and(|p| !p.is_empty());
    let ort = match child("onnxruntime") {
        Ok(r) => r,
        Err(e) if asked => panic!("ONNX Runtime was asked for but did not run: {e}"),
        Err(_) => {
            skipped(
                "no ONNX Runtime library found (set ORT_DYLIB_PATH); tract was compared with the reference only",
            );
            return;
        }
    };
    assert_eq!(ort.0, "onnxruntime");
    assert_agree("onnxruntime", &ort.1, "reference", &reference);
    assert_agree("tract", &tract, "onnxruntime", &ort.1);
}

#[test]
fn load_errors_are_clear() {
    let e = Model::load(&models_dir().join("missing.onnx"), 1, &ITEM)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("missing.onnx") && e.contains("no such file"),
        "{e}"
    );
    let e = Model::load(&models_dir().join("models.yaml"), 1, &ITEM)
        .unwrap_err()
        .to_string();
    assert!(e.contains("models.yaml"), "{e}");
    let e = Model::load(&models_dir().join("cnn-s.onnx"), 1, &[3, 32, 32])
        .unwrap_err()
        .to_string();
    assert!(e.contains("does not match"), "{e}");
    let mut m = Model::load(&models_dir().join("cnn-s.onnx"), 1, &ITEM).unwrap();
    let e = m.run(2, &[0.0; 10]).unwrap_err().to_string();
    assert!(e.contains("expected 2 items"), "{e}");
}

/// `min_batch_ms` emulates a slower device: a query's batch holds the session at least that
/// long, queries behind it wait for it, and the variant's time estimates include it.
#[tokio::test]
async fn min_batch_ms_holds_the_session() {
    use continuum_worker::config::VariantConfig;
    use continuum_worker::metrics::Metrics;
    use continuum_worker::variant::{InferRequest, Variant};
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    let manifest = Manifest::load(&models_dir()).unwrap();
    let m = manifest.model("cnn-s").unwrap();
    let model = Model::load(&manifest.path_of(m), 1, &m.input).unwrap();
    let cfg: VariantConfig = serde_json::from_value(serde_json::json!({
        "name": "cnn-s-slow", "model": "cnn-s", "max_batch": 1, "min_batch_ms": 40.0
    }))
    .unwrap();
    let v = Arc::new(
        Variant::start(
            &cfg,
            model,
            Duration::from_secs(1),
            Arc::new(Metrics::new()),
        )
        .unwrap(),
    );
    let req = || InferRequest {
        shape: [1].iter().chain(&m.input).copied().collect(),
        data: reference_input(1, &m.input),
        deadline: None,
        stream: None,
    };
    let t = Instant::now();
    let (a, b) = tokio::join!(v.infer(req()), v.infer(req()));
    let (a, b) = (a.unwrap(), b.unwrap());
    let took = t.elapsed();
    // Two queries, one session, batch 1: the second waits for the first's 40 ms.
    assert!(
        took >= Duration::from_millis(80),
        "two held batches took {took:?}"
    );
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert_eq!(a.output.shape, b.output.shape);
    let bad: Result<VariantConfig, _> = serde_json::from_value(serde_json::json!({
        "name": "x", "model": "cnn-s", "max_batch": 1, "min_batch_ms": "slow"
    }));
    assert!(bad.is_err());
    let mut w = continuum_worker::WorkerConfig::load(
        &models_dir().join("../config/live-fleet/worker-co.yaml"),
    )
    .unwrap();
    assert_eq!(w.variants[1].min_batch_ms, 8.0);
    w.variants[1].min_batch_ms = -1.0;
    let e = w.validate().unwrap_err();
    assert!(e.contains("variants[1].min_batch_ms"), "{e}");
}
