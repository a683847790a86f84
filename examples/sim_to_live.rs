//! Sim-to-live check: a slice of a topology runs for real on loopback — its inference workers
//! (central office, cloud), one gateway per antenna that injects the topology's link, access and
//! transmission delays, and per antenna the load generator drawing the same clients as the
//! simulator's scheduler there — and the same workload and seed run in the simulator. Prints
//! both success ratios overall and per app, their tails, the gateways' decision times, and how
//! much faster the simulator ran the episode than real time; `--json` also writes them.
//!
//! ```text
//! cargo run --release --example sim_to_live -- [--lambda 12] [--duration 120] [--seed 1] [--policy least-impedance] [--mitigation none] [--quic]
//! # the fleet of four gateways with the learned default (docs/live.md, "The learned default on a live fleet")
//! cargo run --release --example sim_to_live -- --topology topologies/live-fleet.yaml \
//!     --profiles profiles/live-fleet.yaml --workload workloads/live-fleet.yaml \
//!     --workers config/live-fleet/worker-co.yaml,config/live-fleet/worker-cloud.yaml \
//!     --lambda 12 --agent models/live-fleet-heuristics.dqn --json out/fleet-live.json
//! ```
//!
//! The profile (`profiles/local.yaml`) was measured with ONNX Runtime; run this where the
//! workers use it too (the log says which backend runs), or the live processing times differ
//! from the simulated ones.

use anyhow::{Context, Result, bail};
use clap::Parser;
use continuum::cli::{Cli, Command};
use continuum_core::profiles::Profiles;
use continuum_core::topology::Topology;
use continuum_core::workload::{Lambda, Workload};
use continuum_gateway::{Gateway, GatewayConfig};
use continuum_lab::run::build_report;
use continuum_lab::runner::Runner;
use continuum_loadgen::{LoadOptions, LoadReport, QuicTarget, run};
use continuum_wire::parse_prometheus;
use continuum_worker::{Worker, WorkerConfig};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Options.
#[derive(Debug, Parser)]
struct Args {
    /// Client arrival rate, clients/min per antenna.
    #[arg(long, default_value_t = 12.0)]
    lambda: f64,
    /// Seconds of client arrivals.
    #[arg(long, default_value_t = 120.0)]
    duration: f64,
    /// Seed of both runs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Dispatch policy of both runs (without `--agent`).
    #[arg(long, default_value = "least-impedance")]
    policy: String,
    /// A meta-policy checkpoint: every gateway runs it (the gateways' `agent`), and the
    /// simulator its `dqn` row.
    #[arg(long)]
    agent: Option<PathBuf>,
    /// Tail-latency mitigation of both runs: `none`, `reissue@<r>` or `discard@<r>`.
    #[arg(long, default_value = "none")]
    mitigation: String,
    /// The load generators send their queries over QUIC to the gateways' QUIC endpoints.
    #[arg(long)]
    quic: bool,
    /// Topology: one gateway per antenna (scheduler) of it.
    #[arg(long, default_value = "topologies/live.yaml")]
    topology: PathBuf,
    /// Variant profiles of the gateways and the simulator.
    #[arg(long, default_value = "profiles/local.yaml")]
    profiles: PathBuf,
    /// Workload of the load generators and the simulator.
    #[arg(long, default_value = "workloads/live.yaml")]
    workload: PathBuf,
    /// Worker configurations, comma-separated, in the order of config/gateway.yaml's `workers`.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "config/worker-co.yaml,config/worker-cloud.yaml"
    )]
    workers: Vec<PathBuf>,
    /// Also write the figures as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

fn worker_cfg(file: &Path, cert: &Path) -> Result<WorkerConfig> {
    let mut c = WorkerConfig::load(file)?;
    c.http.listen = "127.0.0.1:0".parse()?;
    c.grpc = None;
    c.quic.listen = "127.0.0.1:0".parse()?;
    c.quic.dev_cert_out = Some(cert.to_path_buf());
    Ok(c)
}

/// One gateway of the slice: config/gateway.yaml for antenna `sched` of the topology.
fn gateway_cfg(
    args: &Args,
    sched: &str,
    dir: &Path,
    workers: &[(Worker, PathBuf)],
) -> Result<GatewayConfig> {
    let mut cfg = GatewayConfig::load(Path::new("config/gateway.yaml"))?;
    cfg.name = format!("gateway-{sched}");
    cfg.topology = args.topology.clone();
    cfg.profiles = args.profiles.clone();
    cfg.scheduler = sched.to_string();
    cfg.stream_key_file = Some(dir.join(format!("{sched}.stream.key")));
    cfg.http.listen = "127.0.0.1:0".parse()?;
    cfg.grpc = None;
    cfg.quic = match (args.quic, cfg.quic.take()) {
        (true, Some(mut q)) => {
            q.listen = "127.0.0.1:0".parse()?;
            q.dev_cert_out = Some(dir.join(format!("gateway-{sched}.der")));
            Some(q)
        }
        (true, None) => bail!("config/gateway.yaml has no `quic` section for --quic"),
        (false, _) => None,
    };
    cfg.inject_delays = true;
    // The injected delays are the topology's network; loopback's own ~0.1 ms RTT is not part
    // of the modelled topology, so it does not enter d_n^s here (it still adds to the live
    // latencies). With the default blend, a stream whose deadline is within ~0.05 ms of
    // its latency bound is accepted by the simulator and refused live.
    cfg.rtt_weight = 0.0;
    cfg.policy = args.policy.clone();
    cfg.mitigation = args.mitigation.clone();
    cfg.agent = args.agent.clone();
    cfg.seed = args.seed;
    if cfg.workers.len() != workers.len() {
        bail!(
            "config/gateway.yaml lists {} workers, --workers {}",
            cfg.workers.len(),
            workers.len()
        );
    }
    for (u, (w, cert)) in cfg.workers.iter_mut().zip(workers) {
        u.address = w.quic_addr().to_string();
        u.cert = Some(cert.clone());
    }
    Ok(cfg)
}

/// The live run: workers, a gateway and a load generator per antenna; the load reports in
/// antenna order, the gateways' decision times, the wall time of the load.
async fn live(
    args: &Args,
    antennas: &[String],
    dir: &Path,
) -> Result<(Vec<LoadReport>, Value, f64)> {
    let mut workers = Vec::new();
    for (i, file) in args.workers.iter().enumerate() {
        let cert = dir.join(format!("worker-{i}.der"));
        workers.push((Worker::start(worker_cfg(file, &cert)?).await?, cert));
    }
    let mut gateways = Vec::new();
    for a in antennas {
        let gw = Gateway::start(gateway_cfg(args, a, dir, &workers)?).await?;
        if !gw.wait_workers_up(Duration::from_secs(30)).await {
            bail!("the workers did not come up at gateway {a}");
        }
        gateways.push(gw);
    }
    let profiles = Profiles::load(&args.profiles)?;
    let mut loads = Vec::new();
    for (i, (gw, a)) in gateways.iter().zip(antennas).enumerate() {
        let mut wl = Workload::load(&args.workload, &profiles)?;
        wl.lambda = Lambda::Constant(args.lambda);
        let mut opts = LoadOptions::new(&format!("http://{}", gw.http_addr()), wl, &profiles)?;
        opts.duration_s = args.duration;
        opts.seed = args.seed;
        opts.scheduler = i as u64;
        opts.progress = (i == 0).then_some(Duration::from_secs(10));
        if let Some(q) = gw.quic_addr() {
            let target = format!("127.0.0.1:{}", q.port());
            opts.quic = Some(QuicTarget::new(
                &target,
                &dir.join(format!("gateway-{a}.der")),
            )?);
        }
        loads.push(tokio::spawn(async move { run(&opts).await }));
    }
    let t = std::time::Instant::now();
    let mut reports = Vec::new();
    for l in loads {
        reports.push(l.await.context("a load generator panicked")??);
    }
    let live_s = t.elapsed().as_secs_f64();
    let mut decision = Vec::new();
    for gw in gateways {
        let text = continuum_testkit::gateway::metrics_of(gw.http_addr()).await;
        decision.push(decision_times(&text));
        gw.shutdown().await;
    }
    let mut served = Vec::new();
    for (w, _) in workers {
        served.push(worker_counts(
            &continuum_testkit::gateway::metrics_of(w.http_addr()).await,
        ));
        w.shutdown().await;
    }
    Ok((
        reports,
        json!({"gateways": decision, "workers": served}),
        live_s,
    ))
}

/// Mean and 99th percentile (the upper edge of its histogram bucket) of the binding decisions
/// and meta-policy steps in one gateway's metrics, µs.
fn decision_times(text: &str) -> Value {
    let samples = parse_prometheus(text);
    let stat = |name: &str| {
        let get = |suffix: &str| {
            samples
                .iter()
                .filter(|s| s.name == format!("{name}_{suffix}"))
                .map(|s| s.value)
                .sum::<f64>()
        };
        let (sum, count) = (get("sum"), get("count"));
        let mut buckets: Vec<(f64, f64)> = samples
            .iter()
            .filter(|s| s.name == format!("{name}_bucket"))
            .filter_map(|s| {
                let le = s.label("le")?.parse::<f64>().ok()?;
                Some((le, s.value))
            })
            .collect();
        buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
        let p99 = buckets
            .iter()
            .find(|(_, c)| *c >= 0.99 * count)
            .map_or(f64::NAN, |(le, _)| *le);
        json!({"count": count, "mean_us": 1e6 * sum / count.max(1.0), "p99_le_us": 1e6 * p99})
    };
    json!({
        "binding": stat("continuum_gateway_decision_seconds"),
        "window": stat("continuum_gateway_meta_step_seconds"),
    })
}

/// Per model of one worker: batches run, queries answered and rejected, mean queue wait and
/// mean batch time (µs), from its metrics.
fn worker_counts(text: &str) -> Value {
    let samples = parse_prometheus(text);
    let mut out = serde_json::Map::new();
    let of = |name: &str, model: &str| {
        samples
            .iter()
            .filter(|s| s.name.starts_with(name) && s.label("model") == Some(model))
            .map(|s| s.value)
            .sum::<f64>()
    };
    let mut models: Vec<&str> = samples.iter().filter_map(|s| s.label("model")).collect();
    models.sort_unstable();
    models.dedup();
    for m in models {
        let (n, batches) = (
            of("nv_inference_count", m),
            of("nv_inference_exec_count", m),
        );
        out.insert(
            m.to_string(),
            json!({"queries": n, "batches": batches, "rejected": of("continuum_rejected", m),
                "queue_us_mean": of("nv_inference_queue_duration_us", m) / n.max(1.0),
                "batch_us_mean": of("nv_inference_compute_infer_duration_us", m) / batches.max(1.0)}),
        );
    }
    Value::Object(out)
}

/// The same slice, workload and seed in the simulator.
fn simulate(args: &Args) -> Result<continuum_lab::report::Report> {
    let arg = |p: &Path| p.to_string_lossy().into_owned();
    let (topology, profiles, workload) = (
        arg(&args.topology),
        arg(&args.profiles),
        arg(&args.workload),
    );
    let cli = Cli::parse_from([
        "continuum",
        "simulate",
        &topology,
        "--profiles",
        &profiles,
        "--workload",
        &workload,
        "--lambda",
        &args.lambda.to_string(),
        "--duration",
        &args.duration.to_string(),
        "--seed",
        &args.seed.to_string(),
        "--policy",
        &args.policy,
    ]);
    let Command::Simulate { policy, run } = &cli.command else {
        unreachable!("parsed a simulate command")
    };
    let runner = match &args.agent {
        Some(a) => Runner::dqn("learned".into(), a)?,
        None => Runner::Static(
            continuum_core::mitigation::Configuration::parse(&format!(
                "{policy}+{}",
                args.mitigation
            ))
            .map_err(anyhow::Error::msg)?,
        ),
    };
    build_report(run, &[runner])
}

fn main() -> Result<()> {
    let args = Args::parse();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .try_init();
    let topo = Topology::load(&args.topology, &Profiles::load(&args.profiles)?)?;
    let antennas: Vec<String> = topo
        .schedulers
        .iter()
        .map(|s| topo.clusters[s.cluster].id.clone())
        .collect();
    let dir = tempfile::tempdir()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let (reports, decision, live_s) = rt.block_on(live(&args, &antennas, dir.path()))?;
    let sim = simulate(&args)?;
    let figures = summary(&args, &antennas, &reports, &sim, decision, live_s);
    print(&figures);
    if let Some(file) = &args.json {
        std::fs::write(file, serde_json::to_string_pretty(&figures)? + "\n")
            .with_context(|| format!("cannot write {}", file.display()))?;
    }
    Ok(())
}

/// Queries of one run: offered, success, failure, rejected, success ratio.
fn counts(offered: u64, success: u64, failure: u64, rejected: u64) -> Value {
    json!({"offered": offered, "success": success, "failure": failure, "rejected": rejected,
        "success_ratio": success as f64 / offered.max(1) as f64})
}

/// Both runs' figures: live summed over the antennas' load generators, and per antenna.
fn summary(
    args: &Args,
    antennas: &[String],
    reports: &[LoadReport],
    sim: &continuum_lab::report::Report,
    decision: Value,
    live_s: f64,
) -> Value {
    let sum = |f: fn(&LoadReport) -> u64| reports.iter().map(f).sum::<u64>();
    let live = counts(
        sum(|r| r.queries.offered),
        sum(|r| r.queries.success),
        sum(|r| r.queries.failure),
        sum(|r| r.queries.rejected),
    );
    let mut apps: Vec<String> = reports
        .iter()
        .flat_map(|r| r.per_app.iter().map(|a| a.app.clone()))
        .collect();
    apps.sort();
    apps.dedup();
    let s = &sim.results[0];
    let per_app: Vec<Value> = apps
        .iter()
        .map(|app| {
            let of = |f: fn(&continuum_loadgen::AppReport) -> u64| {
                reports
                    .iter()
                    .flat_map(|r| r.per_app.iter().filter(|a| &a.app == app))
                    .map(f)
                    .sum::<u64>()
            };
            let (offered, success) = (of(|a| a.queries.offered), of(|a| a.queries.success));
            let simulated = s.per_app.iter().find(|x| &x.app == app);
            json!({"app": app, "live": success as f64 / offered.max(1) as f64,
                "simulated": simulated.map(|x| x.success_ratio)})
        })
        .collect();
    let per_antenna: Vec<Value> = antennas
        .iter()
        .zip(reports)
        .map(|(a, r)| json!({"antenna": a, "offered": r.queries.offered,
            "success_ratio": r.queries.success_ratio, "open_status": r.open_status,
            "infer_status": r.infer_status, "gateway_outcome": r.gateway_outcome,
            "send_lag_ms": {"p50": r.send_lag_ms.p50, "p99": r.send_lag_ms.p99, "max": r.send_lag_ms.max},
            "latency_ms": {"p50": r.latency_ms.p50, "p99": r.latency_ms.p99}}))
        .collect();
    json!({
        "topology": args.topology, "profiles": args.profiles, "workload": args.workload,
        "lambda": args.lambda, "duration_s": args.duration, "seed": args.seed,
        "row": args.agent.as_ref().map_or_else(|| args.policy.clone(), |_| "learned".into()),
        "agent": args.agent, "mitigation": args.mitigation, "quic": args.quic,
        "live": live,
        "simulated": counts(s.offered, s.success, s.failure, s.rejected),
        "live_latency_ms": reports.first().map(|r| json!({"p50": r.latency_ms.p50, "p99": r.latency_ms.p99})),
        "simulated_latency_ms": {"p50": s.latency_ms.p50, "p99": s.latency_ms.p99},
        "per_app": per_app, "per_antenna": per_antenna, "metrics": decision,
        "live_s": live_s, "sim_wall_s": sim.sim.wall_s,
    })
}

/// The figures as text.
fn print(f: &Value) {
    let pct = |v: &Value| 100.0 * v.as_f64().unwrap_or(f64::NAN);
    println!(
        "sim-to-live: {}, {}, {}, λ {} clients/min per antenna, {} s, seed {}, {}",
        f["topology"].as_str().unwrap_or(""),
        f["profiles"].as_str().unwrap_or(""),
        f["workload"].as_str().unwrap_or(""),
        f["lambda"],
        f["duration_s"],
        f["seed"],
        f["row"].as_str().unwrap_or("")
    );
    for k in ["live", "simulated"] {
        let c = &f[k];
        println!(
            "{k:<10} offered {:>7} success {:>7} failure {:>6} rejected {:>6}  {:>6.2}%",
            c["offered"],
            c["success"],
            c["failure"],
            c["rejected"],
            pct(&c["success_ratio"])
        );
    }
    for a in f["per_app"].as_array().into_iter().flatten() {
        println!(
            "  {:<12} live {:>6.2}%  simulated {:>6.2}%",
            a["app"].as_str().unwrap_or(""),
            pct(&a["live"]),
            pct(&a["simulated"])
        );
    }
    for a in f["per_antenna"].as_array().into_iter().flatten() {
        println!(
            "  {}: {:.2}% of {} (send lag ms {}, latency ms {}, opens {}, queries {}, gateway judged {})",
            a["antenna"].as_str().unwrap_or(""),
            pct(&a["success_ratio"]),
            a["offered"],
            a["send_lag_ms"],
            a["latency_ms"],
            a["open_status"],
            a["infer_status"],
            a["gateway_outcome"]
        );
    }
    let gap = pct(&f["live"]["success_ratio"]) - pct(&f["simulated"]["success_ratio"]);
    println!(
        "difference: {gap:+.2} pp; decision times per gateway, µs: {}",
        f["metrics"]["gateways"]
    );
    println!("workers: {}", f["metrics"]["workers"]);
    let (live_s, sim_s) = (
        f["live_s"].as_f64().unwrap_or(f64::NAN),
        f["sim_wall_s"].as_f64().unwrap_or(f64::NAN),
    );
    // The live episode takes its duration plus the drain of its last queries; the simulator,
    // its wall time for the same episode.
    println!(
        "speed: the live episode took {live_s:.1} s, the simulator {sim_s:.3} s on one core: {:.0}× faster",
        live_s / sim_s.max(1e-9)
    );
}
