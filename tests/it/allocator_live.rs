//! `continuum allocator` on a live slice on loopback: a gateway in front of the central-office
//! and cloud workers of topologies/live.yaml. With demand for the interactive app only, the
//! allocator unloads the cloud's accurate model; the accurate app's streams are then refused,
//! the refused demand reaches the allocator, which loads a cloud variant again, after which
//! such streams bind and answer. With its default floor, a slot without traffic leaves each
//! worker a variant loaded; and the allocator starts while a worker is down and takes the
//! worker in when it comes up.

use crate::gateway_support::*;
use continuum_alloc_live::{AllocatorConfig, LiveAllocator};
use continuum_core::config::Source;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn stream(app: &str, min_accuracy: f64) -> Value {
    let mut r = stream_req(2000.0, min_accuracy);
    r["app"] = json!(app);
    r
}

/// Opens a stream; the status and body.
async fn try_open(addr: std::net::SocketAddr, req: &Value) -> (u16, Value) {
    let (st, _, body) = http(addr, post_json(addr, "/v1/streams", req)).await;
    (
        st.as_u16(),
        serde_json::from_slice(&body).unwrap_or(Value::Null),
    )
}

/// Retries opening until `want(status)` holds or 5 s pass (the gateway follows the workers'
/// load reports every 50 ms).
async fn open_until(addr: std::net::SocketAddr, req: &Value, want: fn(u16) -> bool) -> Value {
    let start = Instant::now();
    loop {
        let (st, v) = try_open(addr, req).await;
        if want(st) {
            return v;
        }
        assert!(start.elapsed() < Duration::from_secs(5), "still {st}: {v}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn loaded(r: &continuum_alloc_live::SlotReport, variant: &str) -> bool {
    r.state.iter().any(|(_, v, l)| v == variant && *l)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_allocator_follows_the_demand_of_a_live_slice() {
    let l = live(false, json!({"app_classes": ["ar-lite", "analytics"]})).await;
    let a = l.addr();
    let co = l.co.as_ref().unwrap().http_addr();
    let cloud = l.cloud.http_addr();
    let text = json!({
        "topology": repo("topologies/live.yaml"),
        "profiles": repo("profiles/local.yaml"),
        "workload": repo("workloads/live.yaml"),
        "allocator": "fairness",
        "slot_s": 1,
        "floor": 0,
        "gateways": [{"scheduler": "ant-00", "metrics": format!("http://{a}/metrics")}],
        "workers": [
            {"cluster": "co-0", "url": format!("http://{co}")},
            {"cluster": "cloud", "url": format!("http://{cloud}")},
        ],
    });
    let cfg = AllocatorConfig::from_source(&Source::inline("alloc.yaml", &text.to_string()))
        .expect("valid settings");
    let mut alloc = LiveAllocator::connect(cfg).await.expect("connects");

    // Slot 1: interactive demand only (any model qualifies; the central office serves it).
    let s = open(a, &stream("ar-lite", 0.2)).await;
    assert_eq!(s["cluster"], "co-0");
    let path = format!("/v1/streams/{}/infer", s["stream_id"].as_str().unwrap());
    for _ in 0..10 {
        let (st, _, body) = http(a, post_json(a, &path, &infer_json(1))).await;
        assert_eq!(st, 200, "{}", String::from_utf8_lossy(&body));
    }
    let r = alloc.slot().await.expect("slot 1");
    assert!(r.demand_qps[0] > 0.0, "{r:?}");
    assert_eq!(r.demand_qps[1], 0.0, "{r:?}");
    assert!(!loaded(&r, "cnn-l-b1") && !loaded(&r, "cnn-l-b4"), "{r:?}");
    assert!(loaded(&r, "cnn-s-b1") || loaded(&r, "cnn-m-b1"), "{r:?}");
    assert!(r.changes.iter().any(|c| c.ends_with("@cloud")), "{r:?}");

    // Accurate streams now find no variant: refused, and counted as demand.
    let refused = open_until(a, &stream("analytics", 0.5), |st| st == 503).await;
    assert!(
        refused
            .to_string()
            .contains("no worker can serve this stream"),
        "{refused}"
    );
    let r = alloc.slot().await.expect("slot 2");
    assert!(r.demand_qps[1] > 0.0, "refused demand: {r:?}");
    assert!(loaded(&r, "cnn-l-b1") || loaded(&r, "cnn-l-b4"), "{r:?}");

    // The gateway sees the loaded variant and binds the accurate stream to the cloud.
    let s = open_until(a, &stream("analytics", 0.5), |st| st == 201).await;
    assert_eq!(s["cluster"], "cloud");
    let path = format!("/v1/streams/{}/infer", s["stream_id"].as_str().unwrap());
    let (st, _, body) = http(a, post_json(a, &path, &infer_json(1))).await;
    assert_eq!(st, 200, "{}", String::from_utf8_lossy(&body));
    assert_close(&output_of(&body), &direct("cnn-l", 1), 1e-4);
    l.stop().await;
}

/// Allocator settings for the live slice: gateway `gw`, workers at `co` and `cloud`.
fn settings(gw: std::net::SocketAddr, co: &str, cloud: &str, extra: Value) -> AllocatorConfig {
    let mut text = json!({
        "topology": repo("topologies/live.yaml"),
        "profiles": repo("profiles/local.yaml"),
        "workload": repo("workloads/live.yaml"),
        "allocator": "fairness",
        "slot_s": 1,
        "gateways": [{"scheduler": "ant-00", "metrics": format!("http://{gw}/metrics")}],
        "workers": [
            {"cluster": "co-0", "url": format!("http://{co}")},
            {"cluster": "cloud", "url": format!("http://{cloud}")},
        ],
    });
    if let Value::Object(m) = extra {
        for (k, x) in m {
            text[k] = x;
        }
    }
    AllocatorConfig::from_source(&Source::inline("alloc.yaml", &text.to_string()))
        .expect("valid settings")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_traffic_the_floor_keeps_a_variant_on_each_worker() {
    let l = live(false, json!({"app_classes": ["ar-lite", "analytics"]})).await;
    let a = l.addr();
    let co = l.co.as_ref().unwrap().http_addr().to_string();
    let cloud = l.cloud.http_addr().to_string();
    let mut alloc = LiveAllocator::connect(settings(a, &co, &cloud, json!({})))
        .await
        .expect("connects");
    for k in 0..2 {
        let r = alloc.slot().await.expect("slot");
        assert_eq!(r.demand_qps.iter().sum::<f64>(), 0.0, "{r:?}");
        for w in 0..2 {
            let n = r.state.iter().filter(|(i, _, l)| *i == w && *l).count();
            assert_eq!(n, 1, "slot {k}: worker {w} keeps one variant: {r:?}");
        }
    }
    // The gateway still binds a stream of either app (no 503).
    open_until(a, &stream("ar-lite", 0.2), |st| st == 201).await;
    open_until(a, &stream("analytics", 0.5), |st| st == 201).await;

    // With no floor the same slot unloads everything (the behaviour the floor prevents).
    let mut bare = LiveAllocator::connect(settings(a, &co, &cloud, json!({"floor": 0})))
        .await
        .expect("connects");
    let r = bare.slot().await.expect("slot");
    assert!(r.state.iter().all(|(_, _, l)| !l), "{r:?}");
    l.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_allocator_starts_while_a_worker_is_down_and_takes_it_in_when_it_comes_up() {
    let l = live(false, json!({"app_classes": ["ar-lite", "analytics"]})).await;
    let a = l.addr();
    let co = l.co.as_ref().unwrap().http_addr().to_string();
    // Nothing listens at `later` yet: the cloud's worker there is started after the allocator.
    let later = free_addr(false);
    let mut alloc = LiveAllocator::connect(settings(a, &co, &later.to_string(), json!({})))
        .await
        .expect("starts with a worker down");
    let r = alloc.slot().await.expect("a slot with a worker down");
    assert!(
        r.events
            .iter()
            .any(|e| e.contains("workers[1]") && e.contains("down")),
        "{r:?}"
    );
    assert!(r.state.iter().all(|(w, _, _)| *w == 0), "{r:?}");
    assert!(
        r.state.iter().any(|(_, _, l)| *l),
        "the floor on the worker that is up: {r:?}"
    );

    let dir = tempfile::tempdir().unwrap();
    let mut cfg = cloud_config(dir.path(), "127.0.0.1:0");
    cfg.http.listen = later;
    let cloud = start(cfg).await;
    let r = alloc.slot().await.expect("a slot after it came up");
    assert!(
        r.events
            .iter()
            .any(|e| e.contains("workers[1]") && e.contains(" up")),
        "{r:?}"
    );
    assert!(r.state.iter().any(|(w, _, l)| *w == 1 && *l), "{r:?}");
    cloud.shutdown().await;
    l.stop().await;
}
