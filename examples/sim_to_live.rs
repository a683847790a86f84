//! Sim-to-live check: one antenna's slice of `topologies/live.yaml` runs for real on loopback —
//! two inference workers (central office, cloud), a gateway that injects the topology's link,
//! access and transmission delays, and the load generator drawing the same clients as the
//! simulator — and the same workload and seed run in the simulator. Prints both success ratios
//! overall and per app, their tails, and how much faster the simulator ran the episode than real
//! time.
//!
//! ```text
//! cargo run --release --example sim_to_live -- [--lambda 12] [--duration 120] [--seed 1] [--policy least-impedance] [--mitigation none] [--quic]
//! ```
//!
//! The profile (`profiles/local.yaml`) was measured with ONNX Runtime; run this where the
//! workers use it too (the log says which backend runs), or the live processing times differ
//! from the simulated ones.

use anyhow::{Result, bail};
use clap::Parser;
use continuum::cli::{Cli, Command};
use continuum_core::profiles::Profiles;
use continuum_core::workload::{Lambda, Workload};
use continuum_gateway::{Gateway, GatewayConfig};
use continuum_lab::run::build_report;
use continuum_lab::runner::Runner;
use continuum_loadgen::{LoadOptions, QuicTarget, run};
use continuum_worker::{Worker, WorkerConfig};
use std::path::Path;
use std::time::Duration;

/// Options.
#[derive(Debug, Parser)]
struct Args {
    /// Client arrival rate, clients/min.
    #[arg(long, default_value_t = 12.0)]
    lambda: f64,
    /// Seconds of client arrivals.
    #[arg(long, default_value_t = 120.0)]
    duration: f64,
    /// Seed of both runs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Dispatch policy of both runs.
    #[arg(long, default_value = "least-impedance")]
    policy: String,
    /// Tail-latency mitigation of both runs: `none`, `reissue@<r>` or `discard@<r>`.
    #[arg(long, default_value = "none")]
    mitigation: String,
    /// The load generator sends its queries over QUIC to the gateway's QUIC endpoint.
    #[arg(long)]
    quic: bool,
}

fn worker_cfg(file: &str, cert: &Path) -> Result<WorkerConfig> {
    let mut c = WorkerConfig::load(Path::new(file))?;
    c.http.listen = "127.0.0.1:0".parse()?;
    c.quic.listen = "127.0.0.1:0".parse()?;
    c.quic.dev_cert_out = Some(cert.to_path_buf());
    Ok(c)
}

fn main() -> Result<()> {
    let args = Args::parse();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .try_init();
    let dir = tempfile::tempdir()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let mut live_s = 0.0;
    let live = rt.block_on(async {
        let co = Worker::start(worker_cfg(
            "config/worker-co.yaml",
            &dir.path().join("co.der"),
        )?)
        .await?;
        let cloud = Worker::start(worker_cfg(
            "config/worker-cloud.yaml",
            &dir.path().join("cloud.der"),
        )?)
        .await?;
        let mut cfg = GatewayConfig::load(Path::new("config/gateway.yaml"))?;
        cfg.http.listen = "127.0.0.1:0".parse()?;
        let gw_cert = dir.path().join("gateway.der");
        cfg.quic = match (args.quic, cfg.quic.take()) {
            (true, Some(mut q)) => {
                q.listen = "127.0.0.1:0".parse()?;
                q.dev_cert_out = Some(gw_cert.clone());
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
        cfg.agent = None;
        cfg.seed = args.seed;
        cfg.workers[0].address = co.quic_addr().to_string();
        cfg.workers[0].cert = Some(dir.path().join("co.der"));
        cfg.workers[1].address = cloud.quic_addr().to_string();
        cfg.workers[1].cert = Some(dir.path().join("cloud.der"));
        let gw = Gateway::start(cfg).await?;
        if !gw.wait_workers_up(Duration::from_secs(30)).await {
            bail!("the workers did not come up");
        }
        let profiles = Profiles::load(Path::new("profiles/local.yaml"))?;
        let mut wl = Workload::load(Path::new("workloads/live.yaml"), &profiles)?;
        wl.lambda = Lambda::Constant(args.lambda);
        let mut opts = LoadOptions::new(&format!("http://{}", gw.http_addr()), wl, &profiles)?;
        opts.duration_s = args.duration;
        opts.seed = args.seed;
        opts.scheduler = 0;
        opts.progress = Some(Duration::from_secs(10));
        if let Some(q) = gw.quic_addr() {
            let target = format!("127.0.0.1:{}", q.port());
            opts.quic = Some(QuicTarget::new(&target, &gw_cert)?);
        }
        let t = std::time::Instant::now();
        let report = run(&opts).await?;
        live_s = t.elapsed().as_secs_f64();
        for u in gw.ctx().upstreams().iter() {
            let r = u.rtt();
            println!(
                "worker {}: smoothed RTT {:.3} ms, RTT variation {:.3} ms ({} samples)",
                u.cfg.name, r.srtt_ms, r.rttvar_ms, r.samples
            );
        }
        gw.shutdown().await;
        co.shutdown().await;
        cloud.shutdown().await;
        Ok::<_, anyhow::Error>(report)
    })?;
    let cli = Cli::parse_from([
        "continuum",
        "simulate",
        "topologies/live.yaml",
        "--profiles",
        "profiles/local.yaml",
        "--workload",
        "workloads/live.yaml",
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
    let config =
        continuum_core::mitigation::Configuration::parse(&format!("{policy}+{}", args.mitigation))
            .map_err(anyhow::Error::msg)?;
    let sim = build_report(run, &[Runner::Static(config)])?;
    let s = &sim.results[0];
    println!(
        "sim-to-live: topologies/live.yaml, workloads/live.yaml, λ {} clients/min, {} s, seed {}, {}",
        args.lambda,
        args.duration,
        args.seed,
        config.name()
    );
    println!(
        "{:<12} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "", "offered", "success", "failure", "rejected", "ratio"
    );
    let q = &live.queries;
    println!(
        "{:<12} {:>9} {:>9} {:>9} {:>9} {:>8.2}%",
        "live",
        q.offered,
        q.success,
        q.failure,
        q.rejected,
        100.0 * q.success_ratio
    );
    println!(
        "{:<12} {:>9} {:>9} {:>9} {:>9} {:>8.2}%",
        "simulated",
        s.offered,
        s.success,
        s.failure,
        s.rejected,
        100.0 * s.success_ratio
    );
    for a in &live.per_app {
        let sim_app = s.per_app.iter().find(|x| x.app == a.app);
        println!(
            "  {:<10} live {:>7.2}%  simulated {:>7.2}%  (live streams opened {}, refused {:?})",
            a.app,
            100.0 * a.queries.success_ratio,
            sim_app.map_or(f64::NAN, |x| 100.0 * x.success_ratio),
            a.streams.opened,
            a.streams.refused
        );
    }
    println!(
        "live answers: stream opens {:?}, queries {:?}, gateway judged {:?}",
        live.open_status, live.infer_status, live.gateway_outcome
    );
    let gap = 100.0 * (q.success_ratio - s.success_ratio);
    println!(
        "difference: {gap:+.2} pp (goal: within 3 pp); latency p50 / p99: live {:.1} / {:.1} ms, simulated {:.1} / {:.1} ms",
        live.latency_ms.p50, live.latency_ms.p99, s.latency_ms.p50, s.latency_ms.p99
    );
    // The live episode takes its duration plus the drain of its last queries; the simulator,
    // its wall time for the same episode.
    println!(
        "speed: the live episode took {:.1} s, the simulator {:.3} s on one core: {:.0}× faster",
        live_s,
        sim.sim.wall_s,
        live_s / sim.sim.wall_s.max(1e-9)
    );
    Ok(())
}
