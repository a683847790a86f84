//! The worker's QUIC front end on loopback: round trips against direct inference, malformed
//! frames answered per stream with the connection unharmed, dynamic batching, admission, load
//! reports, and graceful shutdown.

use continuum_testkit::worker::*;
use continuum_wire::frame::{self, InferFrame, Response};
use continuum_worker::inference::{Tensor, reference_input};
use serde_json::json;
use std::time::Duration;

fn query(model: &str, n: usize, stream_id: u64, deadline_us: u32) -> InferFrame {
    InferFrame {
        stream_id,
        deadline_us,
        model: model.into(),
        input: Tensor {
            shape: vec![n, 3, 64, 64],
            data: reference_input(n, &ITEM),
        },
    }
}

fn ok(r: Response) -> (Tensor, u16, u32) {
    match r {
        Response::Ok {
            output,
            batch_items,
            compute_us,
            ..
        } => (output, batch_items, compute_us),
        Response::Error { status, message } => panic!("error {status}: {message}"),
    }
}

/// On loopback, path-MTU discovery grows the packets from quinn's default 1 452 bytes up to
/// the configured ceiling (a 48 KB query then takes 9 packets instead of 34).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn packets_grow_to_the_ceiling_on_loopback() {
    let w = start(config(&[("s4", "cnn-s", 4, 1.0)], json!({}))).await;
    let c = quic(&w).await;
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while c.mtu() < continuum_wire::tls::MAX_UDP_PAYLOAD && std::time::Instant::now() < until {
        ok(c.infer(&query("s4", 1, 1, 0)).await.unwrap());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(c.mtu(), continuum_wire::tls::MAX_UDP_PAYLOAD);
    c.close().await;
    w.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_trips_match_direct_inference() {
    let w = start(config(
        &[("s4", "cnn-s", 4, 1.0), ("l1", "cnn-l", 1, 0.0)],
        json!({}),
    ))
    .await;
    let c = quic(&w).await;
    for (variant, model, n) in [("s4", "cnn-s", 1), ("s4", "cnn-s", 4), ("l1", "cnn-l", 1)] {
        let (out, _, _) = ok(c.infer(&query(variant, n, 1, 0)).await.unwrap());
        assert_close(&out, &direct(model, n), 1e-5);
    }
    c.close().await;
    w.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_frames_get_an_error_and_the_connection_lives_on() {
    let w = start(config(
        &[("s1", "cnn-s", 1, 0.0)],
        json!({"quic": {"max_frame_bytes": 60_000}}),
    ))
    .await;
    let c = quic(&w).await;
    let good = frame::encode_infer(&query("s1", 1, 1, 0));
    let mut bad_version = good.clone();
    bad_version[0] = 7;
    let mut bad_dtype = good.clone();
    bad_dtype[2 + 8 + 4 + 2 + 2] = 9; // datatype byte after the 2-byte name "s1"
    let mut wrong_shape = query("s1", 1, 1, 0);
    wrong_shape.input.shape = vec![1, 3, 64, 32, 2];
    let cases: Vec<(&str, Vec<u8>, u8, &str)> = vec![
        ("garbage", b"hello".to_vec(), 2, "malformed frame"),
        ("empty", Vec::new(), 2, "truncated frame"),
        (
            "truncated",
            good[..good.len() - 10].to_vec(),
            2,
            "truncated frame",
        ),
        (
            "trailing bytes",
            [good.clone(), vec![0]].concat(),
            2,
            "unexpected bytes",
        ),
        ("bad version", bad_version, 2, "version 7"),
        ("bad datatype", bad_dtype, 2, "datatype code 9"),
        (
            "wrong shape",
            frame::encode_infer(&wrong_shape),
            2,
            "wrong shape",
        ),
        (
            "unknown model",
            frame::encode_infer(&query("nope", 1, 1, 0)),
            3,
            "unknown model `nope`",
        ),
        (
            "too large",
            frame::encode_infer(&query("s1", 2, 1, 0)),
            4,
            "over the limit of 60000",
        ),
    ];
    // Send every bad frame and a good one concurrently on the same connection.
    let good_task = {
        let c = c.clone();
        let f = query("s1", 1, 2, 0);
        tokio::spawn(async move { c.infer(&f).await })
    };
    for (what, bytes, status, needle) in cases {
        let (st, msg) = error_frame(
            c.send_raw(&bytes)
                .await
                .unwrap_or_else(|e| panic!("{what}: {e}")),
        );
        assert_eq!(st, status, "{what}: {msg}");
        assert!(msg.contains(needle), "{what}: `{msg}` lacks `{needle}`");
    }
    ok(good_task.await.unwrap().unwrap());
    let (out, _, _) = ok(c.infer(&query("s1", 1, 3, 0)).await.unwrap());
    assert_close(&out, &direct("cnn-s", 1), 1e-5);
    c.close().await;
    w.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batching_groups_concurrent_queries() {
    // A long batching wait: the 8 concurrent queries all join one batch.
    let w = start(config(&[("m8", "cnn-m", 8, 300.0)], json!({}))).await;
    let c = quic(&w).await;
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let c = c.clone();
            tokio::spawn(async move { c.infer(&query("m8", 1, i + 1, 0)).await })
        })
        .collect();
    let expect = direct("cnn-m", 1);
    let mut sizes = Vec::new();
    for t in tasks {
        let (out, batch, _) = ok(t.await.unwrap().unwrap());
        assert_close(&out, &expect, 1e-5);
        sizes.push(batch);
    }
    assert!(sizes.iter().all(|b| *b > 1), "batch sizes {sizes:?}");
    assert_eq!(*sizes.iter().max().unwrap(), 8, "batch sizes {sizes:?}");
    c.close().await;
    w.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admission_refuses_what_cannot_meet_its_deadline() {
    let w = start(config(&[("l1", "cnn-l", 1, 0.0)], json!({}))).await;
    let c = quic(&w).await;
    // Sequential queries let the batch-time estimate settle on this machine's speed.
    let mut times: Vec<u32> = Vec::new();
    for _ in 0..15 {
        times.push(ok(c.infer(&query("l1", 1, 1, 0)).await.unwrap()).2);
    }
    times.sort();
    let compute_us = times[times.len() / 2];
    // 1 µs can never be met.
    let (st, msg) = error_frame(c.infer(&query("l1", 1, 1, 1)).await.unwrap());
    assert_eq!(st, frame::STATUS_REJECTED);
    assert!(msg.starts_with("rejected: deadline"), "{msg}");
    // 12 at once, each with room for ~4 batches: the first are served, the rest refused at once.
    let deadline = compute_us * 4;
    let tasks: Vec<_> = (0..12)
        .map(|i| {
            let c = c.clone();
            tokio::spawn(async move { c.infer(&query("l1", 1, i + 2, deadline)).await })
        })
        .collect();
    let (mut served, mut rejected) = (0, 0);
    for t in tasks {
        match t.await.unwrap().unwrap() {
            Response::Ok { .. } => served += 1,
            Response::Error { status, .. } => {
                assert_eq!(status, frame::STATUS_REJECTED);
                rejected += 1;
            }
        }
    }
    assert!(
        served >= 1 && rejected >= 1,
        "served {served}, rejected {rejected}"
    );
    let load = w.inner().report();
    assert_eq!(load.variants[0].rejected_total, rejected + 1);
    c.close().await;
    w.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_reports_arrive() {
    let w = start(config(
        &[("s1", "cnn-s", 1, 0.0), ("m1", "cnn-m", 1, 0.0)],
        json!({}),
    ))
    .await;
    let c = quic(&w).await;
    let mut reports = c.subscribe(20).await.unwrap();
    let first = tokio::time::timeout(Duration::from_secs(5), reports.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(first.worker, "test-worker");
    assert_eq!(first.variants.len(), 2);
    for s in 1..=5 {
        ok(c.infer(&query("s1", 1, s, 0)).await.unwrap());
    }
    let mut seen = None;
    for _ in 0..100 {
        let r = tokio::time::timeout(Duration::from_secs(5), reports.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        let s1 = r
            .variants
            .iter()
            .find(|v| v.variant == "s1")
            .unwrap()
            .clone();
        if s1.served_total == 5 {
            seen = Some(s1);
            break;
        }
    }
    let s1 = seen.expect("a report with the 5 queries");
    assert_eq!(s1.open_streams, 5);
    assert!((s1.incoming_qps - 5.0).abs() < 1e-9, "{s1:?}"); // 5 items in a 1 s window
    assert_eq!(s1.queue_len, 0);
    c.close().await;
    w.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_finishes_queries_in_flight() {
    let w = start(config(&[("l1", "cnn-l", 1, 0.0)], json!({}))).await;
    let c = quic(&w).await;
    let tasks: Vec<_> = (0..4)
        .map(|i| {
            let c = c.clone();
            tokio::spawn(async move { c.infer(&query("l1", 1, i + 1, 0)).await })
        })
        .collect();
    // Wait until the worker has all four (bounded).
    for _ in 0..500 {
        if w.inner().report().variants[0].incoming_qps >= 4.0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    w.shutdown().await;
    for t in tasks {
        ok(t.await.unwrap().unwrap());
    }
}
