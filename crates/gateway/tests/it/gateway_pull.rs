//! Pull dispatch at the gateway, end to end on loopback with real workers (docs/model.md §15):
//! opens wait for a decision step, where TapFinger's agents (the shipped checkpoint) claim
//! them; the bindings equal what the core's step decides for the same state — the
//! simulator's code — and an open no worker can serve is refused at once, as under push.

use continuum_core::config::Source;
use continuum_core::feasibility::{Demand, Fleet};
use continuum_core::load::LoadView;
use continuum_core::profiles::Profiles;
use continuum_core::pull::{GreedyPull, Pending, Puller, step};
use continuum_core::rng::{Purpose, stream_rng};
use continuum_core::topology::Topology;
use continuum_infer::tapfinger::{Pick, TapCheckpoint, TapFinger};
use continuum_testkit::gateway::*;
use serde_json::json;

const CHECKPOINT: &str = "models/full-edge-tapfinger.tapfinger";

/// The gateway's decision step, ms: long, so that opens sent together wait for the same one.
const STEP_MS: u64 = 1500;

/// Frames per second of the fixture's streams: fast enough that co-0's `cnn-s-b1` cannot take
/// them all by the agents' reckoning, so that TapFinger's bindings differ from greedy pull's
/// (and push's nearest-first, which binds them all to `cnn-s-b1` as greedy pull does).
const RATE_QPS: f64 = 1000.0;

/// What the core's step decides for `n` identical streams (as [`stream_req`] with a 2 s
/// deadline, at `rate_qps`) waiting at ant-00 of topologies/live.yaml on an idle view under the
/// shipped TapFinger checkpoint: `cluster/variant` of each binding, sorted.
fn expected(n: usize, min_accuracy: f64, rate_qps: f64) -> Vec<String> {
    let root = repo("");
    let path = root.join(CHECKPOINT);
    let ck = TapCheckpoint::load(&path).unwrap();
    let net = ck.network(&path).unwrap();
    let c = &ck.meta.config;
    let clusters = fixture().0.clusters.len();
    let mut tf = TapFinger::new(
        net,
        Pick::Greedy,
        c.pointer,
        c.resolution.resolution(),
        clusters,
    );
    bindings(n, min_accuracy, rate_qps, &mut tf)
}

/// topologies/live.yaml and profiles/local.yaml, as the gateway under test loads them.
fn fixture() -> (Topology, Profiles) {
    let root = repo("");
    let p = Profiles::load(&root.join("profiles/local.yaml")).unwrap();
    let text = std::fs::read_to_string(root.join("topologies/live.yaml")).unwrap();
    let t = Topology::from_source(&Source::inline("live.yaml", &text), &p).unwrap();
    (t, p)
}

/// What the core's step decides for `n` such streams under `puller`.
fn bindings(n: usize, min_accuracy: f64, rate_qps: f64, puller: &mut dyn Puller) -> Vec<String> {
    let (t, p) = fixture();
    let f = Fleet::new(&t, &p);
    let s = t.cluster_index("ant-00").unwrap();
    let sched = t.schedulers.iter().find(|x| x.cluster == s).unwrap();
    let demand = Demand {
        task: p.task_id("object-detection").unwrap(),
        rate_qps,
        frame_kb: 48.0,
        tx_ms: 0.0,
        access_ms: 2.0,
        max_delay_ms: 2000.0,
        min_accuracy,
        items: 1,
    };
    let pending: Vec<Pending> = (0..n)
        .map(|_| Pending {
            demand,
            reach: &sched.reach,
            sched: 0,
            waited: 0,
        })
        .collect();
    let mut rng = stream_rng(1, Purpose::Other, 0, 0);
    let view = LoadView::idle(f.workers.len());
    let (bound, _) = step(&pending, &f, &view, puller, &mut rng);
    let mut out: Vec<String> = bound
        .iter()
        .map(|(_, c)| {
            let w = &t.workers[c.worker as usize];
            format!(
                "{}/{}",
                t.clusters[w.cluster].id,
                p.variant_names()[w.variant]
            )
        })
        .collect();
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tapfinger_binds_at_the_gateway_as_the_core_step_does() {
    let root = repo("");
    let want = expected(3, 0.2, RATE_QPS);
    // The fixture tells the pullers apart: a gateway that ran greedy pull (or bound each open
    // as push does) would bind differently.
    let greedy = bindings(3, 0.2, RATE_QPS, &mut GreedyPull);
    assert_ne!(
        want, greedy,
        "the fixture does not tell TapFinger from greedy pull"
    );
    // Three opens sent together almost always wait for the same step; should one step fall
    // between them (their answers then come a step apart), the gateway is started afresh.
    let mut attempts = 0;
    let l = loop {
        attempts += 1;
        // A long step, so that opens sent together wait for the same one; the topology's own
        // network figures (no measured RTT), as the core's step sees them.
        let l = live(
            false,
            json!({"pull": {"puller": format!("tapfinger:{}", root.join(CHECKPOINT).display()),
                            "step_ms": STEP_MS},
                   "rtt_weight": 0.0}),
        )
        .await;
        let a = l.addr();
        // Every variant in the view, as in the idle view of `expected`.
        wait_reachable(a, 4, std::time::Duration::from_secs(20)).await;
        let mut req = stream_req(2000.0, 0.2);
        req["rate_qps"] = json!(RATE_QPS);
        let opens = (0..3).map(|_| {
            let r = req.clone();
            async move {
                let s = open(a, &r).await;
                (s, std::time::Instant::now())
            }
        });
        let answers = futures_join(opens).await;
        let at: Vec<_> = answers.iter().map(|(_, t)| *t).collect();
        let spread = *at.iter().max().unwrap() - *at.iter().min().unwrap();
        if spread.as_millis() >= u128::from(STEP_MS / 2) {
            assert!(
                attempts < 3,
                "the opens never shared a step: {spread:?} apart"
            );
            l.stop().await;
            continue;
        }
        let mut got: Vec<String> = answers
            .iter()
            .map(|(s, _)| {
                assert_eq!(s["policy"], "tapfinger", "{s}");
                format!(
                    "{}/{}",
                    s["cluster"].as_str().unwrap(),
                    s["variant"].as_str().unwrap()
                )
            })
            .collect();
        got.sort();
        assert_eq!(got, want);
        break l;
    };
    let a = l.addr();

    // No worker is accurate enough: refused at once, naming the constraint, as under push.
    let (st, _, body) = http(a, post_json(a, "/v1/streams", &stream_req(2000.0, 0.99))).await;
    assert_eq!(st, 503, "{}", String::from_utf8_lossy(&body));
    let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["constraint"], "accuracy");
    l.stop().await;
}

/// Runs the futures concurrently and collects their outputs in order.
async fn futures_join<F: std::future::Future + Send + 'static>(
    fs: impl Iterator<Item = F>,
) -> Vec<F::Output>
where
    F::Output: Send + 'static,
{
    let handles: Vec<_> = fs.map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}
