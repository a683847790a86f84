//! The gateway's control plane ([`ControlPlane`]): what its request handlers and background
//! tasks share beyond the state layer's [`GatewayState`] — the plan, the live workers and their
//! maintenance, the meta-policy's agent, and reload. Three types, three jobs: [`crate::Gateway`]
//! is the running process (tasks, listeners, shutdown), [`ControlPlane`] what changes on reload,
//! [`GatewayState`] what every query reads.

use crate::config::{GatewayConfig, Protocol};
use crate::plan::Plan;
use crate::state::GatewayState;
use crate::state::live::{LiveLoads, publish};
use crate::upstream::{Link, Upstream, quic};
use anyhow::{Context, Result, bail};
use continuum_core::load::WorkerLoad;
use continuum_core::observe::{DemandBuckets, WindowObserver};
use continuum_infer::agent::Agent;
use continuum_wire::tcp_tls::{ALPN_GRPC, ALPN_HTTP, StagedTls, TlsAcceptor};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// What the request handlers and tasks of one gateway share beyond [`GatewayState`]: the
/// plan, the live workers, and how to reload them.
pub struct ControlPlane {
    /// Streams, policy, metrics.
    pub(crate) state: Arc<GatewayState>,
    pub(super) config_path: Option<PathBuf>,
    pub(super) loads: Arc<LiveLoads>,
    pub(super) plan: RwLock<Arc<Plan>>,
    pub(super) upstreams: RwLock<Arc<Vec<Arc<Upstream>>>>,
    pub(super) agent: Mutex<Option<Agent>>,
    pub(super) generation: AtomicU64,
    pub(super) stop: watch::Receiver<bool>,
    pub(super) reload_lock: tokio::sync::Mutex<()>,
    pub(super) started: Instant,
    /// Where the client endpoint listens.
    pub(crate) http_addr: SocketAddr,
    /// Where the gRPC endpoint listens, when one is configured.
    pub(crate) grpc_addr: Option<SocketAddr>,
    /// Where the QUIC endpoint listens, when one is configured.
    pub(crate) quic_addr: Option<SocketAddr>,
    /// Pull dispatch's desk, when `pull` is configured.
    pub(crate) pull: Option<Arc<crate::decide::pull::PullDesk>>,
    /// TLS of the HTTP and gRPC listeners (certificates swapped on reload).
    pub(crate) tls: ListenerTls,
}

/// The TLS of the gateway's HTTP and gRPC listeners, when configured.
#[derive(Debug, Default)]
pub(crate) struct ListenerTls {
    /// The HTTP listener's.
    pub(crate) http: Option<TlsAcceptor>,
    /// The gRPC listener's.
    pub(crate) grpc: Option<TlsAcceptor>,
}

impl ListenerTls {
    /// Reads the certificate files `cfg` names for its listeners.
    pub(crate) fn new(cfg: &GatewayConfig) -> Result<Self> {
        let grpc = cfg.grpc.as_ref().and_then(|g| g.tls.as_ref());
        Ok(Self {
            http: TlsAcceptor::optional(cfg.http.tls.as_ref(), ALPN_HTTP).context("http.tls")?,
            grpc: TlsAcceptor::optional(grpc, ALPN_GRPC).context("grpc.tls")?,
        })
    }

    /// Reads and checks the files `cfg` names for the running listeners; nothing changes until
    /// each is committed. TLS cannot be turned on or off without a restart. `grpc_listening`:
    /// whether a gRPC listener runs (a `grpc` section added by a reload starts none).
    fn stage(&self, cfg: &GatewayConfig, grpc_listening: bool) -> Result<Vec<StagedTls>> {
        let grpc = cfg.grpc.as_ref().and_then(|g| g.tls.as_ref());
        let mut staged = Vec::new();
        let listeners = [
            ("http", &self.http, cfg.http.tls.as_ref()),
            ("grpc", &self.grpc, grpc.filter(|_| grpc_listening)),
        ];
        for (section, running, wanted) in listeners {
            match (running, wanted) {
                (Some(a), Some(t)) => staged.push(a.stage(t).context(format!("{section}.tls"))?),
                (None, None) => {}
                (Some(_), None) => {
                    bail!("{section}.tls: a reload cannot turn TLS off; restart the gateway")
                }
                (None, Some(_)) => {
                    bail!("{section}.tls: a reload cannot turn TLS on; restart the gateway")
                }
            }
        }
        Ok(staged)
    }
}

impl ControlPlane {
    /// The current plan.
    pub(crate) fn plan(&self) -> Arc<Plan> {
        self.plan.read().expect("plan lock").clone()
    }

    /// The live workers.
    pub fn upstreams(&self) -> Arc<Vec<Arc<Upstream>>> {
        self.upstreams.read().expect("upstreams lock").clone()
    }

    /// Whether a meta-policy is running.
    pub(crate) fn has_agent(&self) -> bool {
        self.agent.lock().expect("agent lock").is_some()
    }

    /// The meta-policy's actions.
    pub(crate) fn agent_actions(&self) -> Vec<String> {
        self.agent
            .lock()
            .expect("agent lock")
            .as_ref()
            .map(|a| a.actions().iter().map(|c| c.name()).collect())
            .unwrap_or_default()
    }

    /// Builds and publishes a snapshot now.
    pub(crate) fn publish_now(&self) {
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
                .metrics()
                .worker_up
                .get_or_create(&crate::metrics::WorkerLabel {
                    worker: u.cfg.name.clone(),
                })
                .set(i64::from(u.is_up()));
            if let Link::Quic(q) = &u.link
                && let Some(stats) = q.stats()
            {
                self.state.metrics().quic_stats(&u.cfg.name, &stats);
            }
        }
        self.state.meta().load_published(&snap.view);
        self.state.set_snapshot(snap);
    }

    /// Re-reads the configuration file and applies it: new topology, workers, tasks, stream
    /// classes and policies (operators' pins are dropped), and the HTTP and gRPC listeners'
    /// certificates (for new handshakes); open streams and connections stay open (streams are
    /// re-bound on their next query if their worker is gone).
    pub(crate) async fn reload(self: &Arc<Self>) -> Result<u64> {
        let _g = self.reload_lock.lock().await;
        let path = self
            .config_path
            .as_ref()
            .context("this gateway was not started from a configuration file")?;
        let cfg = GatewayConfig::load(path)?;
        // New certificates are read first and installed only once everything else has loaded:
        // a bad file keeps the running certificate (and configuration).
        let staged_tls = self.tls.stage(&cfg, self.grpc_addr.is_some())?;
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
                    && o.cfg.tls == u.tls
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
        let certificates = staged_tls.len();
        staged_tls.into_iter().for_each(StagedTls::commit);
        let cfg = plan.cfg.clone();
        self.state
            .set_open_limit(cfg.stream_open_rate, cfg.stream_open_burst);
        self.state.set_app_classes(&cfg.app_classes);
        let plan = Arc::new(plan);
        *self.plan.write().expect("plan lock") = plan.clone();
        *self.upstreams.write().expect("upstreams lock") = Arc::new(next);
        self.state.meta().install(
            plan.sched,
            agent
                .as_ref()
                .map(|_| window_observer(&plan, self.elapsed_ms())),
        );
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
            streams = self.state.streams().len(),
            certificates,
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
    pub(super) fn meta_step(&self) {
        let t = std::time::Instant::now();
        if self.meta_step_inner() {
            let m = self.state.metrics();
            m.agent_decisions.inc();
            m.meta_step_seconds.observe(t.elapsed().as_secs_f64());
        }
    }

    /// [`Self::meta_step`]'s work; whether the agent decided.
    fn meta_step_inner(&self) -> bool {
        let now_ms = self.elapsed_ms();
        let snap = self.state.snapshot();
        let Some(obs) = self.state.meta().close(now_ms, &snap.view) else {
            return false;
        };
        let sched = self.plan().sched;
        let mut guard = self.agent.lock().expect("agent lock");
        let Some(agent) = guard.as_mut() else {
            return false;
        };
        agent.observe(&obs);
        let d = agent.decide();
        let applied = d
            .get(sched)
            .ok_or_else(|| format!("the decision has no row for scheduler {sched}"))
            .and_then(|row| self.state.apply_decision(agent.actions(), row));
        match applied {
            Ok(changed) if !changed.is_empty() => {
                let classes = self.state.class_policies();
                for c in changed.iter().filter_map(|c| classes.get(*c)) {
                    tracing::debug!(class = %c.class, policy = c.policy, "meta-policy choice");
                }
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "meta-policy decision not applied"),
        }
        true
    }
}

pub(super) fn window_observer(plan: &Plan, now_ms: f64) -> WindowObserver {
    let buckets = plan
        .agent_config
        .as_ref()
        .map_or_else(DemandBuckets::default, |c| c.buckets.clone());
    WindowObserver::new(
        buckets,
        plan.topology.workers.len(),
        plan.topology.schedulers.len(),
        now_ms,
    )
}

pub(super) fn new_upstream(
    u: crate::config::UpstreamConfig,
    cfg: &GatewayConfig,
) -> Result<Upstream> {
    Upstream::new(
        u,
        cfg.max_in_flight_per_worker,
        Duration::from_millis(cfg.upstream_timeout_ms),
    )
}

/// Starts the maintenance task of one live worker.
pub(super) fn spawn_upstream(ctx: &Arc<ControlPlane>, u: Arc<Upstream>) -> JoinHandle<()> {
    let loads = ctx.loads.clone();
    let stop = ctx.stop.clone();
    let plan = ctx.plan();
    let (period, silence) = (plan.cfg.publish_ms, plan.cfg.worker_silence());
    match u.cfg.protocol {
        Protocol::Quic => tokio::spawn(quic::maintain(u, loads, period as u32, silence, stop)),
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
pub(super) fn stream_key(cfg: &GatewayConfig) -> Result<crate::state::token::StreamKey> {
    use crate::state::token::StreamKey;
    match (&cfg.stream_key, &cfg.stream_key_file) {
        (Some(k), _) => StreamKey::from_secret(k.as_bytes()),
        (None, Some(p)) => StreamKey::load_or_create(p),
        (None, None) => {
            tracing::warn!("no stream_key or stream_key_file: streams will not survive a restart");
            StreamKey::random()
        }
    }
}
