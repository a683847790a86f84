//! Running a gateway: start-up, the background tasks (load view publication every Δ, the
//! meta-policy every window T, idle stream reaping, one maintenance task per worker), reload
//! without dropping streams, and shutdown.

use super::config::{GatewayConfig, Protocol};
use super::live::{LiveLoads, publish};
use super::plan::Plan;
use super::state::{GatewayState, MetaState};
use super::upstream::{Link, Upstream, quic};
use anyhow::{Context, Result};
use continuum_core::load::WorkerLoad;
use continuum_core::observe::{DemandBuckets, WindowObserver};
use continuum_learn::agent::Agent;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// What the request handlers and tasks of one gateway share beyond [`GatewayState`]: the
/// plan, the live workers, and how to reload them.
pub struct Ctx {
    /// Streams, policy, metrics.
    pub state: Arc<GatewayState>,
    config_path: Option<PathBuf>,
    loads: Arc<LiveLoads>,
    plan: RwLock<Arc<Plan>>,
    upstreams: RwLock<Arc<Vec<Arc<Upstream>>>>,
    agent: Mutex<Option<Agent>>,
    generation: AtomicU64,
    stop: watch::Receiver<bool>,
    reload_lock: tokio::sync::Mutex<()>,
    started: Instant,
    /// Where the client endpoint listens.
    pub http_addr: SocketAddr,
    /// Where the gRPC endpoint listens, when one is configured.
    pub grpc_addr: Option<SocketAddr>,
    /// Where the QUIC endpoint listens, when one is configured.
    pub quic_addr: Option<SocketAddr>,
}

impl Ctx {
    /// The current plan.
    pub fn plan(&self) -> Arc<Plan> {
        self.plan.read().expect("plan lock").clone()
    }

    /// The live workers.
    pub fn upstreams(&self) -> Arc<Vec<Arc<Upstream>>> {
        self.upstreams.read().expect("upstreams lock").clone()
    }

    /// Whether a meta-policy is running.
    pub fn has_agent(&self) -> bool {
        self.agent.lock().expect("agent lock").is_some()
    }

    /// The meta-policy's actions.
    pub fn agent_actions(&self) -> Vec<String> {
        self.agent
            .lock()
            .expect("agent lock")
            .as_ref()
            .map(|a| a.actions().iter().map(|c| c.name()).collect())
            .unwrap_or_default()
    }

    /// Builds and publishes a snapshot now.
    pub fn publish_now(&self) {
        let now = Instant::now();
        let snap = publish(
            &self.plan(),
            &self.upstreams(),
            &self.loads,
            self.generation.load(Ordering::Acquire),
            now,
            now.duration_since(self.started).as_secs_f64() * 1e3,
        );
        for u in snap.upstreams.iter() {
            self.state
                .metrics
                .worker_up
                .get_or_create(&super::metrics::WorkerLabel {
                    worker: u.cfg.name.clone(),
                })
                .set(i64::from(u.is_up()));
        }
        if let Some(m) = self.state.meta.lock().expect("meta lock").as_mut() {
            m.observer.load_published(&snap.view);
        }
        self.state.set_snapshot(snap);
    }

    /// Re-reads the configuration file and applies it: new topology, workers, tasks, stream
    /// classes and policies (operators' pins are dropped); open streams stay open (re-bound on
    /// their next query if their worker is gone).
    pub async fn reload(self: &Arc<Self>) -> Result<u64> {
        let _g = self.reload_lock.lock().await;
        let path = self
            .config_path
            .as_ref()
            .context("this gateway was not started from a configuration file")?;
        let cfg = GatewayConfig::load(path)?;
        let mut plan = tokio::task::spawn_blocking(move || Plan::build(cfg))
            .await
            .context("reload panicked")??;
        let agent = plan.agent.take();
        let old = self.upstreams();
        let mut next = Vec::with_capacity(plan.cfg.workers.len());
        let mut started = Vec::new();
        for u in &plan.cfg.workers {
            let keep = old.iter().find(|o| {
                o.cfg.name == u.name
                    && o.cfg.address == u.address
                    && o.cfg.protocol == u.protocol
                    && o.cfg.cert == u.cert
                    && o.cfg.metrics == u.metrics
            });
            match keep {
                Some(o) => next.push(o.clone()),
                None => {
                    let n = Arc::new(new_upstream(u.clone(), &plan.cfg)?);
                    started.push(n.clone());
                    next.push(n);
                }
            }
        }
        for o in old.iter() {
            if !next.iter().any(|n| Arc::ptr_eq(n, o)) {
                o.retire();
                self.loads.forget(&o.cfg.name);
            }
        }
        let cfg = plan.cfg.clone();
        self.state
            .set_open_limit(cfg.stream_open_rate, cfg.stream_open_burst);
        self.state.set_app_classes(&cfg.app_classes);
        let plan = Arc::new(plan);
        *self.plan.write().expect("plan lock") = plan.clone();
        *self.upstreams.write().expect("upstreams lock") = Arc::new(next);
        *self.state.meta.lock().expect("meta lock") =
            agent.as_ref().map(|_| meta_state(&plan, self.elapsed_ms()));
        {
            // Under the agent's lock, so that a meta step never applies one agent's decision
            // to the other configuration's classes. Pins are dropped.
            let mut a = self.agent.lock().expect("agent lock");
            *a = agent;
            self.state.reset_policies(&plan.policies);
            self.state.set_mitigation(plan.cfg.mitigation(), false);
        }
        let generation = self.generation.fetch_add(1, Ordering::AcqRel) + 1;
        for u in started {
            spawn_upstream(self, u);
        }
        self.publish_now();
        tracing::info!(
            generation,
            streams = self.state.streams.len(),
            "configuration reloaded"
        );
        Ok(generation)
    }

    fn elapsed_ms(&self) -> f64 {
        self.started.elapsed().as_secs_f64() * 1e3
    }

    /// One meta-policy step: closes the window's observation, lets the agent choose the policy
    /// of each of this scheduler's stream classes for the next window (pinned classes keep
    /// theirs).
    fn meta_step(&self) {
        let now_ms = self.elapsed_ms();
        let obs = {
            let mut meta = self.state.meta.lock().expect("meta lock");
            let Some(m) = meta.as_mut() else { return };
            let snap = self.state.snapshot();
            m.observer.close(now_ms, &snap.view)
        };
        let sched = self.plan().sched;
        let mut guard = self.agent.lock().expect("agent lock");
        let Some(agent) = guard.as_mut() else { return };
        agent.observe(&obs);
        let d = match agent.decide() {
            Ok(d) => d,
            Err(e) => {
                tracing::warn!(error = %e, "meta-policy evaluation failed");
                return;
            }
        };
        self.state.metrics.agent_decisions.inc();
        let applied = d
            .get(sched)
            .ok_or_else(|| format!("the decision has no row for scheduler {sched}"))
            .and_then(|row| self.state.apply_decision(agent.actions(), row));
        match applied {
            Ok(changed) if !changed.is_empty() => {
                let classes = self.state.policies.list();
                for c in changed.iter().filter_map(|c| classes.get(*c)) {
                    tracing::debug!(class = %c.class, policy = c.policy, "meta-policy choice");
                }
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "meta-policy decision not applied"),
        }
    }
}

fn meta_state(plan: &Plan, now_ms: f64) -> MetaState {
    let buckets = plan
        .agent_config
        .as_ref()
        .map_or_else(DemandBuckets::default, |c| c.buckets.clone());
    MetaState {
        observer: WindowObserver::new(
            buckets,
            plan.topology.workers.len(),
            plan.topology.schedulers.len(),
            now_ms,
        ),
    }
}

fn new_upstream(u: super::config::UpstreamConfig, cfg: &GatewayConfig) -> Result<Upstream> {
    Upstream::new(
        u,
        cfg.max_in_flight_per_worker,
        Duration::from_millis(cfg.upstream_timeout_ms),
    )
}

/// Starts the maintenance task of one live worker.
fn spawn_upstream(ctx: &Arc<Ctx>, u: Arc<Upstream>) -> JoinHandle<()> {
    let loads = ctx.loads.clone();
    let stop = ctx.stop.clone();
    let period = ctx.plan().cfg.publish_ms;
    match u.cfg.protocol {
        Protocol::Quic => tokio::spawn(quic::maintain(u, loads, period as u32, stop)),
        Protocol::Http => tokio::spawn(scrape_loop(u, loads, period, stop)),
    }
}

/// Polls an HTTP worker's metrics every `period_ms`: its load, its health and an RTT sample.
async fn scrape_loop(
    u: Arc<Upstream>,
    loads: Arc<LiveLoads>,
    period_ms: u64,
    mut stop: watch::Receiver<bool>,
) {
    let Link::Http(h) = &u.link else { return };
    let mut tick = tokio::time::interval(Duration::from_millis(period_ms));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while !u.is_retired() {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.changed() => break,
        }
        let t = Instant::now();
        match h.scrape().await {
            Ok(models) => {
                u.add_rtt(t.elapsed().as_secs_f64() * 1e3);
                let at = Instant::now();
                for m in models {
                    let load = WorkerLoad {
                        load_qps: m.incoming_qps,
                        streams: m.open_streams.unwrap_or(0),
                        throughput_qps: m.throughput_qps,
                    };
                    loads.set(&u.cfg.name, &m.model, load, at);
                }
                u.reported();
                if !u.set_up(true) {
                    tracing::info!(worker = %u.cfg.name, "worker up");
                }
            }
            Err(e) => {
                if u.set_up(false) {
                    tracing::warn!(worker = %u.cfg.name, error = %e, "worker down");
                }
            }
        }
    }
}

/// The stream key the configuration names: `stream_key`, else `stream_key_file` (created
/// when missing), else a random one (streams then do not survive a restart).
fn stream_key(cfg: &GatewayConfig) -> Result<super::token::StreamKey> {
    use super::token::StreamKey;
    match (&cfg.stream_key, &cfg.stream_key_file) {
        (Some(k), _) => StreamKey::from_secret(k.as_bytes()),
        (None, Some(p)) => StreamKey::load_or_create(p),
        (None, None) => {
            tracing::warn!("no stream_key or stream_key_file: streams will not survive a restart");
            StreamKey::random()
        }
    }
}

/// A running gateway.
pub struct Gateway {
    ctx: Arc<Ctx>,
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
        let listener = tokio::net::TcpListener::bind(plan.cfg.http.listen)
            .await
            .with_context(|| format!("cannot bind HTTP on {}", plan.cfg.http.listen))?;
        let http_addr = listener.local_addr()?;
        let plan = Arc::new(plan);
        let upstreams = Arc::new(upstreams);
        let loads = Arc::new(LiveLoads::default());
        let started = Instant::now();
        let first = publish(&plan, &upstreams, &loads, 0, started, 0.0);
        let state = Arc::new(GatewayState::new(first));
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
            *state.meta.lock().expect("meta lock") = Some(meta_state(&plan, 0.0));
        }
        let (stop, stop_rx) = watch::channel(false);
        let ctx = Arc::new(Ctx {
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
        });
        let mut tasks: Vec<JoinHandle<()>> = upstreams
            .iter()
            .map(|u| spawn_upstream(&ctx, u.clone()))
            .collect();
        tasks.push(tokio::spawn(publisher(ctx.clone(), stop_rx.clone())));
        tasks.push(tokio::spawn(reaper(ctx.clone(), stop_rx.clone())));
        tasks.push(tokio::spawn(meta_loop(ctx.clone(), stop_rx.clone())));
        if let Some(l) = grpc_listener {
            tasks.push(tokio::spawn(continuum_wire::grpc::serve(
                l,
                ctx.clone(),
                plan.cfg.http.limits.clone(),
                stop_rx.clone(),
            )));
        }
        if let (Some((endpoint, _)), Some(q)) = (&quic, &plan.cfg.quic) {
            tasks.push(tokio::spawn(super::quic_api::serve(
                endpoint.clone(),
                ctx.clone(),
                q.max_frame_bytes,
                stop_rx.clone(),
            )));
        }
        tasks.push(tokio::spawn(super::api::serve(
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
    pub fn ctx(&self) -> &Arc<Ctx> {
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

async fn publisher(ctx: Arc<Ctx>, mut stop: watch::Receiver<bool>) {
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

async fn reaper(ctx: Arc<Ctx>, mut stop: watch::Receiver<bool>) {
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
            .streams
            .reap(now.saturating_sub(idle), now.saturating_sub(memory));
        if n > 0 {
            ctx.state
                .metrics
                .streams_open
                .set(ctx.state.streams.len() as i64);
            tracing::info!(
                dropped = n,
                "idle streams dropped (their tokens re-bind on use)"
            );
        }
    }
}

async fn meta_loop(ctx: Arc<Ctx>, mut stop: watch::Receiver<bool>) {
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

/// `continuum gateway --config <path>`: serves until Ctrl-C or SIGTERM; SIGHUP reloads.
pub fn run_from_file(path: &Path) -> Result<()> {
    let cfg = GatewayConfig::load(path)?;
    let filter =
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match cfg.log_format {
        super::config::LogFormat::Json => builder.json().try_init(),
        super::config::LogFormat::Text => builder.try_init(),
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
async fn signals(ctx: Arc<Ctx>) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut hup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) else {
            let _ = tokio::signal::ctrl_c().await;
            return;
        };
        loop {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => return,
                _ = term.recv() => return,
                _ = hup.recv() => {
                    if let Err(e) = ctx.reload().await {
                        tracing::error!(error = %format!("{e:#}"), "reload failed; keeping the running configuration");
                    }
                }
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctx;
        let _ = tokio::signal::ctrl_c().await;
    }
}
