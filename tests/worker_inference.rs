//! Inference backends: outputs match the reference written by Python ONNX Runtime
//! (models/reference.json), on whichever backend this process runs (`CONTINUUM_BACKEND`,
//! default auto); and, where an ONNX Runtime library is found, tract and ONNX Runtime run in
//! two child processes agree with each other.

mod worker_support;

use continuum::inference::{Manifest, Model, backend, reference_input};
use std::process::Command;
use worker_support::*;

/// Tolerance between backends. The note ../shared/notes/onnx-runtime.md measured ~2.4e-7 on a
/// similar CNN; 1e-4 leaves room for the deeper cnn-l.
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

fn child(backend: &str) -> Option<(String, Outputs)> {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_print_outputs",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("CONTINUUM_TEST_CHILD", "1")
        .env("CONTINUUM_BACKEND", backend)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let b = text
        .lines()
        .find_map(|l| l.strip_prefix("BACKEND="))?
        .to_string();
    let o = text.lines().find_map(|l| l.strip_prefix("OUTPUTS="))?;
    Some((b, serde_json::from_str(o).unwrap()))
}

#[test]
fn both_backends_agree() {
    let (b, tract) = child("tract").expect("the tract backend always runs");
    assert_eq!(b, "tract");
    let Some((b, ort)) = child("onnxruntime") else {
        eprintln!(
            "no ONNX Runtime library found (set ORT_DYLIB_PATH): compared tract with the reference only"
        );
        return;
    };
    assert_eq!(b, "onnxruntime");
    for ((n1, a), (n2, b)) in tract.iter().zip(&ort) {
        assert_eq!(n1, n2);
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            assert!(
                (x - y).abs() <= TOL,
                "{n1}[{i}]: tract {x} vs onnxruntime {y}"
            );
        }
    }
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
