//! When clients arrive and when their streams emit queries: the one implementation shared by
//! the simulator (virtual time) and the load generator (wall-clock time), so that with the same
//! seed both see the same clients and the same emission times.
//!
//! Client arrivals at a scheduler are a Poisson process of rate λ(t), drawn by thinning: gaps
//! are exponential at the peak rate λ_max and a candidate at time t is kept with probability
//! λ(t)/λ_max. Every draw (gaps, acceptance, the stream's characteristics) comes from the
//! scheduler's arrivals stream, in that order.

use super::{Lambda, QueryJitter, StreamParams, Workload};
use crate::rng::{Purpose, SimRng, stream_rng};
use rand::Rng;
use rand_distr::{Distribution, Exp1};

/// Milliseconds per minute: λ is given in clients per minute.
const MS_PER_MIN: f64 = 60_000.0;

/// The time of the next candidate arrival after `from` (ms), drawn at the peak rate of
/// `lambda`; `None` when λ is zero throughout.
#[inline]
pub fn next_candidate_ms<R: Rng + ?Sized>(rng: &mut R, lambda: &Lambda, from: f64) -> Option<f64> {
    let peak_per_ms = lambda.max() / MS_PER_MIN;
    if peak_per_ms <= 0.0 {
        return None;
    }
    let gap: f64 = Exp1.sample(rng);
    Some(from + gap / peak_per_ms)
}

/// Whether the candidate arrival at `t_ms` is kept (with probability λ(t)/λ_max).
#[inline]
pub fn accept_candidate<R: Rng + ?Sized>(rng: &mut R, lambda: &Lambda, t_ms: f64) -> bool {
    rng.random::<f64>() * lambda.max() < lambda.at(t_ms)
}

/// The emission schedule of one stream: the nominal times t0 + k/ρ, shifted by the workload's
/// [`QueryJitter`], until the stream's end.
#[derive(Debug, Clone)]
pub struct Emission {
    /// The stream's own random source for emission times (the same whatever the binding).
    pub rng: SimRng,
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
}

impl Emission {
    /// The schedule of a stream of rate `rate_qps` from `t0` (ms) to `t_end` (ms, exclusive).
    pub fn new(rng: SimRng, t0: f64, rate_qps: f64, t_end: f64) -> Self {
        Self {
            rng,
            k: 0,
            t0,
            period_ms: 1000.0 / rate_qps,
            t_end,
            last_ms: t0,
        }
    }

    /// The time of the next emission, or `None` when the stream has ended.
    #[inline]
    pub fn next(&mut self, jitter: QueryJitter) -> Option<f64> {
        let t = match jitter {
            QueryJitter::Periodic => self.t0 + f64::from(self.k) * self.period_ms,
            QueryJitter::Uniform(j) => {
                // Offsets stay below one period so emissions keep their order.
                // assumption: 0.999 of a period leaves room for float rounding.
                let j = j.min(self.period_ms * 0.999);
                let off = if j > 0.0 {
                    self.rng.random::<f64>() * j
                } else {
                    0.0
                };
                self.t0 + f64::from(self.k) * self.period_ms + off
            }
            QueryJitter::Poisson => {
                if self.k == 0 {
                    self.t0
                } else {
                    let e: f64 = Exp1.sample(&mut self.rng);
                    self.last_ms + e * self.period_ms
                }
            }
        };
        self.k += 1;
        self.last_ms = t;
        (t < self.t_end).then_some(t)
    }
}

/// One client of a scheduler, as the simulator draws it.
#[derive(Debug, Clone)]
pub struct Client {
    /// Arrival time, ms from the start of the run.
    pub t_ms: f64,
    /// Index of the client at its scheduler (0, 1, …): seeds its emission stream.
    pub index: u64,
    /// Its stream's characteristics.
    pub params: StreamParams,
}

impl Client {
    /// The emission schedule of this client's stream at scheduler `sched` under `seed`,
    /// truncated at `horizon_ms` (the simulator's end of emissions).
    pub fn emission(&self, seed: u64, sched: u64, horizon_ms: f64) -> Emission {
        Emission::new(
            stream_rng(seed, Purpose::Stream, sched, self.index),
            self.t_ms,
            self.params.demand.rate_qps,
            (self.t_ms + self.params.duration_ms).min(horizon_ms),
        )
    }
}

/// The clients arriving at one scheduler before a horizon, in arrival order: the same draws,
/// from the same random stream, as the simulator's arrivals at that scheduler.
#[derive(Debug, Clone)]
pub struct ClientArrivals<'a> {
    workload: &'a Workload,
    rng: SimRng,
    next_ms: Option<f64>,
    horizon_ms: f64,
    clients: u64,
}

impl<'a> ClientArrivals<'a> {
    /// The arrivals at scheduler `sched` under `seed`, up to `horizon_ms` (exclusive).
    pub fn new(workload: &'a Workload, seed: u64, sched: u64, horizon_ms: f64) -> Self {
        let mut rng = stream_rng(seed, Purpose::Arrivals, sched, 0);
        let next_ms = next_candidate_ms(&mut rng, &workload.lambda, 0.0);
        Self {
            workload,
            rng,
            next_ms,
            horizon_ms,
            clients: 0,
        }
    }
}

impl Iterator for ClientArrivals<'_> {
    type Item = Client;

    fn next(&mut self) -> Option<Client> {
        loop {
            let t = self.next_ms.filter(|t| *t < self.horizon_ms)?;
            let lambda = &self.workload.lambda;
            let client = accept_candidate(&mut self.rng, lambda, t).then(|| {
                let params = self.workload.sample_stream(&mut self.rng, t);
                let index = self.clients;
                self.clients += 1;
                Client {
                    t_ms: t,
                    index,
                    params,
                }
            });
            self.next_ms = next_candidate_ms(&mut self.rng, lambda, t);
            if client.is_some() {
                return client;
            }
        }
    }
}
