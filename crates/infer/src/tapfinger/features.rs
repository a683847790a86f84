//! The per-agent graph of a round (TapFinger's heterogeneous state), as plain numbers: the
//! agent's cluster node, the shortcut node (every cluster of the round), one node per pending
//! stream it may claim, per stream its feasible workers on the cluster (the allocation choices)
//! and the other clusters the stream is eligible at (its competitors). Every feature is a ratio
//! or a bounded transform, never an index or a count of the topology's clusters, so one
//! checkpoint serves any topology and any number of agents. Sans-IO: the simulator's rounds and
//! the gateway's are encoded alike.

use continuum_core::feasibility::{Candidate, Fleet, latency_bound_ms};
use continuum_core::pull::{AgentView, Round, demand_load};

/// Features of a cluster node.
pub const CLUSTER_FEATURES: usize = 5;
/// Features of a pending-stream node (every feature set: a [`TapFeatures::Base`] network reads
/// the first 10).
pub const PENDING_FEATURES: usize = 13;
/// Features of an allocation choice, one feasible worker of the agent's cluster (a
/// [`TapFeatures::Base`] network reads the first 6).
pub const WORKER_FEATURES: usize = 8;
/// Features of a competitor edge (another eligible cluster): its cluster node, the stream's
/// slack there and its share of the prior (and, read by a [`TapFeatures::Rules`] network only,
/// the copies of the demand it holds).
pub const EDGE_FEATURES: usize = CLUSTER_FEATURES + 3;
/// Features of a running-task node (read by a [`TapFeatures::Jobs`] network only).
pub const RUNNING_FEATURES: usize = 5;

/// Which features a network reads. Every observation carries all of them; the rules' features
/// come last in each node, so a network of the first set reads a prefix and computes exactly
/// what it did before they existed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TapFeatures {
    /// The first set (the shipped checkpoint's): ratios of slack, capacity, demand, waiting,
    /// accuracy and the share of eq. 11's prior.
    #[default]
    Base,
    /// The first set plus what the strong rules score (docs/model.md §6): per worker the copies
    /// of the demand its free capacity holds (`worker-headroom`) and whether it is the cluster's
    /// least-e2e choice; per stream the copies its cluster holds, the most any other eligible
    /// cluster holds and whether its cluster holds the most (`headroom`'s choice); per
    /// competitor the copies it holds.
    Rules,
    /// TapFinger's own problem (ML tasks on edge clusters, docs/jobs.md §10): cluster node =
    /// free CPU share, free GPU share, CPU capacity/16, GPU capacity/16, squashed queue length;
    /// pending task = minimum CPU/16, minimum GPU/16, one-hot kind (insensitive, sensitive),
    /// wait/16; allocation choice = CPU/16, GPU/16, CPU/free CPU, GPU/free GPU; competitor
    /// edge = the other cluster's node and its share of eq. 11's prior and copies; running
    /// task = CPU/16, GPU/16, one-hot kind, elapsed/16 (TapFinger §IV-B).
    Jobs,
}

impl TapFeatures {
    /// Features read per node: cluster, pending stream, worker, competitor edge.
    pub const fn widths(self) -> [usize; 4] {
        match self {
            Self::Base => [CLUSTER_FEATURES, 10, 6, CLUSTER_FEATURES + 2],
            Self::Rules => [
                CLUSTER_FEATURES,
                PENDING_FEATURES,
                WORKER_FEATURES,
                EDGE_FEATURES,
            ],
            Self::Jobs => [CLUSTER_FEATURES, 5, 4, CLUSTER_FEATURES + 2],
        }
    }

    /// Features read per running-task node: none (the network has no running-task nodes)
    /// but for [`TapFeatures::Jobs`].
    pub const fn running_width(self) -> usize {
        match self {
            Self::Base | Self::Rules => 0,
            Self::Jobs => RUNNING_FEATURES,
        }
    }

    /// Whether the pointer has a void choice. In TapFinger's own problem it has none: an agent
    /// claims while one of its pending tasks fits (Algorithm 1 goes on until each agent "gets
    /// one task to run ... or has an empty queue", §IV-D), and its void logit is masked as the
    /// padding is.
    pub const fn void(self) -> bool {
        !matches!(self, Self::Jobs)
    }
}

/// A count of copies as a bounded feature: ln(1 + copies) / 4 (1 at e⁴ − 1 ≈ 54 copies), at
/// most 2.
fn squash_copies(x: f64) -> f32 {
    ((1.0 + x.max(0.0)).ln() / 4.0).min(2.0) as f32
}

/// Most offers one agent's graph holds: its oldest pending streams, as TapFinger's pending queue
/// has a fixed size (assumption: 32, above the streams a cluster of the shipped topologies is
/// ever offered in one step at λ ≤ 100, so that the bound costs them nothing; it keeps a round's
/// cost linear in the number of agents on large topologies, see docs/tapfinger.md).
pub const MAX_OFFERS: usize = 32;
/// Most competitor edges per offer: the nearest other eligible clusters (assumption: 24, more than
/// the other clusters of any shipped topology, for the same reason).
pub const MAX_EDGES: usize = 24;

/// Agents per core below which a round's encoding and forwards stay on the calling thread
/// (assumption: a thread costs tens of µs to start, an agent's graph and forward a few µs per
/// offer; the shipped topologies' 16–40 clusters stay on one thread).
pub(crate) const AGENTS_PER_THREAD: usize = 48;

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
    /// The running tasks of its cluster (TapFinger's running-task nodes; empty in the streams
    /// problem).
    pub running: Vec<[f32; RUNNING_FEATURES]>,
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
    // Every cluster's node (an edge's first features), once per round.
    let all: Vec<[f32; CLUSTER_FEATURES]> = (0..offers.len())
        .map(|n| cluster_node(totals, n, offers[n], round.round))
        .collect();
    // Each offered stream's eligible clusters, once per round.
    let mut slot = vec![u32::MAX; all.len()];
    let mut eligible: Vec<Option<Eligible>> = vec![None; round.pending.len()];
    for a in round.agents {
        for o in a.offers.iter().take(MAX_OFFERS) {
            let j = o.pending as usize;
            eligible[j].get_or_insert_with(|| Eligible::of(round, j, &mut slot));
        }
    }
    let mut shortcut = [0f32; CLUSTER_FEATURES];
    for a in round.agents {
        for (s, v) in shortcut.iter_mut().zip(&all[a.cluster as usize]) {
            *s += v / round.agents.len() as f32;
        }
    }
    // Every agent's graph from those, split over the cores in a large round.
    crate::par::map(
        round.agents,
        AGENTS_PER_THREAD,
        || (),
        |a, _| {
            let n = a.offers.len().min(MAX_OFFERS);
            let mut obs = AgentObs {
                cluster: all[a.cluster as usize],
                shortcut,
                pending: Vec::with_capacity(n),
                workers: Vec::with_capacity(n),
                edges: Vec::with_capacity(n),
                running: Vec::new(),
            };
            for o in a.offers.iter().take(MAX_OFFERS) {
                let el = eligible[o.pending as usize]
                    .as_ref()
                    .expect("computed for every offer above");
                let (p, w, e) = encode_offer(round, totals, a, o, el, &all);
                obs.pending.push(p);
                obs.workers.push(w);
                obs.edges.push(e);
            }
            obs
        },
    )
}

type OfferFeatures = (
    [f32; PENDING_FEATURES],
    Vec<[f32; WORKER_FEATURES]>,
    Vec<[f32; EDGE_FEATURES]>,
);

/// A pending stream's eligible clusters, nearest first: each with the best slack of its
/// workers and its prior copies (eq. 11's Pr(n) before normalising,
/// [`continuum_core::pull::prior_copies`]), and their total; with what every agent offered the
/// stream asks of them, computed once (so that an offer costs no scan of the clusters).
#[derive(Debug, Clone)]
struct Eligible {
    clusters: Vec<(u32, f64, f64)>,
    total_prior: f64,
    /// (cluster, index in `clusters`), by cluster.
    by_cluster: Vec<(u32, u32)>,
    /// The slacks (NaN left out), largest first.
    slacks: Vec<f64>,
    /// The largest slack (at least 0) and the first cluster index holding it, if any; the
    /// largest of the others.
    best: (f64, Option<usize>, f64),
    /// The same for the copies.
    most: (f64, Option<usize>, f64),
}

/// The largest of `xs` (at least 0; NaN left out), the first index holding it if any, and the
/// largest of the others (at least 0).
fn top_two(xs: impl Iterator<Item = f64> + Clone) -> (f64, Option<usize>, f64) {
    let top = xs.clone().fold(0.0, f64::max);
    let at = xs.clone().position(|x| x == top);
    let second = xs
        .enumerate()
        .filter(|(i, _)| Some(*i) != at)
        .map(|(_, x)| x)
        .fold(0.0, f64::max);
    (top, at, second)
}

/// The largest of a top-two entry other than index `own` (at least 0).
fn top_else(t: (f64, Option<usize>, f64), own: usize) -> f64 {
    match t {
        (_, Some(at), second) if at == own => second,
        (top, _, _) => top,
    }
}

impl Eligible {
    /// One pass over the stream's candidates: per cluster the best slack and the sum of the
    /// copies (`prior_copies`, summed in the same order, so the same value).
    ///
    /// `slot` maps a cluster to its index in the list being built: `u32::MAX` for every
    /// cluster on entry and on return (one scratch vector for the whole round, so that a stream
    /// costs its candidates, not its candidates times its clusters).
    fn of(round: &Round, j: usize, slot: &mut [u32]) -> Self {
        let mut clusters: Vec<(u32, f64, f64)> = Vec::new();
        for c in &round.cands[j] {
            let s = slack(round, j, c);
            let at = &mut slot[c.cluster as usize];
            if *at == u32::MAX {
                *at = clusters.len() as u32;
                clusters.push((c.cluster, s, -0.0));
            }
            let x = &mut clusters[*at as usize];
            x.1 = x.1.max(s);
            x.2 += c.copies();
        }
        for x in &clusters {
            slot[x.0 as usize] = u32::MAX;
        }
        let total_prior = clusters.iter().map(|x| x.2).sum::<f64>().max(1e-9);
        Self::indexed(clusters, total_prior)
    }

    /// The stream's entry from its clusters (cluster, best slack, copies), nearest first.
    fn indexed(clusters: Vec<(u32, f64, f64)>, total_prior: f64) -> Self {
        let mut by_cluster: Vec<(u32, u32)> = clusters
            .iter()
            .enumerate()
            .map(|(i, x)| (x.0, i as u32))
            .collect();
        by_cluster.sort_unstable();
        let mut slacks: Vec<f64> = clusters
            .iter()
            .map(|x| x.1)
            .filter(|s| !s.is_nan())
            .collect();
        slacks.sort_unstable_by(|a, b| b.total_cmp(a));
        let best = top_two(clusters.iter().map(|x| x.1));
        let most = top_two(clusters.iter().map(|x| x.2));
        Self {
            clusters,
            total_prior,
            by_cluster,
            slacks,
            best,
            most,
        }
    }

    /// The entry of `cluster`.
    fn own(&self, cluster: u32) -> Option<(usize, (u32, f64, f64))> {
        let i = self
            .by_cluster
            .binary_search_by_key(&cluster, |x| x.0)
            .ok()?;
        let at = self.by_cluster[i].1 as usize;
        Some((at, self.clusters[at]))
    }

    /// The largest slack among the clusters other than index `own` (at least 0).
    fn best_else(&self, own: usize) -> f64 {
        top_else(self.best, own)
    }

    /// The most copies among the clusters other than index `own` (at least 0).
    fn most_else(&self, own: usize) -> f64 {
        top_else(self.most, own)
    }

    /// How many clusters have a larger slack than `slack`.
    fn better(&self, slack: f64) -> usize {
        self.slacks.partition_point(|&s| s > slack)
    }
}

fn encode_offer(
    round: &Round,
    totals: &ClusterTotals,
    a: &AgentView,
    o: &continuum_core::pull::Offer,
    el: &Eligible,
    nodes: &[[f32; CLUSTER_FEATURES]],
) -> OfferFeatures {
    let j = o.pending as usize;
    let p = &round.pending[j];
    let d = &p.demand;
    let cands = &round.cands[j];
    let (clusters, total_prior) = (&el.clusters, el.total_prior);
    let (own_at, own) = el
        .own(a.cluster)
        .expect("an offer has a candidate on its cluster");
    let best_else = el.best_else(own_at);
    let better = el.better(own.1);
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
        squash_copies(own.2),
        squash_copies(el.most_else(own_at)),
        f32::from(own.2 >= el.most_else(own_at)),
    ];
    let e2e_min = o
        .cands
        .iter()
        .map(|&kk| cands[kk as usize].e2e_ms)
        .fold(f64::INFINITY, f64::min);
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
                squash_copies(c.copies()),
                f32::from(c.e2e_ms <= e2e_min),
            ]
        })
        .collect();
    let edges = clusters
        .iter()
        .filter(|x| x.0 != a.cluster)
        .take(MAX_EDGES)
        .map(|&(m, s, prior)| {
            let node = nodes[m as usize];
            let mut e = [0f32; EDGE_FEATURES];
            e[..CLUSTER_FEATURES].copy_from_slice(&node);
            e[CLUSTER_FEATURES] = s as f32;
            e[CLUSTER_FEATURES + 1] = (prior / total_prior) as f32;
            e[CLUSTER_FEATURES + 2] = squash_copies(prior);
            e
        })
        .collect();
    (pending, workers, edges)
}

/// A uniform draw in ±2 for every feature of a node.
fn random_node<const N: usize>(rng: &mut continuum_core::rng::SimRng) -> [f32; N] {
    use rand::Rng;
    std::array::from_fn(|_| rng.random_range(-2.0..2.0))
}

/// A random agent graph, for tests and benchmarks of the forwards: 1–7 offers, 1–5 workers and
/// 0–6 competitors each, every feature uniform in ±2, no running task.
pub fn random_obs(rng: &mut continuum_core::rng::SimRng) -> AgentObs {
    use rand::Rng;
    let p = rng.random_range(1..8);
    AgentObs {
        cluster: random_node::<CLUSTER_FEATURES>(rng),
        shortcut: random_node::<CLUSTER_FEATURES>(rng),
        pending: (0..p)
            .map(|_| random_node::<PENDING_FEATURES>(rng))
            .collect(),
        workers: (0..p)
            .map(|_| {
                (0..rng.random_range(1..6))
                    .map(|_| random_node::<WORKER_FEATURES>(rng))
                    .collect()
            })
            .collect(),
        edges: (0..p)
            .map(|_| {
                (0..rng.random_range(0..7))
                    .map(|_| random_node::<EDGE_FEATURES>(rng))
                    .collect()
            })
            .collect(),
        running: Vec::new(),
    }
}

/// A random agent graph of the [`TapFeatures::Jobs`] set, for tests and benchmarks of the
/// forwards: [`random_obs`]'s graph with the features a Jobs network does not read zeroed, and
/// 0–6 running tasks, every feature uniform in ±2.
pub fn random_jobs_obs(rng: &mut continuum_core::rng::SimRng) -> AgentObs {
    use rand::Rng;
    fn keep<const N: usize>(nodes: &mut [[f32; N]], width: usize) {
        nodes.iter_mut().for_each(|x| x[width..].fill(0.0));
    }
    let mut o = random_obs(rng);
    let [_, fp, fw, fe] = TapFeatures::Jobs.widths();
    keep(&mut o.pending, fp);
    o.workers.iter_mut().for_each(|ws| keep(ws, fw));
    o.edges.iter_mut().for_each(|es| keep(es, fe));
    o.running = (0..rng.random_range(0..7))
        .map(|_| random_node::<RUNNING_FEATURES>(rng))
        .collect();
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use continuum_core::rng::{Purpose, stream_rng};
    use rand::Rng;

    /// Per agent, the indexed answers equal the scans they replace: the agent's own entry, the
    /// best slack elsewhere (0 when alone) and how many clusters have more slack — on random
    /// lists with ties and a lone cluster.
    #[test]
    fn indexed_lookups_equal_the_scans() {
        let mut rng = stream_rng(3, Purpose::Other, 0, 0);
        for _ in 0..200 {
            let n = rng.random_range(1..12);
            let mut ids: Vec<u32> = (0..40).collect();
            let clusters: Vec<(u32, f64, f64)> = (0..n)
                .map(|_| {
                    let id = ids.swap_remove(rng.random_range(0..ids.len()));
                    // Few distinct values, so that ties are common.
                    let s = f64::from(rng.random_range(0..4u8)) / 4.0;
                    (id, s, 1.0)
                })
                .collect();
            let el = Eligible::indexed(clusters.clone(), n as f64);
            for (i, c) in clusters.iter().enumerate() {
                let (at, own) = el.own(c.0).expect("listed");
                assert_eq!((at, own), (i, *c));
                let best_else = clusters
                    .iter()
                    .filter(|x| x.0 != c.0)
                    .map(|x| x.1)
                    .fold(0.0, f64::max);
                assert_eq!(el.best_else(at), best_else);
                let better = clusters.iter().filter(|x| x.1 > c.1).count();
                assert_eq!(el.better(c.1), better);
            }
            assert!(el.own(99).is_none());
        }
    }
}
