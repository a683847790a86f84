//! The topology-free state (docs/model.md §9.9, `state: situation`): one short vector per
//! scheduler and demand bucket that says, in terms every network has, what that bucket's streams
//! face at that scheduler — their demand against the free capacity of the sites their deadline
//! allows, how far inside the deadline those sites are, how busy the near and the far ones are,
//! and where the load is going. No antenna, cluster or worker identity and no count of them
//! enters it, so one network serves every topology; a class is its demand bucket, so unseen
//! application names need nothing either.
//!
//! A site is *within* a bucket's deadline D when its estimated answer time — the round trip
//! 2 (d + 2σ) plus one batch-of-one service at the variant's reference input — is at most D; it is
//! *near* when that estimate is at most D / 2 (assumption: half the deadline, the room a site
//! needs for queueing). D is the bucket's upper deadline edge (the open last bucket: twice the
//! last edge).

use super::config::DqnConfig;
use continuum_core::feasibility::Fleet;
use continuum_core::observe::WindowObservation;
use continuum_core::topology::Topology;

/// Largest value a feature may take (outliers are clipped); the smallest is −1.
const CLIP: f32 = 4.0;

/// Static features per (scheduler, bucket): what the topology offers the bucket.
const STATIC: usize = 6;
/// Dynamic features per (scheduler, bucket): what the last window showed.
const DYNAMIC: usize = 11;

/// The sites one (scheduler, bucket) pair may use, and their static description.
#[derive(Debug, Clone, Default)]
struct Pair {
    /// Workers within the deadline.
    within: Vec<u32>,
    /// Workers within half of it.
    near: Vec<u32>,
    cap_within: f64,
    cap_near: f64,
    statics: [f32; STATIC],
}

/// Encodes window observations into per-(scheduler, bucket) states of
/// [`SituationEncoder::features`] values.
#[derive(Debug, Clone)]
pub struct SituationEncoder {
    /// `pairs[s * buckets + b]`.
    pairs: Vec<Pair>,
    /// Per scheduler, every reachable worker.
    reach: Vec<Vec<u32>>,
    cap_reach: Vec<f64>,
    capacity: Vec<f64>,
    total_capacity: f64,
    buckets: usize,
    stream_ref: f64,
    /// Per (scheduler, bucket), the last window's dynamic features.
    dynamic: Vec<[f32; DYNAMIC]>,
    /// Per (scheduler, bucket), the last window's incoming queries per second.
    incoming: Vec<f64>,
    /// Per scheduler, its incoming queries per second in the last two windows (older first).
    totals: Vec<[f64; 2]>,
}

fn clip(x: f64) -> f32 {
    (x as f32).clamp(-1.0, CLIP)
}

/// `num / den`, 0 when there is no denominator.
fn ratio(num: f64, den: f64) -> f64 {
    if den > 1e-9 { num / den } else { 0.0 }
}

impl SituationEncoder {
    /// Features per state: the static and dynamic ones, then a one-hot of the bucket.
    pub fn features_for(cfg: &DqnConfig) -> usize {
        STATIC + DYNAMIC + cfg.buckets.len()
    }

    /// An encoder for `topology` with `cfg`'s demand buckets.
    pub fn new(topology: &Topology, fleet: &Fleet, cfg: &DqnConfig) -> Self {
        let edges = &cfg.buckets.delay_edges_ms;
        let rates = cfg.buckets.rate_edges_qps.len() + 1;
        let buckets = cfg.buckets.len();
        let deadline = |b: usize| {
            let d = b / rates;
            edges
                .get(d)
                .copied()
                .unwrap_or_else(|| 2.0 * edges.last().copied().unwrap_or(500.0))
        };
        let capacity: Vec<f64> = fleet.workers.iter().map(|w| w.capacity_qps).collect();
        let mut pairs = Vec::with_capacity(topology.schedulers.len() * buckets);
        let mut reach = Vec::with_capacity(topology.schedulers.len());
        let mut cap_reach = Vec::with_capacity(topology.schedulers.len());
        for s in &topology.schedulers {
            let est: Vec<(u32, f64)> = s
                .reach
                .iter()
                .map(|r| {
                    let w = &fleet.workers[r.worker as usize];
                    (
                        r.worker,
                        2.0 * r.net_ms() + w.base_ms + w.per_kb_ms * w.ref_kb,
                    )
                })
                .collect();
            let all: f64 = est.iter().map(|(w, _)| capacity[*w as usize]).sum();
            for b in 0..buckets {
                pairs.push(Self::pair(&est, &capacity, all, deadline(b)));
            }
            reach.push(est.iter().map(|(w, _)| *w).collect());
            cap_reach.push(all);
        }
        let n = pairs.len();
        Self {
            pairs,
            reach,
            cap_reach,
            total_capacity: capacity.iter().sum(),
            capacity,
            buckets,
            stream_ref: cfg.stream_rate_ref_qps,
            dynamic: vec![[0.0; DYNAMIC]; n],
            incoming: vec![0.0; n],
            totals: vec![[0.0; 2]; topology.schedulers.len()],
        }
    }

    /// The sites of a bucket of deadline `d_ms` among `est` (worker, estimated answer ms).
    fn pair(est: &[(u32, f64)], capacity: &[f64], cap_all: f64, d_ms: f64) -> Pair {
        let mut p = Pair::default();
        let (mut n, mut min_est, mut weighted) = (0usize, f64::INFINITY, 0.0);
        for &(w, e) in est {
            let c = capacity[w as usize];
            if e <= d_ms {
                p.within.push(w);
                p.cap_within += c;
                n += 1;
                min_est = min_est.min(e);
                weighted += c * e;
            }
            if e <= d_ms / 2.0 {
                p.near.push(w);
                p.cap_near += c;
            }
        }
        let mean_est = ratio(weighted, p.cap_within);
        p.statics = [
            clip(ratio(p.cap_near, p.cap_within)),
            clip((1.0 + n as f64).log2() / 8.0),
            clip(if n > 0 { (d_ms - min_est) / d_ms } else { -1.0 }),
            clip(if n > 0 {
                (d_ms - mean_est) / d_ms
            } else {
                -1.0
            }),
            clip(ratio(p.cap_within, cap_all)),
            clip((d_ms / 100.0).log2() / 4.0),
        ];
        p
    }

    /// Features per state.
    pub fn features(&self) -> usize {
        STATIC + DYNAMIC + self.buckets
    }

    /// Number of schedulers.
    pub fn schedulers(&self) -> usize {
        self.reach.len()
    }

    /// Number of demand buckets (the classes).
    pub fn buckets(&self) -> usize {
        self.buckets
    }

    /// Scheduler `s`'s incoming queries per second in bucket `b` in the last window.
    pub fn incoming(&self, s: usize, b: usize) -> f64 {
        self.incoming[s * self.buckets + b]
    }

    /// Scheduler `s`'s incoming queries per second in the last window.
    pub fn incoming_qps(&self, s: usize) -> f64 {
        self.totals[s][1]
    }

    /// Adds a window's observation.
    pub fn push(&mut self, obs: &WindowObservation) {
        let util = |ws: &[u32], f: &dyn Fn(usize) -> f64, cap: f64| {
            ratio(ws.iter().map(|&w| f(w as usize)).sum(), cap)
        };
        let load = |w: usize| obs.loads[w].load_qps;
        let served = |w: usize| obs.loads[w].throughput_qps;
        let streams = |w: usize| f64::from(obs.loads[w].streams) * self.stream_ref;
        let system_in: f64 = obs.incoming_qps.iter().sum();
        let system = ratio(system_in, self.total_capacity);
        for s in 0..self.schedulers() {
            let inc = obs.incoming(s);
            let total: f64 = inc.iter().sum();
            self.totals[s] = [self.totals[s][1], total];
            let trend = ratio(total, self.totals[s][0]) - 1.0;
            let reach_util = util(&self.reach[s], &load, self.cap_reach[s]);
            for (b, &q) in inc.iter().enumerate() {
                let i = s * self.buckets + b;
                let p = &self.pairs[i];
                let hot = p
                    .within
                    .iter()
                    .map(|&w| ratio(load(w as usize), self.capacity[w as usize]))
                    .fold(0.0, f64::max);
                self.incoming[i] = q;
                self.dynamic[i] = [
                    clip(ratio(q, p.cap_within)),
                    clip(ratio(total, p.cap_within)),
                    clip(util(&p.within, &load, p.cap_within)),
                    clip(util(&p.near, &load, p.cap_near)),
                    clip(reach_util),
                    clip(util(&p.within, &served, p.cap_within)),
                    clip(util(&p.within, &streams, p.cap_within)),
                    clip(ratio(q, total)),
                    clip(if self.totals[s][0] > 0.0 { trend } else { 0.0 }),
                    clip(system),
                    clip(hot),
                ];
            }
        }
    }

    /// Writes the state of scheduler `s` and bucket `b` into `out` (cleared first).
    pub fn state_into(&self, s: usize, b: usize, out: &mut Vec<f32>) {
        let i = s * self.buckets + b;
        out.clear();
        out.extend_from_slice(&self.pairs[i].statics);
        out.extend_from_slice(&self.dynamic[i]);
        out.extend((0..self.buckets).map(|k| if k == b { 1.0 } else { 0.0 }));
    }

    /// The state of scheduler `s` and bucket `b` as a new vector.
    pub fn state(&self, s: usize, b: usize) -> Vec<f32> {
        let mut v = Vec::new();
        self.state_into(s, b, &mut v);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use continuum_core::fixtures;
    use continuum_core::load::WorkerLoad;

    fn encoder() -> (SituationEncoder, usize) {
        let sc = fixtures::scenario(
            fixtures::TOPOLOGY,
            &fixtures::workload(10.0, "periodic", 100.0, 0.0),
        );
        let enc = SituationEncoder::new(&sc.topology, &sc.fleet, &DqnConfig::default());
        let workers = sc.fleet.workers.len();
        (enc, workers)
    }

    #[test]
    fn a_longer_deadline_reaches_at_least_the_same_sites() {
        let (enc, _) = encoder();
        let rates = 3;
        for s in 0..enc.schedulers() {
            for b in 0..enc.buckets() - rates {
                let (a, c) = (&enc.pairs[s * 12 + b], &enc.pairs[s * 12 + b + rates]);
                assert!(c.cap_within >= a.cap_within, "{s} {b}");
                assert!(c.within.len() >= a.within.len());
                assert!(a.near.iter().all(|w| a.within.contains(w)));
            }
        }
        // The last deadline range (1 s) reaches every worker of the fixture.
        assert_eq!(enc.pairs[11].within.len(), enc.reach[0].len());
    }

    #[test]
    fn states_are_ratios_of_the_window_and_name_only_the_bucket() {
        let (mut enc, workers) = encoder();
        let n = enc.schedulers();
        assert_eq!(enc.features(), STATIC + DYNAMIC + 12);
        let mut loads = vec![WorkerLoad::default(); workers];
        for l in &mut loads {
            l.load_qps = 50.0;
        }
        let mut incoming = vec![0.0; 12 * n];
        incoming[11] = 30.0; // scheduler 0, last bucket
        incoming[3] = 10.0; // scheduler 0, bucket 3
        enc.push(&WindowObservation {
            loads,
            incoming_qps: incoming,
            buckets: 12,
        });
        let st = enc.state(0, 11);
        assert_eq!(st.len(), enc.features());
        let dynamic = &st[STATIC..STATIC + DYNAMIC];
        // Share of the scheduler's incoming queries in the bucket: 30 of 40.
        assert!((dynamic[7] - 0.75).abs() < 1e-6);
        // Every value is finite and inside the clip.
        assert!(
            st.iter()
                .all(|x| x.is_finite() && (-1.0..=CLIP).contains(x))
        );
        // The one-hot names the bucket and nothing else.
        let hot: Vec<usize> = (0..12)
            .filter(|&k| st[STATIC + DYNAMIC + k] == 1.0)
            .collect();
        assert_eq!(hot, vec![11]);
        assert_eq!(enc.incoming_qps(0), 40.0);
        assert_eq!(enc.incoming(0, 3), 10.0);
        // A second window at twice the rate shows a rising trend.
        let mut incoming = vec![0.0; 12 * n];
        incoming[11] = 80.0;
        enc.push(&WindowObservation {
            loads: vec![WorkerLoad::default(); workers],
            incoming_qps: incoming,
            buckets: 12,
        });
        assert!((enc.state(0, 11)[STATIC + 8] - 1.0).abs() < 1e-6);
    }
}
