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
mod floor;
mod scrape;
mod workers;

pub use config::{AllocatorConfig, DEFAULT_FLOOR, GatewayTarget, WorkerTarget};
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
    /// Its task (the floor keeps variants per task and worker).
    task: continuum_core::profiles::TaskId,
    /// Its index among the scenario's candidate workers.
    candidate: usize,
    loaded: bool,
}

/// What one slot did.
#[derive(Debug, Clone, PartialEq)]
pub struct SlotReport {
    /// Demand per (scheduler, app) port, qps.
    pub demand_qps: Vec<f64>,
    /// OGASched's reward of the slot's allocation (0 while no worker is up).
    pub reward: f64,
    /// `(worker index, variant, loaded)` after the slot, for every variant of a worker that
    /// is up.
    pub state: Vec<(usize, String, bool)>,
    /// The loads (`+variant@cluster`) and unloads (`-variant@cluster`) it made.
    pub changes: Vec<String>,
    /// What went wrong or changed on the slice (a worker or gateway down or back up), one
    /// line each; the allocator goes on and retries every slot.
    pub events: Vec<String>,
}

/// A running allocator: the model, the allocator's state and what the live slice looks like.
/// A worker or gateway that does not answer is retried every slot: the allocator starts and
/// goes on without it.
pub struct LiveAllocator {
    cfg: AllocatorConfig,
    sc: Scenario,
    /// `None` while no worker is up (nothing can be deployed).
    placement: Option<Placement>,
    client: HttpClient,
    /// Scheduler index of each gateway.
    gateway_sched: Vec<usize>,
    /// Each gateway's counters at the last scrape that answered (`None` before the first).
    last: Vec<Option<AppCounters>>,
    last_at: Instant,
    /// Whether each worker answered its last call.
    up: Vec<bool>,
    /// The variants of the workers that are up.
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
    /// Loads the scenario and checks the gateways against it, then reads which variants each
    /// worker that answers serves and every gateway's counters (the first slot's baseline).
    /// A worker or gateway that does not answer yet is retried every slot.
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
        for (i, w) in cfg.workers.iter().enumerate() {
            if sc.topology.cluster_index(&w.cluster).is_none() {
                bail!(
                    "workers[{i}].cluster: no cluster `{}` in topology `{}`",
                    w.cluster,
                    sc.topology.name
                );
            }
        }
        let client: HttpClient = Client::builder(TokioExecutor::new()).build(HttpConnector::new());
        let mut me = Self {
            last: vec![None; cfg.gateways.len()],
            up: vec![false; cfg.workers.len()],
            cfg,
            sc,
            placement: None,
            client,
            gateway_sched,
            last_at: Instant::now(),
            served: Vec::new(),
        };
        let mut events = me.discover().await?;
        let (now, more) = me.scrape().await;
        events.extend(more);
        for e in &events {
            eprintln!("allocator: {e}");
        }
        me.last = now;
        me.last_at = Instant::now();
        Ok(me)
    }

    /// Reads the index of every worker that is down; those that answer join the model (which
    /// is built again, its allocator's state restarted). The events, one line each.
    async fn discover(&mut self) -> Result<Vec<String>> {
        let mut events = Vec::new();
        let mut joined = false;
        for i in 0..self.cfg.workers.len() {
            if self.up[i] {
                continue;
            }
            let w = &self.cfg.workers[i];
            match workers::index(&self.client, &self.sc, i, w, CALL_TIMEOUT).await {
                Ok(found) => {
                    self.served.retain(|s| s.worker != i);
                    self.served.extend(found);
                    self.up[i] = true;
                    joined = true;
                    events.push(format!("workers[{i}] {} ({}) up", w.url, w.cluster));
                }
                Err(workers::IndexError::Unreachable(e)) => {
                    events.push(format!(
                        "workers[{i}] {} ({}) down: {e:#}; retrying every slot",
                        w.url, w.cluster
                    ));
                }
                Err(workers::IndexError::Mismatch(e)) => return Err(e),
            }
        }
        if joined {
            self.rebuild()?;
        }
        Ok(events)
    }

    /// The model over the variants of the workers that are up.
    fn rebuild(&mut self) -> Result<()> {
        let mut allowed = vec![false; self.sc.topology.workers.len()];
        for s in self.served.iter().filter(|s| self.up[s.worker]) {
            allowed[s.candidate] = true;
        }
        self.placement = if allowed.iter().any(|&a| a) {
            Some(
                Placement::new(
                    &self.sc,
                    &self.cfg.allocator,
                    self.cfg.model,
                    self.cfg.horizon_slots,
                    Some(&allowed),
                )
                .map_err(|m| anyhow!("allocator: {m}"))?,
            )
        } else {
            None
        };
        Ok(())
    }

    /// Every gateway's counters (`None` for one that did not answer), and one event line per
    /// gateway that did not.
    async fn scrape(&self) -> (Vec<Option<AppCounters>>, Vec<String>) {
        let mut out = Vec::new();
        let mut events = Vec::new();
        for (i, g) in self.cfg.gateways.iter().enumerate() {
            match call(&self.client, Method::GET, &g.metrics, "", CALL_TIMEOUT).await {
                Ok((st, body)) if st.is_success() => {
                    out.push(Some(scrape::parse(&String::from_utf8_lossy(&body))));
                }
                Ok((st, _)) => {
                    events.push(format!(
                        "gateways[{i}] {}: {st}; its demand counts 0",
                        g.metrics
                    ));
                    out.push(None);
                }
                Err(e) => {
                    events.push(format!("gateways[{i}] down: {e:#}; its demand counts 0"));
                    out.push(None);
                }
            }
        }
        (out, events)
    }

    /// Demand per port from two scrapes `dt_s` apart (a gateway missing from either counts 0).
    fn demand(&self, now: &[Option<AppCounters>], dt_s: f64) -> Vec<f64> {
        let apps = &self.sc.workload.apps;
        let mut d = vec![0.0; self.sc.topology.schedulers.len() * apps.len()];
        for (g, (new, old)) in now.iter().zip(&self.last).enumerate() {
            let (Some(new), Some(old)) = (new, old) else {
                continue;
            };
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

    /// One slot: brings back workers that were down, reads the demand since the last slot,
    /// allocates, keeps the floor, and loads or unloads. A worker whose call fails is marked
    /// down (its variants leave the model) and retried next slot; only a configuration that
    /// does not match the slice is an error.
    pub async fn slot(&mut self) -> Result<SlotReport> {
        let mut events = self.discover().await?;
        let (now, more) = self.scrape().await;
        events.extend(more);
        let dt = self.last_at.elapsed().as_secs_f64();
        let demand = self.demand(&now, dt);
        for (last, new) in self.last.iter_mut().zip(now) {
            if new.is_some() {
                *last = new;
            }
        }
        self.last_at = Instant::now();
        let (reward, replicas) = match &mut self.placement {
            Some(p) => {
                let r = p.step(&self.sc, &demand);
                (p.rewards.last().copied().unwrap_or(0.0), r)
            }
            None => (0.0, vec![0; self.sc.topology.workers.len()]),
        };
        let mut want: Vec<bool> = self
            .served
            .iter()
            .map(|s| replicas[s.candidate] > 0)
            .collect();
        let groups: Vec<(usize, continuum_core::profiles::TaskId, bool)> = self
            .served
            .iter()
            .map(|s| (s.worker, s.task, s.loaded))
            .collect();
        floor::keep(&groups, &mut want, self.cfg.floor);
        let (changes, down) = self.apply(&want).await;
        let lost = !down.is_empty();
        for (i, e) in down {
            let w = &self.cfg.workers[i];
            events.push(format!(
                "workers[{i}] {} ({}) down: {e:#}; retrying every slot",
                w.url, w.cluster
            ));
            self.up[i] = false;
            self.served.retain(|s| s.worker != i);
        }
        if lost {
            self.rebuild()?;
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
            events,
        })
    }

    /// Loads or unloads every served variant whose state is not `want`; the changes made, and
    /// the workers whose call failed (each once, with the error).
    async fn apply(&mut self, want: &[bool]) -> (Vec<String>, Vec<(usize, anyhow::Error)>) {
        let mut changes = Vec::new();
        let mut down: Vec<(usize, anyhow::Error)> = Vec::new();
        for (sv, &want) in self.served.iter_mut().zip(want) {
            if want == sv.loaded || down.iter().any(|(w, _)| *w == sv.worker) {
                continue;
            }
            let w = &self.cfg.workers[sv.worker];
            let action = if want { "load" } else { "unload" };
            let url = format!("{}/v2/repository/models/{}/{action}", w.url, sv.variant);
            match call(&self.client, Method::POST, &url, "{}", LOAD_TIMEOUT).await {
                Ok((st, _)) if st.is_success() => {
                    sv.loaded = want;
                    changes.push(format!(
                        "{}{}@{}",
                        if want { '+' } else { '-' },
                        sv.variant,
                        w.cluster
                    ));
                }
                Ok((st, body)) => down.push((
                    sv.worker,
                    anyhow!("{url}: {st}: {}", String::from_utf8_lossy(&body)),
                )),
                Err(e) => down.push((sv.worker, e)),
            }
        }
        (changes, down)
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
        for e in &r.events {
            println!("slot {k}: {e}");
        }
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
