//! A bound stream's state: when it emits its next query and how long its uplink takes.

use continuum_core::rng::SimRng;
use continuum_core::workload::QueryJitter;
use continuum_core::workload::emission::Emission;
use rand_distr::{Distribution, StandardNormal};

/// One client stream. Streams that found no binding use the same emission schedule, to count
/// the queries they would have sent.
#[derive(Debug, Clone)]
pub(crate) struct Stream {
    /// Its emission schedule (the same whatever the binding).
    pub emission: Emission,
    /// The stream's own random source for uplink delays.
    pub net_rng: SimRng,
    /// Scheduler index.
    pub sched: u16,
    /// Application class index.
    pub app: u16,
    /// Bound worker (unused for unbound streams).
    pub worker: u32,
    /// Time of the next emission, not yet processed, ms.
    pub pending_ms: f64,
    /// Query size ζ_i, KB.
    pub frame_kb: f64,
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
    /// Serial among bound streams (index of its facts in the simulation).
    pub serial: u32,
    /// Its current job (slot among the simulation's jobs; `jobs::NO_JOB` before its first
    /// emission).
    pub job: u32,
    /// When the window of its current job ends, ms (−∞ before its first emission).
    pub job_end_ms: f64,
    /// Queries emitted into its current job so far.
    pub job_emitted: u32,
    /// Whether its current job is under a per-job mitigation (`restart`, `tdp`).
    pub job_mitigated: bool,
}

impl Stream {
    /// The time of the next emission, or `None` when the stream has ended.
    #[inline]
    pub(crate) fn next_emission(&mut self, jitter: QueryJitter) -> Option<f64> {
        self.emission.next(jitter)
    }

    /// One uplink delay: δ_i + max(0, N(d, σ)) + t_i.
    #[inline]
    pub(crate) fn uplink_ms(&mut self) -> f64 {
        self.access_ms + net_delay(&mut self.net_rng, self.d_ms, self.sigma_ms) + self.tx_ms
    }
}

/// One network traversal: max(0, N(d, σ)).
#[inline]
pub(crate) fn net_delay(rng: &mut SimRng, d_ms: f64, sigma_ms: f64) -> f64 {
    if sigma_ms > 0.0 {
        let z: f64 = StandardNormal.sample(rng);
        (d_ms + sigma_ms * z).max(0.0)
    } else {
        d_ms
    }
}
