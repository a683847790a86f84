//! Gateway benchmarks: (a) decision time of one binding (`Decider::bind`: feasibility and
//! policy over a published snapshot of topologies/full-edge.yaml); (b) latency the gateway adds
//! to a query of the null model (models/null.onnx) at fixed open-loop rates on loopback, against
//! a client talking to the worker directly (HTTP clients, and QUIC clients of the gateway's
//! QUIC front end against QUIC clients of the worker); (c) forwarded queries per second per CPU core of
//! the gateway process; (d) gateway memory per open stream.
//!
//! Run: `cargo bench --bench gateway`. (a) runs in this process; (b)–(d) start the release
//! `continuum` binary twice, as a worker serving `null-b1` (QUIC + HTTP) and as a gateway in
//! front of it (benches/gateway-null.yaml, benches/null-profile.yaml), so that the gateway's
//! CPU time and resident memory are its own (`/proc/<pid>`). Client, worker and gateway share
//! the machine's cores: on a small shared machine the figures include that contention.
//! `CONTINUUM_BENCH_BIN=<path>` runs (b)–(d) on another build of the binary (a release profile
//! variant, an older commit), so that builds are compared by one bench.
//!
//! This file holds (a) and the summary; (b)–(d), with the processes they start, are in
//! gateway_support/live.rs, and the helpers both use in gateway_support/mod.rs.

#[path = "gateway_support/live.rs"]
mod live;
#[path = "gateway_support/mod.rs"]
mod support;

use continuum_core::load::WorkerLoad;
use continuum_core::rng::{Purpose, stream_rng};
use continuum_gateway::GatewayConfig;
use continuum_gateway::bench::{
    Decider, GatewayState, LiveLoads, OpenRequest, Plan, Stream, Upstream, publish,
};
use hdrhistogram::Histogram;
use live::Row;
use serde_json::{Value, json};
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::*;

/// Timed `bind` calls per policy, after as many untimed. assumption: 200 000 (the issue asks
/// for ≥ 100 000) keeps p999 on 200 samples.
const DECISIONS: usize = 200_000;
/// Open-loop rates, qps (the 1k and 5k).
const RATES: [f64; 2] = [1000.0, 5000.0];
/// Measured time per open-loop run (the issue's ~5 s), after `WARMUP` at the same rate.
const RUN: Duration = Duration::from_secs(5);
/// assumption: 1 s warms connections, pools and caches.
const WARMUP: Duration = Duration::from_secs(1);
/// Closed-loop clients for the saturation run. assumption: 64 outstanding queries keep every
/// path busy (the worker alone answers ~28k qps over HTTP with them here).
const CONCURRENCY: usize = 64;
/// Open streams for the memory figure (the N).
const STREAMS: usize = 20_000;
/// Gateway streams the open-loop queries are spread over. assumption: a handful, like one
/// antenna's cameras.
const LOOP_STREAMS: usize = 16;

fn pct(h: &Histogram<u64>, q: f64) -> f64 {
    h.value_at_quantile(q) as f64 / 1e3
}

/// (a) `bind` on a gateway for ant-00 of full-edge, every worker up and half loaded.
fn decisions() -> Vec<(&'static str, Histogram<u64>, usize)> {
    let plan = decision_plan();
    let state = half_loaded(&plan);
    let reach = state.snapshot().reach.len();
    let streams = decision_streams(&plan);
    let out = time_policies(&state, &streams);
    print_decisions(reach, &out);
    out
}

/// The plan of a gateway for ant-00 of full-edge with one HTTP upstream per cluster that
/// hosts workers; never contacted (port 9: discard).
fn decision_plan() -> Arc<Plan> {
    let profiles =
        continuum_core::profiles::Profiles::load(&repo("profiles/object-detection.yaml"))
            .expect("profiles");
    let topo =
        continuum_core::topology::Topology::load(&repo("topologies/full-edge.yaml"), &profiles)
            .unwrap();
    let mut clusters: Vec<&str> = topo
        .workers
        .iter()
        .map(|w| topo.clusters[w.cluster].id.as_str())
        .collect();
    clusters.sort_unstable();
    clusters.dedup();
    let workers: Vec<Value> = clusters
        .iter()
        .map(|c| json!({"name": c, "cluster": c, "protocol": "http", "address": "http://127.0.0.1:9"}))
        .collect();
    let cfg: GatewayConfig = serde_json::from_value(json!({
        "topology": repo("topologies/full-edge.yaml"), "profiles": repo("profiles/object-detection.yaml"),
        "scheduler": "ant-00", "workers": workers,
        "tasks": {"object-detection": {"input": "input", "output": "output", "shape": [3, 64, 64]}}}))
    .unwrap();
    Arc::new(Plan::build(cfg).expect("plan"))
}

/// The state of `plan`'s gateway with every upstream up and every worker reporting half its
/// capacity.
fn half_loaded(plan: &Arc<Plan>) -> GatewayState {
    let ups: Vec<Arc<Upstream>> = plan
        .cfg
        .workers
        .iter()
        .map(|u| Arc::new(Upstream::new(u.clone(), 1024, Duration::from_secs(5)).unwrap()))
        .collect();
    let loads = LiveLoads::default();
    let now = Instant::now();
    for w in 0..plan.topology.workers.len() {
        let Some(u) = plan.served_by[w] else { continue };
        ups[u].set_up(true);
        ups[u].reported();
        // assumption: every worker at half its capacity, so that the load check is evaluated
        // but passes.
        let cap = plan.fleet.workers[w].capacity_qps;
        let l = WorkerLoad {
            load_qps: cap / 2.0,
            streams: 10,
            throughput_qps: cap / 2.0,
        };
        loads.set(&ups[u].cfg.name, plan.variant_name(w), l, now);
    }
    let snap = publish(plan, &Arc::new(ups), &loads, 0, now, 0.0);
    GatewayState::new(snap, now)
}

/// One stream per app class of workloads/default.yaml at its mean rate, size and deadline.
fn decision_streams(plan: &Plan) -> Vec<Stream> {
    let classes = [
        (75.0, 0.2, 22.5, 40.0),
        (225.0, 0.3, 10.0, 50.0),
        (175.0, 0.3, 15.0, 60.0),
        (175.0, 0.5, 15.0, 60.0),
        (750.0, 0.5, 7.5, 60.0),
    ];
    classes
        .iter()
        .enumerate()
        .map(|(i, &(d, a, r, kb))| {
            let req = OpenRequest {
                task: "object-detection".into(),
                app: None,
                max_delay_ms: d,
                min_accuracy: a,
                rate_qps: r,
                frame_kb: kb,
                access_ms: None,
                tx_ms: None,
                items: None,
            };
            let rng = stream_rng(1, Purpose::Uplink, 0, i as u64);
            let access_ms = plan.cfg.default_access_ms;
            Stream::new(
                i as u128 + 1,
                Arc::from(""),
                req,
                Arc::from("bench"),
                access_ms,
                0,
                rng,
            )
        })
        .collect()
}

/// Per registered policy, pinned on `state`: the time of each of `DECISIONS` `bind` calls on
/// `streams` round-robin (after as many untimed), and how many found nothing feasible.
fn time_policies(
    state: &GatewayState,
    streams: &[Stream],
) -> Vec<(&'static str, Histogram<u64>, usize)> {
    let snap = state.snapshot();
    let mut out = Vec::new();
    for p in continuum_core::policy::REGISTRY {
        state.pin_policy(None, *p);
        let mut h = histogram();
        let mut infeasible = 0;
        for i in 0..2 * DECISIONS {
            let s = &streams[i % streams.len()];
            let t = Instant::now();
            let r = black_box(Decider::new(state).bind(&snap, s));
            let ns = t.elapsed().as_nanos() as u64;
            if i >= DECISIONS {
                h.saturating_record(ns);
                infeasible += usize::from(r.is_err());
            }
        }
        out.push((p.name(), h, infeasible));
    }
    out
}

/// Reports (a): the timer's own overhead, then each policy's quantiles (`reach` reachable
/// workers).
fn print_decisions(reach: usize, out: &[(&'static str, Histogram<u64>, usize)]) {
    println!(
        "(a) decision time: Decider::bind, full-edge ant-00, {reach} reachable workers, \
        {DECISIONS} timed calls per policy (each timed alone with Instant), app classes of \
        workloads/default.yaml round-robin"
    );
    let mut tick = histogram();
    for _ in 0..100_000 {
        let t = Instant::now();
        tick.saturating_record(black_box(t.elapsed().as_nanos() as u64));
    }
    println!(
        "    timer overhead (Instant::now + elapsed): p50 {:.3} µs",
        pct(&tick, 0.5)
    );
    for (name, h, inf) in out {
        println!(
            "    {name:<22} p50 {:>7.2} µs  p99 {:>7.2} µs  p999 {:>7.2} µs  ({inf} infeasible)",
            pct(h, 0.5),
            pct(h, 0.99),
            pct(h, 0.999)
        );
    }
}

/// The summary of (a)–(d) against the targets.
fn print_summary(
    dec: &[(&'static str, Histogram<u64>, usize)],
    rows: &[Row],
    sat: &[(Route, f64, f64)],
    per_stream: f64,
) {
    println!("\n==================== gateway benchmark summary ====================");
    println!(
        "machine: {} logical CPUs shared by the client, the gateway and the worker processes (and, \
        at times, other builds): every live figure includes that contention",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    print_decision_summary(dec);
    for rate in RATES {
        print_latency_summary(rows, rate);
    }
    print_saturation_summary(sat);
    println!("memory per open stream: {per_stream:.0} B (gateway VmRSS growth / {STREAMS})");
    println!("===================================================================");
}

/// (a)'s line: least-impedance's quantiles (else the first policy's) and the worst p99.
fn print_decision_summary(dec: &[(&'static str, Histogram<u64>, usize)]) {
    let ds = dec
        .iter()
        .find(|d| d.0 == "least-impedance")
        .unwrap_or(&dec[0]);
    let worst = dec.iter().map(|d| pct(&d.1, 0.99)).fold(0.0, f64::max);
    println!(
        "decision ({}): p50 {:.2} µs, p99 {:.2} µs, p999 {:.2} µs [target p99 ≤ 10 µs: {}]; \
        worst p99 over all {} policies {:.2} µs",
        ds.0,
        pct(&ds.1, 0.5),
        pct(&ds.1, 0.99),
        pct(&ds.1, 0.999),
        verdict(pct(&ds.1, 0.99) <= 10.0),
        dec.len(),
        worst
    );
}

/// (b)'s lines at `rate`: the direct routes, then what each gateway route adds to them.
fn print_latency_summary(rows: &[Row], rate: f64) {
    let base = |route: Route| {
        rows.iter()
            .find(|r| r.route == route && r.rate == rate)
            .expect("row")
    };
    let dh = base(Route::DirectHttp);
    let dq = base(Route::DirectQuic);
    println!(
        "{rate:>5} qps: direct HTTP p50 {:.1} / p99 {:.1} µs; direct QUIC p50 {:.1} / p99 {:.1} µs",
        dh.q[0], dh.q[1], dq.q[0], dq.q[1]
    );
    let q = base(Route::QuicGatewayQuic);
    let a50 = q.q[0] - dq.q[0];
    println!(
        "    {:<15} p50 {:.1} / p99 {:.1} µs; vs direct QUIC +p50 {a50:.1} µs [≤ 100: {}], +p99 \
        {:.1} µs; own mean {:.1} µs; failed {}",
        Route::QuicGatewayQuic.label(),
        q.q[0],
        q.q[1],
        verdict(a50 <= 100.0),
        q.q[1] - dq.q[1],
        q.own.unwrap_or(f64::NAN),
        q.failed
    );
    for route in [Route::GatewayQuic, Route::GatewayHttp] {
        let g = base(route);
        let (a50, a99) = (g.q[0] - dh.q[0], g.q[1] - dh.q[1]);
        println!(
            "    {:<15} p50 {:.1} / p99 {:.1} µs; vs direct HTTP +p50 {a50:.1} µs [≤ 100: {}], \
            +p99 {a99:.1} µs [≤ 1000: {}]; vs direct QUIC +p50 {:.1}, +p99 {:.1} µs; own mean \
            {:.1} µs; failed {}",
            route.label(),
            g.q[0],
            g.q[1],
            verdict(a50 <= 100.0),
            verdict(a99 <= 1000.0),
            g.q[0] - dq.q[0],
            g.q[1] - dq.q[1],
            g.own.unwrap_or(f64::NAN),
            g.failed
        );
    }
}

/// (c)'s lines: each route's maximum rate, and through a gateway its rate per gateway core.
fn print_saturation_summary(sat: &[(Route, f64, f64)]) {
    for (route, qps, cores) in sat {
        match route.gateway() {
            None => println!(
                "max qps, {:<15}: {qps:.0} (the worker alone)",
                route.label()
            ),
            Some(_) => println!(
                "max qps, {:<15}: {qps:.0}, gateway busy {cores:.2} cores → {:.0} qps per gateway \
                CPU-second [target ≥ 20 000: {}]",
                route.label(),
                qps / cores,
                verdict(qps / cores >= 20_000.0)
            ),
        }
    }
}

fn verdict(ok: bool) -> &'static str {
    if ok { "met" } else { "MISSED" }
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dec = {
        let _in_runtime = rt.enter();
        decisions()
    };
    rt.block_on(live::live(&dec));
}
