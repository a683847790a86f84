//! A bound stream's state: when it emits its next query and how long its uplink takes.

use crate::rng::SimRng;
use crate::workload::QueryJitter;
use rand::Rng;
use rand_distr::{Distribution, Exp1, StandardNormal};

/// One client stream. Streams that found no binding use the same emission schedule, to count
/// the queries they would have sent.
#[derive(Debug, Clone)]
pub struct Stream {
    /// The stream's own random source for emission times (the same whatever the binding).
    pub emit_rng: SimRng,
    /// The stream's own random source for uplink delays.
    pub net_rng: SimRng,
    /// Scheduler index.
    pub sched: u16,
    /// Application class index.
    pub app: u16,
    /// Bound worker (unused for unbound streams).
    pub worker: u32,
    /// Index of the next nominal emission.
    pub k: u32,
    /// Start time, ms.
    pub t0: f64,
    /// Period 1/ρ, ms.
    pub period_ms: f64,
    /// Emissions stop at this time (end of stream or of the run), ms.
    pub t_end: f64,
    /// Time of the previous emission, ms (Poisson gaps build on it).
    pub last_ms: f64,
    /// Time of the next emission, not yet processed, ms.
    pub pending_ms: f64,
    /// Query size ζ_i, KB.
    pub size_kb: f64,
    /// Transmission time t_i, ms.
    pub tx_ms: f64,
    /// One-way access delay δ_i, ms.
    pub access_ms: f64,
    /// Deadline D^i, ms.
    pub max_delay_ms: f64,
    /// One-way network mean to the bound worker, ms.
    pub d_ms: f64,
    /// One-way network jitter to the bound worker, ms.
    pub sigma_ms: f64,
    /// Load per query η on the bound worker.
    pub eta: f64,
    /// Demand bucket of the stream, when the run is observed.
    pub bucket: u8,
    /// Window in which the stream was opened (bound, or found no binding).
    pub bind_window: u16,
}

impl Stream {
    /// The time of the next emission, or `None` when the stream has ended.
    #[inline]
    pub fn next_emission(&mut self, jitter: QueryJitter) -> Option<f64> {
        let t = match jitter {
            QueryJitter::Periodic => self.t0 + f64::from(self.k) * self.period_ms,
            QueryJitter::Uniform(j) => {
                // Offsets stay below one period so emissions keep their order.
                let j = j.min(self.period_ms * 0.999);
                let off = if j > 0.0 {
                    self.emit_rng.random::<f64>() * j
                } else {
                    0.0
                };
                self.t0 + f64::from(self.k) * self.period_ms + off
            }
            QueryJitter::Poisson => {
                if self.k == 0 {
                    self.t0
                } else {
                    let e: f64 = Exp1.sample(&mut self.emit_rng);
                    self.last_ms + e * self.period_ms
                }
            }
        };
        self.k += 1;
        self.last_ms = t;
        (t < self.t_end).then_some(t)
    }

    /// One uplink delay: δ_i + max(0, N(d, σ)) + t_i.
    #[inline]
    pub fn uplink_ms(&mut self) -> f64 {
        self.access_ms + net_delay(&mut self.net_rng, self.d_ms, self.sigma_ms) + self.tx_ms
    }
}

/// One network traversal: max(0, N(d, σ)).
#[inline]
pub fn net_delay(rng: &mut SimRng, d_ms: f64, sigma_ms: f64) -> f64 {
    if sigma_ms > 0.0 {
        let z: f64 = StandardNormal.sample(rng);
        (d_ms + sigma_ms * z).max(0.0)
    } else {
        d_ms
    }
}
