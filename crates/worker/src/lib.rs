//! The inference worker (`continuum worker --config worker.yaml`): one process on one cluster
//! serving model variants with real inference, over the Open Inference Protocol v2 on HTTP
//! ([`http`]), over gRPC and over QUIC ([`quic`]). The protocols themselves (bodies, frames,
//! the serve loop, endpoints) are [`continuum_wire`]'s, which the gateway shares.
//!
//! Each variant has its own FIFO queue and batching thread ([`variant`]); admission refuses
//! what cannot meet its deadline ([`queue_state`], with the core's batch-start rule); load is measured per variant ([`load`]),
//! pushed to subscribed gateways over QUIC every Δ ms and exposed on `/metrics` ([`metrics`]).
//! Shutdown stops taking queries, answers those in flight, then closes.

#![warn(missing_docs)]
#![deny(unreachable_pub)]

pub mod config;
pub mod http;
pub mod inference;
pub mod load;
pub mod metrics;
pub mod profiler;
pub mod queue_state;
pub mod quic;
pub mod variant;

pub use config::{VariantConfig, WorkerConfig};
pub use load::{LoadReport, VariantLoad};
pub use variant::{Answer, InferRequest, QueryError, Variant};

use crate::inference::{Manifest, Model, backend};
use anyhow::{Context, Result};
use continuum_wire::tcp_tls::{ALPN_GRPC, ALPN_HTTP, TlsAcceptor};
use metrics::Metrics;
use rustls::pki_types::CertificateDer;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

/// State shared by the HTTP and QUIC front ends.
pub struct Inner {
    /// The worker's settings.
    pub cfg: WorkerConfig,
    /// Served variants by name.
    pub variants: BTreeMap<String, Arc<Variant>>,
    /// Prometheus metrics.
    pub metrics: Arc<Metrics>,
    started: Instant,
    shutting_down: AtomicBool,
    in_flight: AtomicUsize,
    idle: Notify,
    seq: AtomicU64,
    /// Last answered inference per variant, ms since the Unix epoch.
    last_inference_ms: BTreeMap<String, AtomicU64>,
}

/// Counts a query in flight for as long as it lives.
pub struct InFlight<'a>(&'a Inner);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

impl Inner {
    /// Marks a query in flight until the guard drops.
    pub fn in_flight(&self) -> InFlight<'_> {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight(self)
    }

    /// Whether shutdown has begun.
    pub fn is_shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::Acquire)
    }

    /// The variant of this name.
    pub fn variant(&self, name: &str) -> Result<&Arc<Variant>, QueryError> {
        self.variants
            .get(name)
            .ok_or_else(|| QueryError::NotFound(name.to_string()))
    }

    /// Runs one query on the named variant.
    pub async fn infer(&self, model: &str, req: InferRequest) -> Result<Answer, QueryError> {
        let v = self.variant(model)?;
        if self.is_shutting_down() {
            return Err(QueryError::Unavailable);
        }
        let _guard = self.in_flight();
        let r = v.infer(req).await;
        if let (Ok(_), Some(t)) = (&r, self.last_inference_ms.get(model)) {
            t.store(continuum_wire::oip_core::epoch_ms(), Ordering::Relaxed);
        }
        r
    }

    /// The load of every variant now (also refreshes the gauges of `/metrics`).
    pub fn report(&self) -> LoadReport {
        let now = Instant::now();
        LoadReport {
            worker: self.cfg.name.clone(),
            seq: self.seq.fetch_add(1, Ordering::Relaxed),
            uptime_ms: now.duration_since(self.started).as_millis() as u64,
            window_ms: self.cfg.load_window_ms,
            // Unloaded variants are left out: gateways stop binding to them.
            variants: self
                .variants
                .values()
                .filter(|v| v.is_loaded())
                .map(|v| v.load(now))
                .collect(),
        }
    }

    /// Unloads or loads variant `name` again (Triton's model-repository extension). A load
    /// reads the model from the models directory and warms it up before it takes queries.
    pub async fn set_loaded(
        &self,
        name: &str,
        load: bool,
    ) -> Result<(), continuum_wire::oip_core::OipError> {
        use hyper::StatusCode;
        let v = self
            .variant(name)
            .map_err(|_| continuum_wire::oip_core::OipError::unknown_model(name))?;
        if !load {
            v.close();
            tracing::info!(variant = %name, "variant unloaded");
            return Ok(());
        }
        if self.is_shutting_down() {
            return Err(continuum_wire::oip_core::OipError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "shutting down: no model is loaded",
            ));
        }
        if v.is_loaded() {
            return Ok(());
        }
        let vc = self
            .cfg
            .variants
            .iter()
            .find(|c| c.name == name)
            .cloned()
            .expect("every served variant has its config");
        let dir = self.cfg.models_dir.clone();
        let model = tokio::task::spawn_blocking(move || -> Result<Model> {
            let manifest = Manifest::load(&dir)?;
            let entry = manifest
                .model(&vc.model)
                .with_context(|| format!("unknown model `{}` in {}", vc.model, dir.display()))?;
            let mut model = Model::load(&manifest.path_of(entry), vc.threads, &entry.input)?;
            // Warm-up: the first run initialises the backend's lazy state.
            let zeros = vec![0.0f32; model.item_len()];
            model.run(1, &zeros).map_err(|e| anyhow::anyhow!("{e}"))?;
            Ok(model)
        })
        .await
        .map_err(|e| {
            continuum_wire::oip_core::OipError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                e.to_string(),
            )
        })?
        .map_err(|e| {
            continuum_wire::oip_core::OipError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("cannot load `{name}`: {e:#}"),
            )
        })?;
        v.reopen(model).map_err(|e| {
            continuum_wire::oip_core::OipError::new(StatusCode::INTERNAL_SERVER_ERROR, e)
        })?;
        tracing::info!(variant = %name, "variant loaded");
        Ok(())
    }
}

impl continuum_wire::oip_core::OipCore for Inner {
    fn server(&self) -> continuum_wire::oip_core::ServerInfo {
        continuum_wire::oip_core::ServerInfo {
            name: "continuum",
            version: env!("CARGO_PKG_VERSION"),
            extensions: continuum_wire::oip_core::EXTENSIONS,
        }
    }

    fn ready(&self) -> bool {
        !self.is_shutting_down()
    }

    fn models(&self) -> Vec<continuum_wire::oip_core::ModelInfo> {
        let platform = crate::inference::backend::current().map_or("onnx", |b| b.name());
        self.variants
            .values()
            .map(|v| continuum_wire::oip_core::ModelInfo {
                name: v.name.clone(),
                platform: platform.to_string(),
                input: v.input_name.clone(),
                output: v.output_name.clone(),
                item_shape: v.item_shape.clone(),
                output_item_shape: v.output_item_shape.clone(),
                max_batch: v.max_batch,
                ready: !self.is_shutting_down() && v.is_loaded(),
            })
            .collect()
    }

    fn stats(
        &self,
        name: Option<&str>,
    ) -> Result<Vec<continuum_wire::oip_core::ModelStats>, continuum_wire::oip_core::OipError> {
        if let Some(n) = name {
            self.variant(n)?;
        }
        let m = &self.metrics;
        Ok(self
            .variants
            .keys()
            .filter(|v| name.is_none_or(|n| n == v.as_str()))
            .map(|v| {
                let l = metrics::Metrics::label(v);
                let us = |f: &prometheus_client::metrics::family::Family<
                    metrics::ModelLabel,
                    prometheus_client::metrics::counter::Counter,
                >| f.get_or_create(&l).get();
                let (ok, queue, compute) = (us(&m.success), us(&m.queue_us), us(&m.compute_us));
                let dur = |count, us: u64| continuum_wire::oip_core::Duration {
                    count,
                    ns: us.saturating_mul(1000),
                };
                continuum_wire::oip_core::ModelStats {
                    name: v.clone(),
                    last_inference_ms: self
                        .last_inference_ms
                        .get(v)
                        .map_or(0, |t| t.load(Ordering::Relaxed)),
                    inference_count: us(&m.inference_count),
                    execution_count: us(&m.exec_count),
                    // Time in the server of a successful query: its queueing and its batch's
                    // compute (parsing and encoding are not timed).
                    success: dur(ok, queue.saturating_add(compute)),
                    fail: dur(us(&m.failure) + us(&m.rejected), 0),
                    queue: dur(ok, queue),
                    compute_infer: dur(us(&m.exec_count), compute),
                }
            })
            .collect())
    }

    async fn set_loaded(
        &self,
        name: &str,
        load: bool,
    ) -> Result<(), continuum_wire::oip_core::OipError> {
        Inner::set_loaded(self, name, load).await
    }

    async fn infer(
        &self,
        model: &str,
        mut req: continuum_wire::oip::ParsedInfer,
    ) -> Result<continuum_wire::oip_core::InferOutput, continuum_wire::oip_core::OipError> {
        let v = self.variant(model)?.clone();
        let ans = Inner::infer(
            self,
            model,
            InferRequest {
                shape: req.shape.clone(),
                data: std::mem::take(&mut req.data),
                deadline: req.deadline,
                stream: req.stream,
            },
        )
        .await?;
        let mut parameters = serde_json::Map::new();
        parameters.insert("queue_us".into(), ans.queue_us.into());
        parameters.insert("compute_us".into(), ans.compute_us.into());
        parameters.insert("batch_items".into(), ans.batch_items.into());
        Ok(continuum_wire::oip_core::InferOutput {
            model: v.name.clone(),
            id: req.id,
            output: v.output_name.clone(),
            shape: ans.output.shape,
            data: ans.output.data,
            parameters,
        })
    }
}

/// A running worker.
pub struct Worker {
    inner: Arc<Inner>,
    http_addr: SocketAddr,
    grpc_addr: Option<SocketAddr>,
    quic_addr: SocketAddr,
    certificate: CertificateDer<'static>,
    endpoint: quinn::Endpoint,
    /// TLS of the HTTP and the gRPC listener, when configured (reloaded by [`Worker::reload_tls`]).
    tls: Vec<(&'static str, TlsAcceptor)>,
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

/// Loads the models of `cfg` on the process backend (chosen here if not yet chosen).
pub fn load_variants(cfg: &WorkerConfig, metrics: &Arc<Metrics>) -> Result<Vec<Variant>> {
    let b = backend::init(cfg.backend)?;
    tracing::info!(backend = %b, "inference backend");
    let manifest = Manifest::load(&cfg.models_dir)?;
    let window = Duration::from_millis(cfg.load_window_ms);
    cfg.variants
        .iter()
        .map(|v| {
            let entry = manifest.model(&v.model).with_context(|| {
                format!(
                    "variant `{}`: unknown model `{}` in {}",
                    v.name,
                    v.model,
                    cfg.models_dir.display()
                )
            })?;
            let model = Model::load(&manifest.path_of(entry), v.threads, &entry.input)?;
            Variant::start(v, model, window, metrics.clone())
                .map_err(|e| anyhow::anyhow!("variant `{}`: {e}", v.name))
        })
        .collect()
}

impl Worker {
    /// Loads the variants, binds both endpoints and starts serving.
    pub async fn start(cfg: WorkerConfig) -> Result<Self> {
        cfg.validate().map_err(anyhow::Error::msg)?;
        let metrics = Arc::new(Metrics::new());
        let (c, m) = (cfg.clone(), metrics.clone());
        let variants = tokio::task::spawn_blocking(move || load_variants(&c, &m))
            .await
            .context("model loading panicked")??;
        let (endpoint, certificate) = continuum_wire::quic::bind(&cfg.quic)?;
        let listener = tokio::net::TcpListener::bind(cfg.http.listen)
            .await
            .with_context(|| format!("cannot bind HTTP on {}", cfg.http.listen))?;
        let http_addr = listener.local_addr()?;
        let quic_addr = endpoint.local_addr()?;
        let (grpc_listener, grpc_addr) = continuum_wire::grpc::bind(cfg.grpc.as_ref()).await?;
        let http_tls =
            TlsAcceptor::optional(cfg.http.tls.as_ref(), ALPN_HTTP).context("http.tls")?;
        let grpc_tls =
            TlsAcceptor::optional(cfg.grpc.as_ref().and_then(|g| g.tls.as_ref()), ALPN_GRPC)
                .context("grpc.tls")?;
        let tls = [("http", &http_tls), ("grpc", &grpc_tls)]
            .into_iter()
            .filter_map(|(k, a)| a.clone().map(|a| (k, a)))
            .collect();
        let last_inference_ms = variants
            .iter()
            .map(|v| (v.name.clone(), AtomicU64::new(0)))
            .collect();
        let inner = Arc::new(Inner {
            last_inference_ms,
            variants: variants
                .into_iter()
                .map(|v| (v.name.clone(), Arc::new(v)))
                .collect(),
            cfg,
            metrics,
            started: Instant::now(),
            shutting_down: AtomicBool::new(false),
            in_flight: AtomicUsize::new(0),
            idle: Notify::new(),
            seq: AtomicU64::new(0),
        });
        let (stop, stop_rx) = watch::channel(false);
        let mut tasks = vec![
            tokio::spawn(http::serve(
                listener,
                http_tls,
                inner.clone(),
                stop_rx.clone(),
            )),
            tokio::spawn(quic::serve(
                endpoint.clone(),
                inner.clone(),
                stop_rx.clone(),
            )),
        ];
        if let Some(l) = grpc_listener {
            let limits = inner.cfg.http.limits.clone();
            tasks.push(tokio::spawn(continuum_wire::grpc::serve(
                l,
                grpc_tls,
                inner.clone(),
                limits,
                stop_rx,
            )));
        }
        tracing::info!(worker = %inner.cfg.name, %http_addr, %quic_addr, grpc_addr = ?grpc_addr,
            variants = ?inner.variants.keys().collect::<Vec<_>>(), "worker serving");
        Ok(Self {
            inner,
            http_addr,
            grpc_addr,
            quic_addr,
            certificate,
            endpoint,
            tls,
            stop,
            tasks,
        })
    }

    /// Re-reads the certificate, key and client CA files of the HTTP and gRPC listeners (e.g.
    /// renewed in place; SIGHUP): new handshakes use them, open connections keep going. A
    /// listener whose files do not load keeps its certificate; the error names it.
    pub fn reload_tls(&self) -> Result<()> {
        let mut failed = Vec::new();
        for (section, a) in &self.tls {
            match a.reload() {
                Ok(()) => tracing::info!(listener = section, "TLS certificate reloaded"),
                Err(e) => failed.push(format!("{section}.tls: {e:#}")),
            }
        }
        match failed.is_empty() {
            true => Ok(()),
            false => anyhow::bail!("{}; the running certificate is kept", failed.join("; ")),
        }
    }

    /// Address of the HTTP endpoint.
    pub fn http_addr(&self) -> SocketAddr {
        self.http_addr
    }

    /// Address of the gRPC endpoint, when one is configured.
    pub fn grpc_addr(&self) -> Option<SocketAddr> {
        self.grpc_addr
    }

    /// Address of the QUIC endpoint.
    pub fn quic_addr(&self) -> SocketAddr {
        self.quic_addr
    }

    /// The leaf certificate the QUIC endpoint presents (trust it in development clients).
    pub fn certificate(&self) -> &CertificateDer<'static> {
        &self.certificate
    }

    /// Shared state: variants, metrics, load.
    pub fn inner(&self) -> &Arc<Inner> {
        &self.inner
    }

    /// Stops taking queries, waits (up to `shutdown_grace_ms`) for those in flight, then closes
    /// both endpoints.
    pub async fn shutdown(self) {
        let inner = &self.inner;
        inner.shutting_down.store(true, Ordering::Release);
        let _ = self.stop.send(true);
        let grace = Duration::from_millis(inner.cfg.shutdown_grace_ms);
        let wait_idle = async {
            loop {
                let notified = inner.idle.notified();
                if inner.in_flight.load(Ordering::Acquire) == 0 {
                    break;
                }
                notified.await;
            }
        };
        if tokio::time::timeout(grace, wait_idle).await.is_err() {
            tracing::warn!(
                left = inner.in_flight.load(Ordering::Acquire),
                "shutdown grace elapsed with queries in flight"
            );
        }
        for v in inner.variants.values() {
            v.close();
        }
        self.endpoint.close(0u32.into(), b"shutdown");
        let _ = tokio::time::timeout(Duration::from_secs(1), self.endpoint.wait_idle()).await;
        for t in self.tasks {
            let _ = tokio::time::timeout(Duration::from_secs(1), t).await;
        }
        tracing::info!("worker stopped");
    }
}

/// `continuum worker --config <path>`: serves until Ctrl-C or SIGTERM, then shuts down
/// gracefully.
pub fn run_from_file(path: &Path) -> Result<()> {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        // Colour codes only where a person reads them, not in a log file.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
    let cfg = WorkerConfig::load(path)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(async move {
        let worker = Worker::start(cfg).await?;
        wait_for_signal(&worker).await;
        tracing::info!("shutting down: finishing queries in flight");
        worker.shutdown().await;
        Ok(())
    })
}

/// Waits for Ctrl-C or SIGTERM; on every SIGHUP meanwhile, reloads the TLS certificates.
async fn wait_for_signal(worker: &Worker) {
    continuum_wire::signals::until_stopped(|| async {
        if let Err(e) = worker.reload_tls() {
            tracing::error!(error = %format!("{e:#}"), "TLS reload failed");
        }
    })
    .await;
}
