//! The agent's state (docs/model.md §9), encoded from window observations with no I/O, so the simulator
//! and the gateway encode identically: per worker (ordered by e2e distance from the scheduler)
//! the window means of |I_w|, R_w and L_w / C_w, then the scheduler's incoming queries by
//! demand bucket, for each of the last k windows; with `identity`, a one-hot of the scheduler
//! after them.

use super::config::DqnConfig;
use continuum_core::feasibility::Fleet;
use continuum_core::observe::WindowObservation;
use continuum_core::topology::Topology;
use std::collections::VecDeque;

/// Largest value a normalised feature may take (outliers are clipped).
const FEATURE_CLIP: f32 = 4.0;

/// Encodes observations into per-scheduler states of shape `[features, history]`.
#[derive(Debug, Clone)]
pub struct StateEncoder {
    /// Worker indices per scheduler, nearest (by e2e distance) first.
    order: Vec<Vec<u32>>,
    capacity: Vec<f64>,
    workers: usize,
    buckets: usize,
    /// Whether the scheduler's one-hot follows the buckets.
    identity: bool,
    history: usize,
    incoming_scale: f64,
    stream_ref: f64,
    /// Per scheduler, the last `history` feature vectors, oldest first.
    past: Vec<VecDeque<Vec<f32>>>,
    /// Per scheduler, its incoming queries per second in the windows observed so far (at most
    /// `history`), oldest first.
    incoming: Vec<VecDeque<f64>>,
}

impl StateEncoder {
    /// An encoder for `topology` with the state settings of `cfg`; history starts as zeros.
    pub fn new(topology: &Topology, fleet: &Fleet, cfg: &DqnConfig) -> Self {
        let order: Vec<Vec<u32>> = topology
            .schedulers
            .iter()
            .map(|s| {
                let k = if cfg.state_workers > 0 {
                    cfg.state_workers
                } else {
                    usize::MAX
                };
                s.reach.iter().take(k).map(|r| r.worker).collect()
            })
            .collect();
        let workers = if cfg.state_workers > 0 {
            cfg.state_workers
        } else {
            order.iter().map(Vec::len).max().unwrap_or(0)
        };
        let buckets = cfg.buckets.len();
        let features = 3 * workers + buckets + if cfg.identity { order.len() } else { 0 };
        Self {
            past: order
                .iter()
                .map(|_| (0..cfg.history).map(|_| vec![0.0; features]).collect())
                .collect(),
            incoming: vec![VecDeque::new(); order.len()],
            order,
            capacity: fleet.workers.iter().map(|w| w.capacity_qps).collect(),
            workers,
            buckets,
            identity: cfg.identity,
            history: cfg.history,
            incoming_scale: cfg.incoming_scale_qps,
            stream_ref: cfg.stream_rate_ref_qps,
        }
    }

    /// Features per window: 3 per worker slot, plus the buckets, plus one per scheduler with
    /// `identity`.
    pub fn features(&self) -> usize {
        3 * self.workers + self.buckets + if self.identity { self.order.len() } else { 0 }
    }

    /// Windows stacked, k.
    pub fn history(&self) -> usize {
        self.history
    }

    /// Length of one encoded state (`features × history`).
    pub fn state_len(&self) -> usize {
        self.features() * self.history
    }

    /// Number of schedulers.
    pub fn schedulers(&self) -> usize {
        self.order.len()
    }

    /// Adds a window's observation to every scheduler's history.
    pub fn push(&mut self, obs: &WindowObservation) {
        let clip = |x: f64| (x as f32).clamp(0.0, FEATURE_CLIP);
        for (s, order) in self.order.iter().enumerate() {
            let mut f = self.past[s].pop_front().unwrap_or_default();
            f.clear();
            f.resize(self.features(), 0.0);
            for (slot, &w) in order.iter().enumerate() {
                let l = &obs.loads[w as usize];
                let c = self.capacity[w as usize].max(1e-9);
                f[3 * slot] = clip(f64::from(l.streams) * self.stream_ref / c);
                f[3 * slot + 1] = clip(l.throughput_qps / c);
                f[3 * slot + 2] = clip(l.load_qps / c);
            }
            for (b, q) in obs.incoming(s).iter().enumerate() {
                f[3 * self.workers + b] = clip(q / self.incoming_scale);
            }
            if self.identity {
                f[3 * self.workers + self.buckets + s] = 1.0;
            }
            self.past[s].push_back(f);
            let seen = &mut self.incoming[s];
            if seen.len() == self.history {
                seen.pop_front();
            }
            seen.push_back(obs.incoming(s).iter().sum());
        }
    }

    /// Scheduler `s`'s incoming queries per second, averaged over the windows of its state
    /// observed so far (0 before the first).
    pub fn incoming_qps(&self, s: usize) -> f64 {
        let seen = &self.incoming[s];
        if seen.is_empty() {
            0.0
        } else {
            seen.iter().sum::<f64>() / seen.len() as f64
        }
    }

    /// Writes scheduler `s`'s state into `out` (cleared first) in `[feature][window]` order,
    /// the layout of a 1-D convolution over time with features as channels.
    pub fn state_into(&self, s: usize, out: &mut Vec<f32>) {
        out.clear();
        out.resize(self.state_len(), 0.0);
        for (t, f) in self.past[s].iter().enumerate() {
            for (i, x) in f.iter().enumerate() {
                out[i * self.history + t] = *x;
            }
        }
    }

    /// The system's state (`granularity: system`): the mean over schedulers of their states,
    /// slot by slot — the average scheduler's view, of the same size as one scheduler's.
    /// `scratch` holds one scheduler's state while it is added.
    pub fn system_state_into(&self, out: &mut Vec<f32>, scratch: &mut Vec<f32>) {
        out.clear();
        out.resize(self.state_len(), 0.0);
        let n = self.schedulers();
        for s in 0..n {
            self.state_into(s, scratch);
            out.iter_mut()
                .zip(scratch.iter())
                .for_each(|(o, x)| *o += x);
        }
        if n > 0 {
            let k = 1.0 / n as f32;
            out.iter_mut().for_each(|o| *o *= k);
        }
    }

    /// Scheduler `s`'s state as a new vector.
    pub fn state(&self, s: usize) -> Vec<f32> {
        let mut v = Vec::new();
        self.state_into(s, &mut v);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use continuum_core::fixtures;
    use continuum_core::load::WorkerLoad;

    #[test]
    fn workers_are_ordered_by_distance_and_windows_stack() {
        let sc = fixtures::scenario(
            fixtures::TOPOLOGY,
            &fixtures::workload(10.0, "periodic", 100.0, 0.0),
        );
        let cfg = DqnConfig {
            history: 2,
            ..DqnConfig::default()
        };
        let mut enc = StateEncoder::new(&sc.topology, &sc.fleet, &cfg);
        assert_eq!((enc.features(), enc.state_len()), (3 * 3 + 12, 42));
        // Worker 0: cloud (capacity 180), 1: co (200), 2: a0 (100). From a0: 2, 1, 0.
        let mut loads = vec![WorkerLoad::default(); 3];
        loads[0].load_qps = 90.0;
        loads[2].load_qps = 50.0;
        loads[2].streams = 2;
        let mut incoming = vec![0.0; 24];
        incoming[3] = 500.0; // scheduler 0, bucket 3
        enc.push(&WindowObservation {
            loads,
            incoming_qps: incoming,
            buckets: 12,
        });
        let s = enc.state(0);
        let at = |feature: usize, t: usize| s[feature * 2 + t];
        // Slot 0 is a0's worker: streams 2·15/100, util 0.5; slot 2 is the cloud: util 0.5.
        assert_eq!((at(0, 1), at(2, 1), at(8, 1)), (0.3, 0.5, 0.5));
        assert_eq!(at(9 + 3, 1), 0.5);
        // The older window is still zeros.
        assert!((0..21).all(|f| at(f, 0) == 0.0));
        // From a1 the co worker comes first.
        let s1 = enc.state(1);
        assert_eq!(s1[2 * 2 + 1], 0.0);
        assert_eq!(s1[5 * 2 + 1], 0.5);
        // With identity, each scheduler's one-hot follows the buckets.
        let with_id = DqnConfig {
            identity: true,
            ..cfg
        };
        let mut enc = StateEncoder::new(&sc.topology, &sc.fleet, &with_id);
        let n = enc.schedulers();
        assert_eq!(enc.features(), 3 * 3 + 12 + n);
        enc.push(&WindowObservation {
            loads: vec![WorkerLoad::default(); 3],
            incoming_qps: vec![0.0; 12 * n],
            buckets: 12,
        });
        for s in 0..n {
            let st = enc.state(s);
            let hot: Vec<usize> = (0..n).filter(|&k| st[(21 + k) * 2 + 1] == 1.0).collect();
            assert_eq!(hot, vec![s]);
        }
    }

    #[test]
    fn the_system_state_is_the_mean_of_the_schedulers() {
        let sc = fixtures::scenario(
            fixtures::TOPOLOGY,
            &fixtures::workload(10.0, "periodic", 100.0, 0.0),
        );
        let cfg = DqnConfig::default();
        let mut enc = StateEncoder::new(&sc.topology, &sc.fleet, &cfg);
        let n = enc.schedulers();
        assert!(n > 1);
        let mut loads = vec![WorkerLoad::default(); 3];
        for (w, l) in loads.iter_mut().enumerate() {
            l.load_qps = 10.0 * (w + 1) as f64;
        }
        let incoming: Vec<f64> = (0..12 * n).map(|i| i as f64).collect();
        enc.push(&WindowObservation {
            loads,
            incoming_qps: incoming,
            buckets: 12,
        });
        let (mut sys, mut scratch) = (Vec::new(), Vec::new());
        enc.system_state_into(&mut sys, &mut scratch);
        let states: Vec<Vec<f32>> = (0..n).map(|s| enc.state(s)).collect();
        for (i, x) in sys.iter().enumerate() {
            let mean = states.iter().map(|st| st[i]).sum::<f32>() / n as f32;
            assert!((x - mean).abs() < 1e-6, "{i}: {x} vs {mean}");
        }
        assert!(sys.iter().any(|&x| x > 0.0));
    }
}
