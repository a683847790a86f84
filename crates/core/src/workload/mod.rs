//! The workload (docs/model.md §4): Poisson client arrivals per scheduler with a time-varying rate λ,
//! and application classes whose streams have random rate, frame size, bandwidth, deadline,
//! accuracy floor and duration.

pub mod emission;
mod lambda;
mod schema;

use crate::config::{ConfigError, Dist, Source};
use crate::profiles::{Profiles, TaskId};
use rand::Rng;
use std::path::Path;

pub use lambda::Lambda;

/// When within its period a stream emits each query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum QueryJitter {
    /// Strictly periodic at 1/ρ.
    Periodic,
    /// Periodic, each emission shifted by a uniform offset in [0, ms) (no drift).
    Uniform(f64),
    /// Exponential gaps of mean 1/ρ: Poisson query arrivals.
    Poisson,
}

/// An application class: the distribution of the streams its clients open.
#[derive(Debug, Clone)]
pub struct AppClass {
    /// Name (e.g. `ar-overlay`).
    pub name: String,
    /// Fraction of clients of this class (normalised over all classes), its long-run level
    /// ([`Lambda::level`] of `share_over_time`).
    pub share: f64,
    /// The share over time (constant unless the file gives a `step` or `sine`): the mix of a
    /// new client at time t is drawn from every class's share at t, normalised.
    pub share_over_time: Lambda,
    /// The task its queries ask for.
    pub task: TaskId,
    /// Query rate ρ_i, queries per second (`rate_qps`; one query per frame for video).
    pub rate_qps: Dist,
    /// Query size ζ_i, KB.
    pub frame_kb: Dist,
    /// Uplink bandwidth, Mbit/s (t_i = ζ_i · 8 / bandwidth ms).
    pub uplink_mbps: Dist,
    /// Max end-to-end delay D^i, ms.
    pub max_delay_ms: Dist,
    /// Min accuracy A^i.
    pub min_accuracy: Dist,
    /// Stream duration, s.
    pub duration_s: Dist,
    /// One-way radio access delay δ_i, ms.
    pub access_delay_ms: Dist,
}

/// The characteristics of one stream, drawn from its application class: what it asks of a
/// binding ([`Demand`](crate::feasibility::Demand), one item per query), its class and how long
/// it lasts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StreamParams {
    /// Application class index.
    pub app: u16,
    /// What the stream asks of a binding (docs/model.md §5's inputs).
    pub demand: crate::feasibility::Demand,
    /// Duration, ms.
    pub duration_ms: f64,
}

/// A validated workload.
#[derive(Debug, Clone)]
pub struct Workload {
    /// Client arrival rate per scheduler over time.
    pub lambda: Lambda,
    /// Emission pattern of queries within a stream.
    pub jitter: QueryJitter,
    /// Application classes.
    pub apps: Vec<AppClass>,
    /// Cumulative normalised shares, when every share is constant.
    cum_share: Vec<f64>,
    /// Whether some class's share varies over time.
    shifting: bool,
}

impl Workload {
    /// Loads a workload file; its app tasks are checked against `profiles`.
    pub fn load(path: &Path, profiles: &Profiles) -> Result<Self, ConfigError> {
        Self::from_source(&Source::read(path)?, profiles)
    }

    /// Parses and validates workload text.
    pub fn from_source(src: &Source, profiles: &Profiles) -> Result<Self, ConfigError> {
        schema::build(src, profiles)
    }

    /// Builds a workload from parts (shares are normalised).
    pub fn new(lambda: Lambda, jitter: QueryJitter, apps: Vec<AppClass>) -> Self {
        let total: f64 = apps.iter().map(|a| a.share).sum();
        let mut acc = 0.0;
        let cum_share = apps
            .iter()
            .map(|a| {
                acc += a.share / total;
                acc
            })
            .collect();
        let shifting = apps
            .iter()
            .any(|a| !matches!(a.share_over_time, Lambda::Constant(_)));
        Self {
            lambda,
            jitter,
            apps,
            cum_share,
            shifting,
        }
    }

    /// Whether the mix of classes changes over time.
    pub fn shifting_mix(&self) -> bool {
        self.shifting
    }

    /// The normalised share of every class at `t_ms`.
    pub fn shares_at(&self, t_ms: f64) -> Vec<f64> {
        let raw: Vec<f64> = self
            .apps
            .iter()
            .map(|a| a.share_over_time.at(t_ms))
            .collect();
        let total: f64 = raw.iter().sum();
        raw.iter().map(|x| x / total).collect()
    }

    /// The class a uniform draw `u` picks at `t_ms`.
    fn class_at(&self, u: f64, t_ms: f64) -> usize {
        let last = self.apps.len() - 1;
        if !self.shifting {
            return self.cum_share.partition_point(|c| *c <= u).min(last);
        }
        let total: f64 = self.apps.iter().map(|a| a.share_over_time.at(t_ms)).sum();
        let mut acc = 0.0;
        for (i, a) in self.apps.iter().enumerate() {
            acc += a.share_over_time.at(t_ms) / total;
            if acc > u {
                return i;
            }
        }
        last
    }

    /// Draws the class and characteristics of the stream of a client arriving at `t_ms`.
    pub fn sample_stream<R: Rng + ?Sized>(&self, rng: &mut R, t_ms: f64) -> StreamParams {
        let u: f64 = rng.random();
        let app = self.class_at(u, t_ms);
        let a = &self.apps[app];
        let rate_qps = a.rate_qps.sample(rng);
        let frame_kb = a.frame_kb.sample(rng);
        let mbps = a.uplink_mbps.sample(rng);
        // Drawn in this order (the seeded streams depend on it).
        let access_ms = a.access_delay_ms.sample(rng);
        let max_delay_ms = a.max_delay_ms.sample(rng);
        let min_accuracy = a.min_accuracy.sample(rng);
        let duration_ms = a.duration_s.sample(rng) * 1000.0;
        StreamParams {
            app: app as u16,
            demand: crate::feasibility::Demand {
                task: a.task,
                rate_qps,
                frame_kb,
                tx_ms: frame_kb * 8.0 / mbps,
                access_ms,
                max_delay_ms,
                min_accuracy,
                items: 1,
            },
            duration_ms,
        }
    }

    /// Expected offered queries per second per scheduler at client rate `per_min`:
    /// λ/60 × E[duration] × E[rate] (Little's law; independence of rate and duration).
    pub fn expected_qps(&self, per_min: f64) -> f64 {
        let total: f64 = self.apps.iter().map(|a| a.share).sum();
        self.apps
            .iter()
            .map(|a| a.share / total * a.duration_s.mean() * a.rate_qps.mean())
            .sum::<f64>()
            * per_min
            / 60.0
    }
}

#[cfg(test)]
mod tests;
