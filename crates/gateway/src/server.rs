//! Running a gateway: start-up, the background tasks (load view publication every Δ, the
//! meta-policy every window T, idle stream reaping, one maintenance task per worker), reload
//! without dropping streams, and shutdown.

use crate::config::GatewayConfig;
use crate::control::{
    ControlPlane, ListenerTls, new_upstream, spawn_upstream, stream_key, window_observer,
};
use crate::plan::Plan;
use crate::state::GatewayState;
use crate::state::live::{LiveLoads, publish};
use crate::upstream::Upstream;
use anyhow::{Context, Result};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A running gateway.
pub struct Gateway {
    ctx: Arc<ControlPlane>,
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
    quic_endpoint: Option<quinn::Endpoint>,
    quic_certificate: Option<rustls::pki_types::CertificateDer<'static>>,
}

impl Gateway {
    /// Starts a gateway from a configuration file (reloads re-read it).
    pub async fn start_from_file(path: &Path) -> Result<Self> {
        let cfg = GatewayConfig::load(path)?;
        Self::start_with(cfg, Some(path.to_path_buf())).await
    }

    /// Starts a gateway from settings (no file: reload is refused).
    pub async fn start(cfg: GatewayConfig) -> Result<Self> {
        Self::start_with(cfg, None).await
    }

    async fn start_with(cfg: GatewayConfig, path: Option<PathBuf>) -> Result<Self> {
        cfg.validate().map_err(anyhow::Error::msg)?;
        let mut plan = tokio::task::spawn_blocking(move || Plan::build(cfg))
            .await
            .context("start-up panicked")??;
        let agent = plan.agent.take();
        let upstreams: Vec<Arc<Upstream>> = plan
            .cfg
            .workers
            .iter()
            .map(|u| new_upstream(u.clone(), &plan.cfg).map(Arc::new))
            .collect::<Result<_>>()?;
        let tls = ListenerTls::new(&plan.cfg)?;
        let listener = tokio::net::TcpListener::bind(plan.cfg.http.listen)
            .await
            .with_context(|| format!("cannot bind HTTP on {}", plan.cfg.http.listen))?;
        let http_addr = listener.local_addr()?;
        let plan = Arc::new(plan);
        let upstreams = Arc::new(upstreams);
        let loads = Arc::new(LiveLoads::default());
        let started = Instant::now();
        let first = publish(&plan, &upstreams, &loads, 0, started, 0.0);
        let state = Arc::new(GatewayState::new(first, started));
        state.set_stream_key(stream_key(&plan.cfg)?);
        let (grpc_listener, grpc_addr) = continuum_wire::grpc::bind(plan.cfg.grpc.as_ref()).await?;
        let quic = match &plan.cfg.quic {
            Some(q) => Some(continuum_wire::quic::bind(q)?),
            None => None,
        };
        let quic_addr = match &quic {
            Some((e, _)) => Some(e.local_addr()?),
            None => None,
        };
        if agent.is_some() {
            state
                .meta()
                .install(plan.sched, Some(window_observer(&plan, 0.0)));
        }
        let pull = match &plan.cfg.pull {
            Some(p) => Some(Arc::new(crate::decide::pull::PullDesk::new(
                p,
                plan.topology.clusters.len(),
                plan.cfg.publish_ms,
                plan.cfg.seed,
            )?)),
            None => None,
        };
        let (stop, stop_rx) = watch::channel(false);
        let ctx = Arc::new(ControlPlane {
            pull,
            state,
            config_path: path,
            loads,
            plan: RwLock::new(plan.clone()),
            upstreams: RwLock::new(upstreams.clone()),
            agent: Mutex::new(agent),
            generation: AtomicU64::new(0),
            stop: stop_rx.clone(),
            reload_lock: tokio::sync::Mutex::new(()),
            started,
            http_addr,
            grpc_addr,
            quic_addr,
            tls,
        });
        let mut tasks: Vec<JoinHandle<()>> = upstreams
            .iter()
            .map(|u| spawn_upstream(&ctx, u.clone()))
            .collect();
        tasks.push(tokio::spawn(publisher(ctx.clone(), stop_rx.clone())));
        tasks.push(tokio::spawn(reaper(ctx.clone(), stop_rx.clone())));
        tasks.push(tokio::spawn(meta_loop(ctx.clone(), stop_rx.clone())));
        if ctx.pull.is_some() {
            tasks.push(tokio::spawn(pull_loop(ctx.clone(), stop_rx.clone())));
        }
        if let Some(l) = grpc_listener {
            tasks.push(tokio::spawn(continuum_wire::grpc::serve(
                l,
                ctx.tls.grpc.clone(),
                ctx.clone(),
                plan.cfg.http.limits.clone(),
                stop_rx.clone(),
            )));
        }
        if let (Some((endpoint, _)), Some(q)) = (&quic, &plan.cfg.quic) {
            tasks.push(tokio::spawn(crate::front::quic::serve(
                endpoint.clone(),
                ctx.clone(),
                q.max_frame_bytes,
                stop_rx.clone(),
            )));
        }
        tasks.push(tokio::spawn(crate::front::api::serve(
            listener,
            ctx.clone(),
            stop_rx,
        )));
        tracing::info!(gateway = %plan.cfg.name, %http_addr, quic_addr = ?ctx.quic_addr, scheduler = %plan.cfg.scheduler,
            workers = upstreams.len(), policies = %plan.policies.describe(),
            agent = ctx.has_agent(), "gateway serving");
        let (quic_endpoint, quic_certificate) = quic.unzip();
        Ok(Self {
            ctx,
            stop,
            tasks,
            quic_endpoint,
            quic_certificate,
        })
    }

    /// Shared context (state, plan, reload).
    pub fn ctx(&self) -> &Arc<ControlPlane> {
        &self.ctx
    }

    /// Address of the client endpoint.
    pub fn http_addr(&self) -> SocketAddr {
        self.ctx.http_addr
    }

    /// Address of the gRPC endpoint, when one is configured.
    pub fn grpc_addr(&self) -> Option<SocketAddr> {
        self.ctx.grpc_addr
    }

    /// Address of the QUIC endpoint, when one is configured.
    pub fn quic_addr(&self) -> Option<SocketAddr> {
        self.ctx.quic_addr
    }

    /// The leaf certificate the QUIC endpoint presents, when one is configured (trust it in
    /// development clients).
    pub fn quic_certificate(&self) -> Option<&rustls::pki_types::CertificateDer<'static>> {
        self.quic_certificate.as_ref()
    }

    /// Waits until every configured worker is up, or `within` passes; whether all are up.
    pub async fn wait_workers_up(&self, within: Duration) -> bool {
        let t = Instant::now();
        loop {
            let all = self.ctx.upstreams().iter().all(|u| u.is_up());
            if all {
                self.ctx.publish_now();
                return true;
            }
            if t.elapsed() > within {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Stops taking requests, lets open requests finish, closes worker connections.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        for u in self.ctx.upstreams().iter() {
            u.retire();
        }
        for t in self.tasks {
            let _ = tokio::time::timeout(Duration::from_secs(5), t).await;
        }
        if let Some(e) = self.quic_endpoint {
            e.close(0u32.into(), b"shutdown");
        }
        tracing::info!("gateway stopped");
    }
}

async fn publisher(ctx: Arc<ControlPlane>, mut stop: watch::Receiver<bool>) {
    let period = Duration::from_millis(ctx.plan().cfg.publish_ms);
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => ctx.publish_now(),
            _ = stop.changed() => break,
        }
    }
}

async fn reaper(ctx: Arc<ControlPlane>, mut stop: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.changed() => break,
        }
        let (idle, memory) = {
            let plan = ctx.plan();
            (
                plan.cfg.stream_idle_timeout_ms,
                plan.cfg.closed_stream_memory_ms,
            )
        };
        let now = ctx.state.now_ms();
        let n = ctx
            .state
            .streams()
            .reap(now.saturating_sub(idle), now.saturating_sub(memory));
        if n > 0 {
            ctx.state
                .metrics()
                .streams_open
                .set(ctx.state.streams().len() as i64);
            tracing::info!(
                dropped = n,
                "idle streams dropped (their tokens re-bind on use)"
            );
        }
    }
}

async fn meta_loop(ctx: Arc<ControlPlane>, mut stop: watch::Receiver<bool>) {
    loop {
        let window = Duration::from_millis(ctx.plan().cfg.window_ms);
        tokio::select! {
            _ = tokio::time::sleep(window) => {}
            _ = stop.changed() => break,
        }
        if ctx.has_agent() {
            let c = ctx.clone();
            let _ = tokio::task::spawn_blocking(move || c.meta_step()).await;
        }
    }
}

/// Pull dispatch's decision steps, every `step_ms` (docs/model.md §15).
async fn pull_loop(ctx: Arc<ControlPlane>, mut stop: watch::Receiver<bool>) {
    let Some(desk) = ctx.pull.clone() else { return };
    let mut tick = tokio::time::interval(Duration::from_millis(desk.step_ms));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.changed() => break,
        }
        if desk.waiting() > 0 {
            let (d, snap) = (desk.clone(), ctx.state.snapshot());
            let _ = tokio::task::spawn_blocking(move || d.step(&snap)).await;
        }
    }
}

/// `continuum gateway --config <path>`: serves until Ctrl-C or SIGTERM; SIGHUP reloads.
pub fn run_from_file(path: &Path) -> Result<()> {
    let cfg = GatewayConfig::load(path)?;
    let filter =
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colour codes only where a person reads them, not in a log file.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    let _ = match cfg.log_format {
        crate::config::LogFormat::Json => builder.json().try_init(),
        crate::config::LogFormat::Text => builder.try_init(),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(async move {
        let gw = Gateway::start_from_file(path).await?;
        signals(gw.ctx().clone()).await;
        tracing::info!("shutting down");
        gw.shutdown().await;
        Ok(())
    })
}

/// Waits for Ctrl-C or SIGTERM; reloads on every SIGHUP meanwhile.
async fn signals(ctx: Arc<ControlPlane>) {
    continuum_wire::signals::until_stopped(|| async {
        if let Err(e) = ctx.reload().await {
            tracing::error!(error = %format!("{e:#}"), "reload failed; keeping the running configuration");
        }
    })
    .await;
}
