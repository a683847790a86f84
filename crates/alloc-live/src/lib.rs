//! `continuum allocator --config <file>`: the allocator above dispatch on a live slice. Every
//! slot it reads each gateway's demand (queries per application since the last slot, plus the
//! streams it refused as infeasible: their declared frame rates × the application's mean
//! duration), runs the same [`Placement`] as the simulator's `compare --allocators`, and
//! loads or unloads variants on the workers through the model-repository extension
//! (`POST /v2/repository/models/{m}/load|unload`). A live worker runs one session per variant,
//! so a variant with one replica or more is loaded and one with none is unloaded; the gateways
//! follow from the workers' load reports (an unloaded variant leaves them).

#![warn(missing_docs)]
#![deny(unreachable_pub)]

mod config;
mod scrape;

pub use config::{AllocatorConfig, GatewayTarget, WorkerTarget};
pub use scrape::AppCounters;

use anyhow::{Context, Result, anyhow, bail};
use bytes::Bytes;
use continuum_alloc::placement::Placement;
use continuum_core::profiles::Profiles;
use continuum_core::topology::Topology;
use continuum_core::workload::Workload;
use continuum_sim::Scenario;
use http_body_util::{BodyExt, Full};
use hyper::{Method, Request, StatusCode};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use std::time::{Duration, Instant};

type HttpClient = Client<HttpConnector, Full<Bytes>>;

/// How long one call to a gateway or worker may take; a load reads and warms a model, so it
/// gets longer. Assumptions: far above a loopback or LAN round trip, and above the seconds a
/// model load takes.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);
const LOAD_TIMEOUT: Duration = Duration::from_secs(120);

/// One variant a live worker serves, and where it sits in the model.
#[derive(Debug, Clone)]
struct Served {
    worker: usize,
    variant: String,
    /// Its index among the scenario's candidate workers.
    candidate: usize,
    loaded: bool,
}

/// What one slot did.
#[derive(Debug, Clone, PartialEq)]
pub struct SlotReport {
    /// Demand per (scheduler, app) port, qps.
    pub demand_qps: Vec<f64>,
    /// OGASched's reward of the slot's allocation.
    pub reward: f64,
    /// `(worker index, variant, loaded)` after the slot, for every served variant.
    pub state: Vec<(usize, String, bool)>,
    /// The loads (`+variant@cluster`) and unloads (`-variant@cluster`) it made.
    pub changes: Vec<String>,
}

/// A running allocator: the model, the allocator's state and what the live slice looks like.
pub struct LiveAllocator {
    cfg: AllocatorConfig,
    sc: Scenario,
    placement: Placement,
    client: HttpClient,
    /// Scheduler index of each gateway.
    gateway_sched: Vec<usize>,
    last: Vec<AppCounters>,
    last_at: Instant,
    served: Vec<Served>,
}

async fn call(
    client: &HttpClient,
    method: Method,
    url: &str,
    body: &str,
    timeout: Duration,
) -> Result<(StatusCode, Bytes)> {
    let req = Request::builder()
        .method(method)
        .uri(url)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .with_context(|| format!("bad URL {url}"))?;
    let resp = tokio::time::timeout(timeout, client.request(req))
        .await
        .map_err(|_| anyhow!("{url}: no answer within {timeout:?}"))?
        .with_context(|| format!("{url}: call failed"))?;
    let status = resp.status();
    let body = tokio::time::timeout(timeout, resp.into_body().collect())
        .await
        .map_err(|_| anyhow!("{url}: body not read within {timeout:?}"))?
        .with_context(|| format!("{url}: body failed"))?
        .to_bytes();
    Ok((status, body))
}

impl LiveAllocator {
    /// Loads the scenario, checks the gateways and workers against it, reads which variants
    /// each worker serves and every gateway's counters (the first slot's baseline).
    pub async fn connect(cfg: AllocatorConfig) -> Result<Self> {
        let profiles = Profiles::load(&cfg.profiles)?;
        let topology = Topology::load_candidates(&cfg.topology, &profiles)?;
        let workload = Workload::load(&cfg.workload, &profiles)?;
        let sc = Scenario::new(profiles, topology, workload);
        let gateway_sched = cfg
            .gateways
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let c = sc.topology.cluster_index(&g.scheduler);
                sc.topology
                    .schedulers
                    .iter()
                    .position(|s| Some(s.cluster) == c)
                    .ok_or_else(|| {
                        anyhow!(
                            "gateways[{i}].scheduler: `{}` is not a scheduler of topology `{}`",
                            g.scheduler,
                            sc.topology.name
                        )
                    })
            })
            .collect::<Result<Vec<_>>>()?;
        let client: HttpClient = Client::builder(TokioExecutor::new()).build(HttpConnector::new());
        let mut served = Vec::new();
        for (i, w) in cfg.workers.iter().enumerate() {
            let Some(c) = sc.topology.cluster_index(&w.cluster) else {
                bail!(
                    "workers[{i}].cluster: no cluster `{}` in topology `{}`",
                    w.cluster,
                    sc.topology.name
                );
            };
            let url = format!("{}/v2/repository/index", w.url);
            let (st, body) = call(&client, Method::POST, &url, "{}", CALL_TIMEOUT).await?;
            if !st.is_success() {
                bail!("{url}: {st}: {}", String::from_utf8_lossy(&body));
            }
            let index: serde_json::Value =
                serde_json::from_slice(&body).with_context(|| format!("{url}: not JSON"))?;
            for m in index.as_array().into_iter().flatten() {
                let name = m["name"].as_str().unwrap_or_default().to_string();
                let v = sc.profiles.variant_id(&name);
                let candidate = sc
                    .topology
                    .workers
                    .iter()
                    .position(|x| x.cluster == c && Some(x.variant) == v)
                    .ok_or_else(|| {
                        anyhow!(
                            "workers[{i}] ({}): variant `{name}` is not in the profiles or does not fit cluster `{}`",
                            w.url,
                            w.cluster
                        )
                    })?;
                served.push(Served {
                    worker: i,
                    variant: name,
                    candidate,
                    loaded: m["state"] == "READY",
                });
            }
        }
        // Only what the workers serve can be deployed.
        let mut allowed = vec![false; sc.topology.workers.len()];
        for s in &served {
            allowed[s.candidate] = true;
        }
        let placement = Placement::new(
            &sc,
            &cfg.allocator,
            cfg.model,
            cfg.horizon_slots,
            Some(&allowed),
        )
        .map_err(|m| anyhow!("allocator: {m}"))?;
        let mut me = Self {
            last: vec![AppCounters::default(); cfg.gateways.len()],
            cfg,
            sc,
            placement,
            client,
            gateway_sched,
            last_at: Instant::now(),
            served,
        };
        me.last = me.scrape().await?;
        me.last_at = Instant::now();
        Ok(me)
    }

    async fn scrape(&self) -> Result<Vec<AppCounters>> {
        let mut out = Vec::new();
        for g in &self.cfg.gateways {
            let (st, body) = call(&self.client, Method::GET, &g.metrics, "", CALL_TIMEOUT).await?;
            if !st.is_success() {
                bail!("{}: {st}", g.metrics);
            }
            out.push(scrape::parse(&String::from_utf8_lossy(&body)));
        }
        Ok(out)
    }

    /// Demand per port from two scrapes `dt_s` apart.
    fn demand(&self, now: &[AppCounters], dt_s: f64) -> Vec<f64> {
        let apps = &self.sc.workload.apps;
        let mut d = vec![0.0; self.sc.topology.schedulers.len() * apps.len()];
        for (g, (new, old)) in now.iter().zip(&self.last).enumerate() {
            let s = self.gateway_sched[g];
            for (a, app) in apps.iter().enumerate() {
                let delta =
                    |m: &std::collections::BTreeMap<String, f64>,
                     o: &std::collections::BTreeMap<String, f64>| {
                        let n = m.get(&app.name).copied().unwrap_or(0.0);
                        (n - o.get(&app.name).copied().unwrap_or(0.0)).max(0.0)
                    };
                let queries = delta(&new.queries, &old.queries);
                let refused = delta(&new.refused_qps, &old.refused_qps);
                d[s * apps.len() + a] +=
                    (queries + refused * app.duration_s.mean()) / dt_s.max(1e-3);
            }
        }
        d
    }

    /// One slot: reads the demand since the last one, allocates, and loads or unloads.
    pub async fn slot(&mut self) -> Result<SlotReport> {
        let now = self.scrape().await?;
        let dt = self.last_at.elapsed().as_secs_f64();
        let demand = self.demand(&now, dt);
        self.last = now;
        self.last_at = Instant::now();
        let replicas = self.placement.step(&self.sc, &demand);
        let reward = self.placement.rewards.last().copied().unwrap_or(0.0);
        let mut changes = Vec::new();
        for sv in &mut self.served {
            let want = replicas[sv.candidate] > 0;
            if want == sv.loaded {
                continue;
            }
            let w = &self.cfg.workers[sv.worker];
            let action = if want { "load" } else { "unload" };
            let url = format!("{}/v2/repository/models/{}/{action}", w.url, sv.variant);
            let (st, body) = call(&self.client, Method::POST, &url, "{}", LOAD_TIMEOUT).await?;
            if !st.is_success() {
                bail!("{url}: {st}: {}", String::from_utf8_lossy(&body));
            }
            sv.loaded = want;
            changes.push(format!(
                "{}{}@{}",
                if want { '+' } else { '-' },
                sv.variant,
                w.cluster
            ));
        }
        Ok(SlotReport {
            demand_qps: demand,
            reward,
            state: self
                .served
                .iter()
                .map(|s| (s.worker, s.variant.clone(), s.loaded))
                .collect(),
            changes,
        })
    }

    /// The settings.
    pub fn config(&self) -> &AllocatorConfig {
        &self.cfg
    }
}

/// Runs the allocator every slot, for `slots` slots (forever when `None`), printing one line
/// per slot.
pub async fn run(cfg: AllocatorConfig, slots: Option<u64>) -> Result<()> {
    let slot = Duration::from_secs_f64(cfg.slot_s);
    let mut a = LiveAllocator::connect(cfg).await?;
    let mut k = 0u64;
    while slots.is_none_or(|n| k < n) {
        tokio::time::sleep(slot).await;
        let r = a.slot().await?;
        let total: f64 = r.demand_qps.iter().sum();
        println!(
            "slot {k}: demand {total:.1} qps, reward {:.2}, {}",
            r.reward,
            if r.changes.is_empty() {
                "no change".to_string()
            } else {
                r.changes.join(" ")
            }
        );
        k += 1;
    }
    Ok(())
}

/// `continuum allocator --config <file> [--slots N]`.
pub fn run_from_file(path: &std::path::Path, slots: Option<u64>) -> Result<()> {
    let cfg = AllocatorConfig::load(path)?;
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("cannot start the runtime")?
        .block_on(run(cfg, slots))
}
