//! Per-class dispatch at the gateway, end to end on loopback with real workers: a policy table
//! of two classes whose policies pick different clusters (`closest`: the central office,
//! `farthest`: the cloud of topologies/live.yaml, for a stream both can serve), streams and
//! one-shot queries classed by application name else by demand bucket, operators pinning one
//! class, and the meta-policy's per-class decisions applied.

use crate::gateway_support::*;
use continuum_gateway::Gateway;
use continuum_infer::agent::{Checkpoint, Fallback};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

/// App `ar` → closest, app `cam` → farthest; streams of other applications by demand bucket
/// (docs/model.md §9's default buckets, 4 deadline ranges × 3 rate ranges): deadlines up to 100 ms are
/// `ar`, longer ones `cam`.
const TABLE: &str = "classes: {ar: closest, cam: farthest}\nclass_order: [ar, cam]\n\
                     bucket_map: [0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n";

/// A stream every worker can serve in time (any model is accurate enough, the deadline is
/// loose), of application `app` (none when `None`).
fn req(app: Option<&str>, max_delay_ms: f64) -> Value {
    let mut r = stream_req(max_delay_ms, 0.2);
    match app {
        Some(a) => r["app"] = json!(a),
        None => {
            r.as_object_mut().unwrap().remove("app");
        }
    }
    r
}

/// Opens a stream; `"{class} {policy} {cluster}"` of its open answer.
async fn bound(a: SocketAddr, app: Option<&str>, max_delay_ms: f64) -> String {
    let s = open(a, &req(app, max_delay_ms)).await;
    let f = |k: &str| s[k].as_str().unwrap_or("?").to_string();
    format!("{} {} {}", f("class"), f("policy"), f("cluster"))
}

async fn policy_state(a: SocketAddr) -> Value {
    let (st, _, b) = http(a, get(a, "/v1/policy")).await;
    assert_eq!(st, 200);
    serde_json::from_slice(&b).unwrap()
}

/// `"{class} {policy} {source}"` of each class of a `/v1/policy` answer.
fn classes(p: &Value) -> Vec<String> {
    p["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let f = |k: &str| c[k].as_str().unwrap_or("?").to_string();
            format!("{} {} {}", f("class"), f("policy"), f("source"))
        })
        .collect()
}

async fn put_policy(a: SocketAddr, body: Value) -> (u16, Value) {
    let (st, _, b) = http(
        a,
        request(a, "PUT", "/v1/policy", Some("s3cret"), Some(&body)),
    )
    .await;
    (st.as_u16(), serde_json::from_slice(&b).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_policy_table_binds_each_class_with_its_policy_and_pins_one_class() {
    let files = tempfile::tempdir().unwrap();
    let table = files.path().join("table.yaml");
    std::fs::write(&table, TABLE).unwrap();
    let l = live(false, json!({"policy_table": table})).await;
    let a = l.addr();

    // By application name, whatever the deadline; else by demand bucket.
    let ar = open(a, &req(Some("ar"), 2000.0)).await;
    assert_eq!(
        (&ar["class"], &ar["policy"], &ar["cluster"]),
        (&json!("ar"), &json!("closest"), &json!("co-0"))
    );
    assert_eq!(bound(a, Some("cam"), 2000.0).await, "cam farthest cloud");
    assert_eq!(bound(a, None, 90.0).await, "ar closest co-0");
    assert_eq!(
        bound(a, Some("other-app"), 2000.0).await,
        "cam farthest cloud"
    );
    // The stream's queries go where its class's policy bound it.
    let id = ar["stream_id"].as_str().unwrap();
    let (st, h, _) = http(
        a,
        post_json(a, &format!("/v1/streams/{id}/infer"), &infer_json(1)),
    )
    .await;
    assert_eq!(
        (st.as_u16(), h["x-continuum-cluster"].to_str().unwrap()),
        (200, "co-0")
    );
    // One-shot queries: the same rule on their deadline (app `oneshot` names no class).
    let mut q = infer_json(1);
    for (deadline, cluster) in [(100.0, "co-0"), (2000.0, "cloud")] {
        q["parameters"] = json!({"max_delay_ms": deadline, "min_accuracy": 0.2});
        let (st, h, b) = http(a, post_json(a, "/v2/models/object-detection/infer", &q)).await;
        assert_eq!(st, 200, "{}", String::from_utf8_lossy(&b));
        assert_eq!(h["x-continuum-cluster"], cluster, "one-shot, {deadline} ms");
    }

    let p = policy_state(a).await;
    assert_eq!(classes(&p), ["ar closest static", "cam farthest static"]);
    assert_eq!(
        (&p["policy"], &p["source"]),
        (&json!("mixed"), &json!("static"))
    );
    let (_, _, m) = http(a, get(a, "/metrics")).await;
    let m = String::from_utf8(m.to_vec()).unwrap();
    for (line, v) in [
        ("{class=\"ar\",policy=\"closest\"}", 1.0),
        ("{class=\"ar\",policy=\"farthest\"}", 0.0),
        ("{class=\"cam\",policy=\"farthest\"}", 1.0),
    ] {
        let name = format!("continuum_gateway_active_policy{line}");
        assert!(m.contains(&name), "{m}");
        assert_eq!(metric_sum(&m, &name), v, "{name}");
    }

    // Pinning `ar` to farthest changes `ar` only.
    let (st, p) = put_policy(a, json!({"policy": "farthest", "class": "ar"})).await;
    assert_eq!(st, 200, "{p}");
    assert_eq!(classes(&p), ["ar farthest pinned", "cam farthest static"]);
    assert_eq!(bound(a, Some("ar"), 2000.0).await, "ar farthest cloud");
    // Pinning `cam` to closest changes `cam` only: `ar` keeps its pin.
    let (st, _) = put_policy(a, json!({"policy": "closest", "class": "cam"})).await;
    assert_eq!(st, 200);
    assert_eq!(bound(a, Some("cam"), 2000.0).await, "cam closest co-0");
    assert_eq!(bound(a, Some("ar"), 2000.0).await, "ar farthest cloud");
    // A stream keeps the binding (and reports the policy) it was opened with.
    let (_, _, b) = http(a, get(a, &format!("/v1/streams/{id}"))).await;
    let s: Value = serde_json::from_slice(&b).unwrap();
    assert_eq!(
        (&s["class"], &s["policy"], &s["cluster"]),
        (&json!("ar"), &json!("closest"), &json!("co-0"))
    );
    // Unknown classes and policies are refused with the known ones.
    let (st, e) = put_policy(a, json!({"policy": "closest", "class": "vr"})).await;
    assert_eq!(st, 400);
    let e = e["error"].as_str().unwrap();
    assert!(
        e.contains("unknown class `vr`; known classes: ar, cam"),
        "{e}"
    );
    let (st, e) = put_policy(a, json!({"policy": "nearest", "class": "ar"})).await;
    assert_eq!(st, 400);
    assert!(
        e["error"].as_str().unwrap().contains("known policies"),
        "{e}"
    );
    // Unpinning `ar` brings its configured policy back; `cam` stays pinned.
    let (st, p) = put_policy(a, json!({"policy": null, "class": "ar"})).await;
    assert_eq!(st, 200);
    assert_eq!(classes(&p), ["ar closest static", "cam closest pinned"]);
    assert_eq!(
        (&p["policy"], &p["source"]),
        (&json!("closest"), &json!("mixed"))
    );
    // Without a class, a pin or an unpin is for every class.
    let (_, p) = put_policy(a, json!({"policy": "farthest"})).await;
    assert_eq!(
        (&p["policy"], &p["source"]),
        (&json!("farthest"), &json!("pinned"))
    );
    let (_, p) = put_policy(a, json!({"policy": null})).await;
    assert_eq!(classes(&p), ["ar closest static", "cam farthest static"]);
    l.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_applies_the_new_table_and_drops_pins() {
    let files = tempfile::tempdir().unwrap();
    let table = files.path().join("table.yaml");
    std::fs::write(&table, TABLE).unwrap();
    let (l, _) = live_from_file(json!({"policy_table": table})).await;
    let a = l.addr();
    let (st, _) = put_policy(a, json!({"policy": "least-impedance", "class": "cam"})).await;
    assert_eq!(st, 200);
    let reload = || async {
        let (st, _, b) = http(a, request(a, "POST", "/v1/reload", Some("s3cret"), None)).await;
        (st.as_u16(), String::from_utf8_lossy(&b).to_string())
    };
    // Three classes now, `cam` among them with another policy: the pin is gone.
    std::fs::write(
        &table,
        "default: least-impedance\nclasses: {ar: farthest, cam: closest}\n",
    )
    .unwrap();
    let (st, b) = reload().await;
    assert_eq!(st, 200, "{b}");
    assert_eq!(
        classes(&policy_state(a).await),
        [
            "ar farthest static",
            "cam closest static",
            "other least-impedance static"
        ]
    );
    assert_eq!(bound(a, Some("ar"), 2000.0).await, "ar farthest cloud");
    assert_eq!(
        bound(a, Some("vr"), 2000.0).await,
        "other least-impedance co-0"
    );
    // The metric follows the new classes.
    let (_, _, m) = http(a, get(a, "/metrics")).await;
    let m = String::from_utf8(m.to_vec()).unwrap();
    assert!(
        m.contains("continuum_gateway_active_policy{class=\"other\",policy=\"least-impedance\"} 1"),
        "{m}"
    );
    // A broken table is refused, naming it, and the running classes are kept.
    std::fs::write(&table, "classes: {ar: nearest}\ndefault: closest\n").unwrap();
    let (st, b) = reload().await;
    assert_eq!(st, 400);
    assert!(
        b.contains("policy_table: ") && b.contains("unknown policy `nearest`"),
        "{b}"
    );
    assert_eq!(classes(&policy_state(a).await).len(), 3);
    l.stop().await;
}

/// Trains a tiny checkpoint for topologies/live.yaml whose actions are `closest` and
/// `farthest`, then makes its decisions known: no deviation from its fallback (an infinite
/// margin) and a fallback of `closest` for `ar-lite` and `farthest` for `analytics`.
fn checkpoint_with_known_decisions(dir: &Path) -> std::path::PathBuf {
    let cfg = dir.join("dqn.yaml");
    let tiny = std::fs::read_to_string(repo("tests/fixtures/tiny-dqn.yaml")).unwrap();
    std::fs::write(
        &cfg,
        format!("{tiny}actions: [closest, farthest]\nfallback_levels: 1\nfallback_seeds: 1\n"),
    )
    .unwrap();
    let ck = dir.join("live.dqn");
    train_live(&cfg, &ck);
    let loaded = Checkpoint::load(&ck).unwrap();
    let mut meta = loaded.meta.clone();
    assert_eq!(meta.actions, ["closest", "farthest"]);
    assert_eq!(meta.classes.names(), ["ar-lite", "analytics"]);
    meta.fallback = Fallback::single(vec![0, 1]);
    meta.margin = f64::INFINITY;
    let vars = candle_nn::VarMap::new();
    {
        let mut data = vars.data().lock().unwrap();
        for (name, p) in loaded.weights.iter() {
            let t = candle_core::Tensor::from_slice(
                &p.data,
                p.dims.as_slice(),
                &candle_core::Device::Cpu,
            )
            .unwrap();
            data.insert(name.to_string(), candle_core::Var::from_tensor(&t).unwrap());
        }
    }
    continuum_learn::agent::save(&ck, &vars, &meta).unwrap();
    ck
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agents_decision_for_each_class_binds_that_class() {
    let files = tempfile::tempdir().unwrap();
    let ck = checkpoint_with_known_decisions(files.path());
    let l = live(
        false,
        json!({"agent": ck, "policy": "least-impedance", "window_ms": 200}),
    )
    .await;
    let a = l.addr();
    // Until the first window every class has `policy`; then the agent's choice per class.
    let t = Instant::now();
    let p = loop {
        let p = policy_state(a).await;
        if p["source"] == "agent" || t.elapsed() > Duration::from_secs(20) {
            break p;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(
        classes(&p),
        ["ar-lite closest agent", "analytics farthest agent"],
        "{p}"
    );
    assert_eq!(p["actions"], json!(["closest", "farthest"]));
    assert_eq!(
        bound(a, Some("ar-lite"), 2000.0).await,
        "ar-lite closest co-0"
    );
    assert_eq!(
        bound(a, Some("analytics"), 2000.0).await,
        "analytics farthest cloud"
    );
    // A pinned class keeps its pin through the agent's next windows; the other class stays
    // the agent's.
    let (st, _) = put_policy(a, json!({"policy": "closest", "class": "analytics"})).await;
    assert_eq!(st, 200);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        classes(&policy_state(a).await),
        ["ar-lite closest agent", "analytics closest pinned"]
    );
    assert_eq!(
        bound(a, Some("analytics"), 2000.0).await,
        "analytics closest co-0"
    );
    l.stop().await;
}

/// The shipped topology-free checkpoint (docs/model.md §9.9) drives a gateway of
/// topologies/live.yaml, a network it was never trained on: its classes are the demand
/// buckets, and a stream is classed by its bucket whatever its application.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_topology_free_checkpoint_decides_on_a_network_it_never_saw() {
    let ck = repo("models/universal.dqn");
    let l = live(
        false,
        json!({"agent": ck, "policy": "least-impedance", "window_ms": 200}),
    )
    .await;
    let a = l.addr();
    let t = Instant::now();
    let p = loop {
        let p = policy_state(a).await;
        if p["source"] == "agent" || t.elapsed() > Duration::from_secs(20) {
            break p;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let cs = classes(&p);
    assert_eq!(cs.len(), 12, "{p}");
    assert!(cs[0].starts_with("d<=100ms,r<=10qps "), "{cs:?}");
    assert!(cs.iter().all(|c| c.ends_with(" agent")), "{cs:?}");
    // An application no checkpoint knows, deadline 2 s: the open last deadline range.
    let b = bound(a, Some("never-seen"), 2000.0).await;
    assert!(b.starts_with("d>500ms,"), "{b}");
    l.stop().await;
}

/// Why a gateway in front of a worker that need not run (start-up fails before connecting),
/// with `extra` settings, refuses to start.
async fn refusal(extra: Value) -> String {
    let mut v = json!({
        "topology": repo("topologies/live.yaml"),
        "profiles": repo("profiles/local.yaml"),
        "scheduler": "ant-00",
        "http": {"listen": "127.0.0.1:0"},
        "workers": [
            {"name": "worker-co", "cluster": "co-0", "protocol": "http", "address": "http://127.0.0.1:9"},
        ],
        "tasks": {"object-detection": {"input": "input", "output": "output",
                                        "shape": [3, 64, 64], "output_shape": [16]}},
    });
    if let Value::Object(m) = extra {
        for (k, x) in m {
            v[k] = x;
        }
    }
    match Gateway::start(serde_json::from_value(v).unwrap()).await {
        Ok(_) => panic!("the gateway started"),
        Err(e) => format!("{e:#}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_policy_tables_are_refused_naming_the_field_and_file() {
    let files = tempfile::tempdir().unwrap();
    let table = files.path().join("bad-table.yaml");
    let cases = [
        (
            "classes: {ar: nearest}\ndefault: closest\n",
            "unknown policy `nearest`",
        ),
        ("classes: {ar: closest}\n", "needs a default policy"),
        ("classes: [\n", "bad-table.yaml:"),
    ];
    for (text, needle) in cases {
        std::fs::write(&table, text).unwrap();
        let e = refusal(json!({"policy_table": table})).await;
        assert!(e.starts_with("policy_table: "), "{e}");
        assert!(
            e.contains("bad-table.yaml") && e.contains(needle),
            "{text}: {e}"
        );
    }
    let e = refusal(json!({"policy_table": table, "agent": "models/live.dqn"})).await;
    assert!(
        e.contains("policy_table: ") && e.contains("cannot be used with agent"),
        "{e}"
    );
    let e = refusal(json!({"policy_table": files.path().join("missing.yaml")})).await;
    assert!(e.contains("missing.yaml: cannot read file"), "{e}");
}

/// Own-binding accounting (docs/model.md §8): two streams opened on one load view with
/// `load-balancing` and every worker idle. Not counting its own bindings, the gateway sends both
/// where the view shows the least load (the same worker); counting them (`window`, over a window
/// longer than the test, so that a publication between the two opens changes nothing), the
/// second goes to another worker.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counting_its_own_bindings_the_gateway_spreads_streams_opened_on_one_view() {
    for (mode, same) in [("off", true), ("window", false)] {
        let l = live(
            false,
            json!({"policy": "load-balancing",
                   "own_bindings": {"mode": mode, "window_ms": 600_000}}),
        )
        .await;
        let a = l.addr();
        let one = open(a, &req(Some("x"), 2000.0)).await;
        let two = open(a, &req(Some("x"), 2000.0)).await;
        let at = |s: &Value| format!("{} {}", s["cluster"], s["variant"]);
        assert_eq!(at(&one) == at(&two), same, "{mode}: {one} then {two}");
        l.stop().await;
    }
}
