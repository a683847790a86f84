//! The per-agent graph of a round (TapFinger's heterogeneous state), as plain numbers: the
//! agent's cluster node, the shortcut node (every cluster of the round), one node per pending
//! stream it may claim, per stream its feasible workers on the cluster (the allocation choices)
//! and the other clusters the stream is eligible at (its competitors). Every feature is a ratio
//! or a bounded transform, never an index or a count of the topology's clusters, so one
//! checkpoint serves any topology and any number of agents. Sans-IO: the simulator's rounds and
//! the gateway's are encoded alike.

use continuum_core::feasibility::{Candidate, Fleet, latency_bound_ms};
use continuum_core::pull::{AgentView, Round, demand_load, prior_copies};

/// Features of a cluster node.
pub const CLUSTER_FEATURES: usize = 5;
/// Features of a pending-stream node.
pub const PENDING_FEATURES: usize = 10;
/// Features of an allocation choice (one feasible worker of the agent's cluster).
pub const WORKER_FEATURES: usize = 6;
/// Features of a competitor edge (another eligible cluster): its cluster node, the stream's
/// slack there and its share of the prior.
pub const EDGE_FEATURES: usize = CLUSTER_FEATURES + 2;

/// Most offers one agent's graph holds: its oldest pending streams, as TapFinger's pending queue
/// has a fixed size (assumption: 32, above the streams a cluster of the shipped topologies is
/// ever offered in one step at λ ≤ 100, so that the bound costs them nothing; it keeps a round's
/// cost linear in the number of agents on large topologies, see docs/tapfinger.md).
pub const MAX_OFFERS: usize = 32;
/// Most competitor edges per offer: the nearest other eligible clusters (assumption: 24, more than
/// the other clusters of any shipped topology, for the same reason).
pub const MAX_EDGES: usize = 24;

/// One agent's observation in one round.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentObs {
    /// Its cluster node.
    pub cluster: [f32; CLUSTER_FEATURES],
    /// The shortcut node: the mean cluster node of the round's agents.
    pub shortcut: [f32; CLUSTER_FEATURES],
    /// Per offer (pending stream), its node.
    pub pending: Vec<[f32; PENDING_FEATURES]>,
    /// Per offer, its allocation choices (in the offer's candidate order).
    pub workers: Vec<Vec<[f32; WORKER_FEATURES]>>,
    /// Per offer, its competitor edges.
    pub edges: Vec<Vec<[f32; EDGE_FEATURES]>>,
}

/// Per-cluster totals of a view, for cluster nodes.
#[derive(Debug, Clone, Default)]
pub struct ClusterTotals {
    capacity: Vec<f64>,
    free: Vec<f64>,
    streams: Vec<f64>,
}

impl ClusterTotals {
    /// Capacity, free capacity and bound streams of every cluster in `round`'s view.
    pub fn of(round: &Round, clusters: usize) -> Self {
        let mut t = Self {
            capacity: vec![0.0; clusters],
            free: vec![0.0; clusters],
            streams: vec![0.0; clusters],
        };
        fill(&mut t, round.fleet, round.view);
        t
    }
}

fn fill(t: &mut ClusterTotals, fleet: &Fleet, view: &continuum_core::load::LoadView) {
    for (w, seen) in fleet.workers.iter().zip(&view.workers) {
        let c = w.cluster as usize;
        if c >= t.capacity.len() {
            continue;
        }
        t.capacity[c] += w.capacity_qps;
        t.free[c] += (w.capacity_qps - seen.load_qps).max(0.0);
        t.streams[c] += f64::from(seen.streams);
    }
}

/// Slack of a binding: the share of the deadline left by the latency bound (docs/model.md §5).
fn slack(round: &Round, j: usize, c: &Candidate) -> f64 {
    let d = &round.pending[j].demand;
    let proc_ms = c.e2e_ms - 2.0 * c.net_ms;
    let reach = continuum_core::topology::Reach {
        worker: c.worker,
        cluster: c.cluster,
        variant: c.variant,
        d_ms: c.net_ms,
        sigma_ms: 0.0,
    };
    ((d.max_delay_ms - latency_bound_ms(d, &reach, proc_ms)) / d.max_delay_ms).clamp(0.0, 1.0)
}

fn cluster_node(t: &ClusterTotals, n: usize, offers: usize, round: u32) -> [f32; 5] {
    let cap = t.capacity[n].max(1e-9);
    [
        (t.free[n] / cap) as f32,
        ((1.0 + t.capacity[n]).ln() / 8.0) as f32,
        (t.streams[n] / (10.0 + t.streams[n])) as f32,
        (offers as f64 / (4.0 + offers as f64)) as f32,
        (f64::from(round) / (2.0 + f64::from(round))) as f32,
    ]
}

/// The observation of every agent of `round`, in agent order.
pub fn encode(round: &Round, totals: &ClusterTotals) -> Vec<AgentObs> {
    // Computed once per round and shared by every agent that sees them: each cluster's offers
    // and each stream's eligible clusters.
    let mut offers = vec![0usize; totals.capacity.len()];
    for a in round.agents {
        if let Some(x) = offers.get_mut(a.cluster as usize) {
            *x = a.offers.len();
        }
    }
    let offers_at = |n: u32| offers.get(n as usize).copied().unwrap_or(0);
    let mut eligible: Vec<Option<Eligible>> = vec![None; round.pending.len()];
    let nodes: Vec<[f32; CLUSTER_FEATURES]> = round
        .agents
        .iter()
        .map(|a| cluster_node(totals, a.cluster as usize, a.offers.len(), round.round))
        .collect();
    let mut shortcut = [0f32; CLUSTER_FEATURES];
    for x in &nodes {
        for (s, v) in shortcut.iter_mut().zip(x) {
            *s += v / nodes.len() as f32;
        }
    }
    round
        .agents
        .iter()
        .zip(&nodes)
        .map(|(a, node)| {
            let mut obs = AgentObs {
                cluster: *node,
                shortcut,
                ..Default::default()
            };
            for o in a.offers.iter().take(MAX_OFFERS) {
                let j = o.pending as usize;
                let el = eligible[j].get_or_insert_with(|| Eligible::of(round, j));
                let (p, w, e) = encode_offer(round, totals, a, o, el, &offers_at);
                obs.pending.push(p);
                obs.workers.push(w);
                obs.edges.push(e);
            }
            obs
        })
        .collect()
}

type OfferFeatures = (
    [f32; PENDING_FEATURES],
    Vec<[f32; WORKER_FEATURES]>,
    Vec<[f32; EDGE_FEATURES]>,
);

/// A pending stream's eligible clusters, nearest first: each with the best slack of its
/// workers and its prior copies (eq. 11's Pr(n) before normalising), and their total.
#[derive(Debug, Clone)]
struct Eligible {
    clusters: Vec<(u32, f64, f64)>,
    total_prior: f64,
}

impl Eligible {
    fn of(round: &Round, j: usize) -> Self {
        let mut clusters: Vec<(u32, f64, f64)> = Vec::new();
        for c in &round.cands[j] {
            let s = slack(round, j, c);
            match clusters.iter_mut().find(|x| x.0 == c.cluster) {
                Some(x) => x.1 = x.1.max(s),
                None => clusters.push((c.cluster, s, prior_copies(round, j, c.cluster))),
            }
        }
        let total_prior = clusters.iter().map(|x| x.2).sum::<f64>().max(1e-9);
        Self {
            clusters,
            total_prior,
        }
    }
}

fn encode_offer(
    round: &Round,
    totals: &ClusterTotals,
    a: &AgentView,
    o: &continuum_core::pull::Offer,
    el: &Eligible,
    offers_at: &dyn Fn(u32) -> usize,
) -> OfferFeatures {
    let j = o.pending as usize;
    let p = &round.pending[j];
    let d = &p.demand;
    let cands = &round.cands[j];
    let (clusters, total_prior) = (&el.clusters, el.total_prior);
    let own = *clusters
        .iter()
        .find(|x| x.0 == a.cluster)
        .expect("an offer has a candidate on its cluster");
    let best_else = clusters
        .iter()
        .filter(|x| x.0 != a.cluster)
        .map(|x| x.1)
        .fold(0.0, f64::max);
    let better = clusters.iter().filter(|x| x.1 > own.1).count();
    let n = a.cluster as usize;
    let need_min = o
        .cands
        .iter()
        .map(|&k| demand_load(d, round.fleet, &cands[k as usize]))
        .fold(f64::INFINITY, f64::min);
    let k = clusters.len() as f64;
    let pending = [
        (need_min / totals.capacity[n].max(1e-9)).min(2.0) as f32,
        (d.max_delay_ms / 1000.0).min(2.0) as f32,
        own.1 as f32,
        best_else as f32,
        (1.0 / k) as f32,
        f32::from(clusters.len() == 1),
        (f64::from(p.waited) / (1.0 + f64::from(p.waited))) as f32,
        d.min_accuracy as f32,
        (own.2 / total_prior) as f32,
        (better as f64 / k) as f32,
    ];
    let workers = o
        .cands
        .iter()
        .map(|&kk| {
            let c = &cands[kk as usize];
            let w = &round.fleet.workers[c.worker as usize];
            let need = demand_load(d, round.fleet, c);
            let cap = c.capacity_qps.max(1e-9);
            [
                slack(round, j, c) as f32,
                ((cap - c.load_qps - need) / cap).clamp(-1.0, 1.0) as f32,
                (w.accuracy - d.min_accuracy) as f32,
                (c.e2e_ms / d.max_delay_ms).min(2.0) as f32,
                (need / cap).min(2.0) as f32,
                (f64::from(w.batch).log2() / 4.0) as f32,
            ]
        })
        .collect();
    let edges = clusters
        .iter()
        .filter(|x| x.0 != a.cluster)
        .take(MAX_EDGES)
        .map(|&(m, s, prior)| {
            let node = cluster_node(totals, m as usize, offers_at(m), round.round);
            let mut e = [0f32; EDGE_FEATURES];
            e[..CLUSTER_FEATURES].copy_from_slice(&node);
            e[CLUSTER_FEATURES] = s as f32;
            e[CLUSTER_FEATURES + 1] = (prior / total_prior) as f32;
            e
        })
        .collect();
    (pending, workers, edges)
}
