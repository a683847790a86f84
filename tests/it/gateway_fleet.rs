//! A fleet of three gateways (the real binary; antennas ant-00, ant-01, ant-02 of
//! topologies/fleet.yaml), each the scheduler of its own site with its own worker in scope, all
//! sharing one stream key. A stream opened at A answers at B with its token (B re-binds it
//! within its own scope); and when A is killed with SIGKILL under load, the load generator,
//! pointed at [A, B, C], hands A's streams over to B: no stream is lost and every query is
//! judged exactly once.

use crate::gateway_support::*;
use continuum_loadgen::{self as loadgen, Assign, LoadOptions};
use serde_json::json;
use std::net::SocketAddr;
use std::process::Child;
use std::time::Duration;

/// One app: any model qualifies, a loose deadline (a debug build on a loaded machine), and
/// streams that outlive the run, so that every stream opened at A is open when A dies.
const WORKLOAD: &str = r#"
lambda_per_min: 60
jitter: {uniform_ms: 5}
access_delay_ms: {uniform: [2, 10]}
apps:
  - {name: ar-lite, share: 1.0, task: object-detection, rate_qps: 10, frame_kb: 20,
     uplink_mbps: 50, max_delay_ms: 1000, min_accuracy: 0.2, duration_s: 60}
"#;

struct Fleet {
    gateways: Vec<(SocketAddr, Child)>,
    workers: Vec<continuum_worker::Worker>,
    dir: tempfile::TempDir,
}

/// Three site workers (in process) and three gateway processes, each gateway with its own
/// site's worker only; one stream key file, written before any gateway starts.
async fn fleet() -> Fleet {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("stream.key");
    std::fs::write(&key, "5eed".repeat(16)).unwrap();
    let mut workers = Vec::new();
    for i in 0..3 {
        let cert = dir.path().join(format!("site-{i}.der"));
        let cfg = config(
            &[("cnn-m-b1", "cnn-m", 1, 0.0), ("cnn-l-b1", "cnn-l", 1, 0.0)],
            json!({"name": format!("site-{i}"), "quic": {"dev_cert_out": cert}}),
        );
        workers.push(start(cfg).await);
    }
    let mut gateways = Vec::new();
    for (i, w) in workers.iter().enumerate() {
        let a = free_addr(false);
        let v = json!({
            "name": format!("gateway-{i}"),
            "topology": repo("topologies/fleet.yaml"),
            "profiles": repo("profiles/local.yaml"),
            "scheduler": format!("ant-0{i}"),
            "http": {"listen": a},
            "stream_key_file": key,
            "publish_ms": 50,
            "worker_silence_ms": 1000,
            "workers": [{"name": format!("site-{i}"), "cluster": format!("co-{i}"),
                         "protocol": "quic", "address": w.quic_addr().to_string(),
                         "cert": dir.path().join(format!("site-{i}.der"))}],
            "tasks": {"object-detection": {"input": "input", "output": "output",
                                            "shape": [3, 64, 64], "output_shape": [16]}},
        });
        let file = dir.path().join(format!("gateway-{i}.yaml"));
        gateways.push((a, spawn_with_config("gateway", &file, &v)));
    }
    for (a, _) in &gateways {
        wait_ready(*a).await;
    }
    Fleet {
        gateways,
        workers,
        dir,
    }
}

impl Fleet {
    fn addr(&self, i: usize) -> SocketAddr {
        self.gateways[i].0
    }

    async fn stop(self) {
        for (_, mut g) in self.gateways {
            let _ = g.kill();
            let _ = g.wait();
        }
        for w in self.workers {
            w.shutdown().await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn streams_move_between_gateways_and_none_is_lost_when_one_dies() {
    let mut f = fleet().await;
    let (a, b) = (f.addr(0), f.addr(1));

    // A stream opened at A answers at B with its token, re-bound within B's scope.
    let s = open(a, &stream_req(5000.0, 0.2)).await;
    assert_eq!(s["cluster"], "co-0");
    let id = s["stream_id"].as_str().unwrap();
    let (st, h, body) = http(
        b,
        post_json(b, &format!("/v1/streams/{id}/infer"), &infer_json(1)),
    )
    .await;
    assert_eq!(st, 200, "{}", String::from_utf8_lossy(&body));
    assert_eq!(h["x-continuum-cluster"], "co-1");
    let m = metrics_of(b).await;
    assert_eq!(
        metric_sum(&m, "continuum_gateway_stream_resumes_total"),
        1.0
    );
    // A forged or foreign token is not taken over.
    let forged = format!("{}x", &id[..id.len() - 1]);
    let (st, _, _) = http(
        b,
        post_json(b, &format!("/v1/streams/{forged}/infer"), &infer_json(1)),
    )
    .await;
    assert_eq!(st, 404);

    // Load spread over [A, B, C]; A is killed while its streams are open.
    let wl_file = f.dir.path().join("workload.yaml");
    std::fs::write(&wl_file, WORKLOAD).unwrap();
    let profiles = continuum_core::profiles::Profiles::load(&repo("profiles/local.yaml")).unwrap();
    let workload = continuum_core::workload::Workload::load(&wl_file, &profiles).unwrap();
    let urls: Vec<String> = (0..3).map(|i| format!("http://{}", f.addr(i))).collect();
    let mut o = LoadOptions::new(&urls[0], workload, &profiles).unwrap();
    o.set_gateways(&urls).unwrap();
    o.assign = Assign::Spread;
    o.duration_s = 8.0;
    o.seed = 3;
    o.timeout = Duration::from_secs(10);
    let (_, mut gw_a) = f.gateways.remove(0);
    let killer = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(4)).await;
        gw_a.kill().expect("SIGKILL");
        let _ = gw_a.wait();
    });
    let r = loadgen::run(&o).await.unwrap();
    killer.await.unwrap();

    let q = &r.queries;
    let fl = &r.fleet;
    let summary = format!("{q:?} {fl:?} {:?} {:?}", r.infer_status, r.errors);
    // Every stream was opened (at its gateway or the next) and every query judged once.
    assert!(r.streams.refused.is_empty(), "{summary}");
    assert!(r.streams.opened >= 3, "{summary}");
    assert!(q.conserved(), "{summary}");
    assert_eq!(
        q.offered, r.sent,
        "each sent query judged exactly once: {summary}"
    );
    assert!(q.success > 0, "{summary}");
    // A's streams moved to B, none was lost, and no gateway refused a handed-over token.
    assert_eq!(fl.streams_lost, 0, "{summary}");
    assert!(fl.handovers >= 1, "{summary}");
    assert!(
        fl.gateways[0].opened >= 1 && fl.gateways[0].unreachable >= 1,
        "{summary}"
    );
    assert_eq!(fl.gateways[1].handovers_in, fl.handovers, "{summary}");
    assert!(fl.failover_ms.count >= 1, "{summary}");
    assert!(!r.infer_status.contains_key("404"), "{summary}");
    assert!(fl.gateways[2].answered > 0, "{summary}");
    f.stop().await;
}
