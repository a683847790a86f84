//! An allocator above dispatch: every slot, the demand observed per (scheduler, application)
//! becomes a deployment — replicas per variant per cluster — through one of the online
//! allocators of [`crate::alloc`] (OGASched and its baselines). Sans-IO: the caller measures the
//! demand and applies the replicas (the simulator with [`continuum_sim::Simulation::set_deployment`]).
//!
//! # The bipartite model in continuum
//!
//! - **Ports** l = (scheduler s, application a); **instances** r = clusters with compute;
//!   **resources** k = the capacity keys of the topology (cores, GPUs, memory), each counted in
//!   the [`Units`] of the run (default [`Units::Natural`]: cores, GPUs, GB, as OGASched counts
//!   them).
//! - **Links**: (l, r) when some variant on r can serve a's *representative stream* (the mean of
//!   every distribution of the class) from s: same task, accuracy ≥ its floor, and docs/model.md §5's
//!   latency bound within its deadline. The link's variant is the one with the most throughput
//!   per dominant share of the cluster ([`link_variant`]).
//! - **Requests**: a link needs the replicas of its variant that carry the port's observed
//!   demand with [`HEADROOM`]; a_l^k is the largest such need over the port's links (the
//!   paper's cap per link).
//! - **Demand** x_l: the port's offered queries per second in the last slot, over the mean of
//!   the ports with demand (a weight of mean 1, where the paper's x_l is 0 or 1).
//! - **Gains and overhead**: log utility α ln(y + 1) with α = [`ALPHA`] on every resource of
//!   every instance, β_k = [`BETA`] — assumptions at the low ends of OGASched's Table 2 ranges
//!   (α ∈ [1, 1.5], β ∈ [0.3, 0.5]).
//!
//! The fractional allocation becomes replicas by [`round::to_replicas`].

mod round;

use crate::alloc::{Allocation, Allocator, Gain, Problem, ProblemSpec, RewardScratch, Utility};
use continuum_core::feasibility::{Demand, latency_bound_ms};
use continuum_sim::Scenario;
use std::collections::BTreeSet;

/// Gain coefficient α of every resource (assumption: OGASched's Table 2 lower end).
pub const ALPHA: f64 = 1.0;
/// Communication overhead β_k of every resource (assumption: OGASched's Table 2 lower end).
pub const BETA: f64 = 0.3;
/// Replicas a link asks for over its observed demand (assumption: 25 % covers the demand's
/// growth within one slot and Poisson bursts at the loads of the shipped scenarios).
pub const HEADROOM: f64 = 1.25;
/// Default slot length, s (the default).
pub const DEFAULT_SLOT_S: f64 = 30.0;

/// What one unit of each resource is in the model (the log gain α ln(y + 1) less the overhead
/// β y stops rising at y = α/β − 1 units, so the unit decides how much of a resource a link
/// is worth having).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Units {
    /// The largest capacity of any cluster / (α/β − 1): a link's gain still rises when it
    /// holds a whole cluster, so what caps a link is its demand, not the utility's curve.
    Instance,
    /// The smallest positive need of one replica of any variant.
    Replica,
    /// The topology's own units (cores, GPUs, GB), as OGASched's setting counts them.
    #[default]
    Natural,
}

impl Units {
    /// Parses `instance`, `replica` or `natural`.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "instance" => Ok(Self::Instance),
            "replica" => Ok(Self::Replica),
            "natural" => Ok(Self::Natural),
            _ => Err(format!(
                "unknown unit `{s}`; expected instance, replica or natural"
            )),
        }
    }
}

/// How the model is set up.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ModelOptions {
    /// Units of the resources.
    pub units: Units,
    /// OGA's initial learning rate; `None`: [`Placement::step_size`]'s.
    pub eta0: Option<f64>,
}

/// One link of the model: which worker (cluster × variant) serves the port there.
#[derive(Debug, Clone, Copy)]
struct LinkInfo {
    port: usize,
    instance: usize,
    worker: usize,
    /// Offered qps of the port → replicas of the worker's variant that carry it.
    replicas_per_qps: f64,
}

/// The allocator of a run: the model built once from the scenario, the allocator's state and
/// the rewards of its slots.
pub struct Placement {
    allocator: Box<dyn Allocator>,
    apps: usize,
    /// Cluster of each instance.
    instances: Vec<usize>,
    /// Resource names, and the size of one unit of each.
    resources: Vec<(String, f64)>,
    links: Vec<LinkInfo>,
    spec: ProblemSpec,
    /// Per worker: its need of each resource for one replica, in units.
    replica_need: Vec<Vec<f64>>,
    y: Option<Allocation>,
    /// The replicas of the last slot.
    current: Option<Vec<u32>>,
    scratch: RewardScratch,
    /// OGASched's reward q(x, y) of each slot so far.
    pub rewards: Vec<f64>,
    /// The learning rate given to the allocator (used by OGA only).
    pub step: crate::alloc::StepSize,
}

/// The mean stream of application `app` opened at scheduler `s`.
fn representative(sc: &Scenario, app: usize) -> Demand {
    let a = &sc.workload.apps[app];
    let frame_kb = a.frame_kb.mean();
    Demand {
        task: a.task,
        rate_qps: a.rate_qps.mean(),
        frame_kb,
        tx_ms: frame_kb * 8.0 / a.uplink_mbps.mean(),
        access_ms: a.access_delay_ms.mean(),
        max_delay_ms: a.max_delay_ms.mean(),
        min_accuracy: a.min_accuracy.mean(),
        items: 1,
    }
}

/// The worker on cluster `cluster` that serves demand `d` from scheduler `s`: among those
/// of the right task and accuracy whose latency bound meets the deadline, the one whose
/// variant gives the most throughput per dominant share of the cluster's capacity (ties: the
/// lower worker index). `None` when no variant there can serve it.
fn link_variant(
    sc: &Scenario,
    s: usize,
    cluster: usize,
    d: &Demand,
    allowed: Option<&[bool]>,
) -> Option<usize> {
    let cap = &sc.topology.clusters[cluster].capacity;
    let mut best: Option<(usize, f64)> = None;
    for r in &sc.topology.schedulers[s].reach {
        if r.cluster as usize != cluster || allowed.is_some_and(|a| !a[r.worker as usize]) {
            continue;
        }
        let w = &sc.fleet.workers[r.worker as usize];
        let proc_ms = w.delay_ms(d.frame_kb);
        if w.task != d.task
            || w.accuracy < d.min_accuracy
            || latency_bound_ms(d, r, proc_ms) > d.max_delay_ms
        {
            continue;
        }
        let v = &sc.profiles.variants[w.variant as usize];
        let dominant = v
            .resources
            .iter()
            .map(|(k, x)| x / cap.get(k).copied().unwrap_or(0.0))
            .fold(0.0, f64::max);
        let value = v.capacity_qps / v.ref_kb / dominant;
        if best.is_none_or(|(_, b)| value > b) {
            best = Some((r.worker as usize, value));
        }
    }
    best.map(|(w, _)| w)
}

impl Placement {
    /// The model of `sc` (whose topology should hold candidate workers, see
    /// [`continuum_core::topology::Topology::load_candidates`]) driven by the allocator called `name`
    /// (one of [`crate::alloc::NAMES`]) over a run of `slots` slots. OGA's learning rate is
    /// `model.eta0`, else [`Self::step_size`]'s.
    /// `allowed` (one flag per worker of `sc`), when given, restricts the links to the workers
    /// that can be deployed (a live slice serves some variants only).
    pub fn new(
        sc: &Scenario,
        name: &str,
        model: ModelOptions,
        slots: u64,
        allowed: Option<&[bool]>,
    ) -> Result<Self, String> {
        let mut p = Self::build_among(
            sc,
            crate::alloc::by_name(name, crate::alloc::StepSize::PAPER)?,
            model.units,
            allowed,
        );
        let step = match model.eta0 {
            Some(eta0) => crate::alloc::StepSize::Geometric {
                eta0,
                decay: 0.9999,
            },
            None => p.step_size(slots),
        };
        step.validate()?;
        p.allocator = crate::alloc::by_name(name, step)?;
        p.step = step;
        Ok(p)
    }

    /// The learning rate of online gradient ascent over `slots` slots on this model: η0 =
    /// D / (G √T), the step of the classic regret bound (Zinkevich; OGASched's analysis has the
    /// same form), with D the diameter of the polytope (at most √(Σ_r Σ_k c_r^k²): an
    /// instance's links share its capacity), G a bound of the gradient's norm for demand
    /// weights x_l ≤ 1 ((α + β) per link and resource) and T = `slots`; decay as the paper's
    /// (0.9999). OGASched's own η0 = 25 is for its Table 2 scale and thousands of slots; a
    /// run of continuum has tens, in other units (see docs/allocation.md for both).
    pub fn step_size(&self, slots: u64) -> crate::alloc::StepSize {
        let d = self
            .spec
            .capacities
            .iter()
            .flatten()
            .map(|c| c * c)
            .sum::<f64>()
            .sqrt();
        let g = (ALPHA + BETA) * ((self.links.len() * self.resources.len()) as f64).sqrt();
        let t = slots.max(1) as f64;
        let eta0 = if d > 0.0 && g > 0.0 {
            d / (g * t.sqrt())
        } else {
            1.0
        };
        crate::alloc::StepSize::Geometric {
            eta0,
            decay: 0.9999,
        }
    }

    /// [`Self::new`] with an allocator of the caller's (its own learning rate).
    pub fn build(sc: &Scenario, allocator: Box<dyn Allocator>, units: Units) -> Self {
        Self::build_among(sc, allocator, units, None)
    }

    /// [`Self::build`] with links restricted to the `allowed` workers.
    fn build_among(
        sc: &Scenario,
        allocator: Box<dyn Allocator>,
        units: Units,
        allowed: Option<&[bool]>,
    ) -> Self {
        let t = &sc.topology;
        let names: BTreeSet<&String> = t.clusters.iter().flat_map(|c| c.capacity.keys()).collect();
        let resources: Vec<(String, f64)> = names
            .into_iter()
            .map(|k| {
                let unit = match units {
                    Units::Natural => 1.0,
                    Units::Replica => sc
                        .profiles
                        .variants
                        .iter()
                        .filter_map(|v| v.resources.get(k).copied())
                        .filter(|x| *x > 0.0)
                        .fold(f64::INFINITY, f64::min),
                    Units::Instance => {
                        t.clusters
                            .iter()
                            .filter_map(|c| c.capacity.get(k).copied())
                            .fold(0.0, f64::max)
                            / (ALPHA / BETA - 1.0)
                    }
                };
                (
                    k.clone(),
                    if unit.is_finite() && unit > 0.0 {
                        unit
                    } else {
                        1.0
                    },
                )
            })
            .collect();
        let hosting: BTreeSet<usize> = t.workers.iter().map(|w| w.cluster).collect();
        let instances: Vec<usize> = hosting.into_iter().collect();
        let apps = sc.workload.apps.len();
        let mut links = Vec::new();
        for s in 0..t.schedulers.len() {
            for a in 0..apps {
                let d = representative(sc, a);
                for (r, &c) in instances.iter().enumerate() {
                    if let Some(w) = link_variant(sc, s, c, &d, allowed) {
                        let v = &sc.profiles.variants[t.workers[w].variant];
                        let eta = d.frame_kb / v.ref_kb;
                        links.push(LinkInfo {
                            port: s * apps + a,
                            instance: r,
                            worker: w,
                            replicas_per_qps: eta / v.capacity_qps * HEADROOM,
                        });
                    }
                }
            }
        }
        // The model's link order (instance, then port), so link e of the problem is links[e].
        links.sort_by_key(|l| (l.instance, l.port));
        let need = |w: usize| -> Vec<f64> {
            let v = &sc.profiles.variants[t.workers[w].variant];
            resources
                .iter()
                .map(|(k, unit)| v.resources.get(k).copied().unwrap_or(0.0) / unit)
                .collect()
        };
        let replica_need = (0..t.workers.len()).map(need).collect();
        let spec = ProblemSpec {
            requests: vec![vec![0.0; resources.len()]; t.schedulers.len() * apps],
            capacities: instances
                .iter()
                .map(|&c| {
                    resources
                        .iter()
                        .map(|(k, unit)| {
                            t.clusters[c].capacity.get(k).copied().unwrap_or(0.0) / unit
                        })
                        .collect()
                })
                .collect(),
            links: links.iter().map(|l| (l.port, l.instance)).collect(),
            gains: vec![vec![Gain::new(Utility::Log, ALPHA); resources.len()]; instances.len()],
            betas: vec![BETA; resources.len()],
        };
        Self {
            allocator,
            apps,
            instances,
            resources,
            links,
            spec,
            replica_need,
            y: None,
            current: None,
            scratch: RewardScratch::default(),
            rewards: Vec::new(),
            step: crate::alloc::StepSize::PAPER,
        }
    }

    /// The allocator's name.
    pub fn allocator(&self) -> &'static str {
        self.allocator.name()
    }

    /// The resources of the model and the size of one unit of each.
    pub fn resources(&self) -> &[(String, f64)] {
        &self.resources
    }

    /// One slot: `offered_qps[s * apps + a]` is the offered queries per second of application
    /// `a` at scheduler `s` over the last slot. Returns the replicas of every worker of the
    /// scenario this was built from.
    pub fn step(&mut self, sc: &Scenario, offered_qps: &[f64]) -> Vec<u32> {
        let ports = self.spec.requests.len();
        assert_eq!(offered_qps.len(), ports, "one demand per (scheduler, app)");
        debug_assert_eq!(ports % self.apps, 0);
        // Requests: per port, the largest need over its links.
        for r in &mut self.spec.requests {
            r.fill(0.0);
        }
        for l in &self.links {
            let reps = offered_qps[l.port] * l.replicas_per_qps;
            for (k, n) in self.replica_need[l.worker].iter().enumerate() {
                let a = &mut self.spec.requests[l.port][k];
                *a = a.max(reps * n);
            }
        }
        let active: Vec<f64> = offered_qps.iter().copied().filter(|x| *x > 0.0).collect();
        let mean = active.iter().sum::<f64>() / active.len().max(1) as f64;
        let x: Vec<f64> = offered_qps
            .iter()
            .map(|q| if mean > 0.0 { q / mean } else { 0.0 })
            .collect();
        let p = Problem::new(&self.spec).expect("the model is built valid");
        let y = self.y.get_or_insert_with(|| Allocation::zeros(&p));
        self.allocator.allocate(&p, &x, y);
        self.rewards
            .push(crate::alloc::reward(&p, &x, y, &mut self.scratch));
        // Fractional replicas per worker, from each link's allocation.
        let mut frac = vec![0.0; sc.topology.workers.len()];
        for (e, (link, info)) in p.links().iter().zip(&self.links).enumerate() {
            debug_assert_eq!((link.port, link.instance), (info.port, info.instance));
            let need = &self.replica_need[info.worker];
            let reps = need
                .iter()
                .enumerate()
                .filter(|(_, n)| **n > 0.0)
                .map(|(k, n)| y.get(e, k) / n)
                .fold(f64::INFINITY, f64::min);
            let want = offered_qps[link.port] * info.replicas_per_qps;
            if reps.is_finite() {
                frac[info.worker] += reps.min(want);
            }
        }
        // Hysteresis: a worker within one replica of its target keeps what it has (changes
        // cost a load and re-bindings; fractional jitter between slots should not).
        if let Some(cur) = &self.current {
            for (f, c) in frac.iter_mut().zip(cur) {
                if *f > 0.0 && (*f - f64::from(*c)).abs() < 1.0 {
                    *f = f64::from(*c);
                }
            }
        }
        let out = round::to_replicas(sc, &self.instances, &frac);
        self.current = Some(out.clone());
        out
    }
}

#[cfg(test)]
mod tests;
