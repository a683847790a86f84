//! The workload (SPEC §4): Poisson client arrivals per scheduler with a time-varying rate λ,
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
    /// Fraction of clients of this class (normalised over all classes).
    pub share: f64,
    /// The task its queries ask for.
    pub task: TaskId,
    /// Frame rate ρ_i, qps.
    pub rate_fps: Dist,
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

/// The characteristics of one stream, drawn from its application class.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StreamParams {
    /// Application class index.
    pub app: u16,
    /// Task.
    pub task: TaskId,
    /// Frame rate ρ_i, qps.
    pub rate_qps: f64,
    /// Query size ζ_i, KB.
    pub size_kb: f64,
    /// Transmission time t_i, ms.
    pub tx_ms: f64,
    /// One-way access delay δ_i, ms.
    pub access_ms: f64,
    /// Max end-to-end delay D^i, ms.
    pub max_delay_ms: f64,
    /// Min accuracy A^i.
    pub min_accuracy: f64,
    /// Duration, ms.
    pub duration_ms: f64,
}

impl StreamParams {
    /// What the stream asks of a binding (SPEC §5's inputs).
    pub fn demand(&self) -> crate::feasibility::Demand {
        crate::feasibility::Demand {
            task: self.task,
            rate_qps: self.rate_qps,
            size_kb: self.size_kb,
            tx_ms: self.tx_ms,
            access_ms: self.access_ms,
            max_delay_ms: self.max_delay_ms,
            min_accuracy: self.min_accuracy,
            items: 1,
        }
    }
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
    cum_share: Vec<f64>,
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
        Self {
            lambda,
            jitter,
            apps,
            cum_share,
        }
    }

    /// Draws the class and characteristics of a new client's stream.
    pub fn sample_stream<R: Rng + ?Sized>(&self, rng: &mut R) -> StreamParams {
        let u: f64 = rng.random();
        let app = self
            .cum_share
            .partition_point(|c| *c <= u)
            .min(self.apps.len() - 1);
        let a = &self.apps[app];
        let rate_qps = a.rate_fps.sample(rng);
        let size_kb = a.frame_kb.sample(rng);
        let mbps = a.uplink_mbps.sample(rng);
        StreamParams {
            app: app as u16,
            task: a.task,
            rate_qps,
            size_kb,
            tx_ms: size_kb * 8.0 / mbps,
            access_ms: a.access_delay_ms.sample(rng),
            max_delay_ms: a.max_delay_ms.sample(rng),
            min_accuracy: a.min_accuracy.sample(rng),
            duration_ms: a.duration_s.sample(rng) * 1000.0,
        }
    }

    /// Expected offered queries per second per scheduler at client rate `per_min`:
    /// λ/60 × E[duration] × E[rate] (Little's law; independence of rate and duration).
    pub fn expected_qps(&self, per_min: f64) -> f64 {
        let total: f64 = self.apps.iter().map(|a| a.share).sum();
        self.apps
            .iter()
            .map(|a| a.share / total * a.duration_s.mean() * a.rate_fps.mean())
            .sum::<f64>()
            * per_min
            / 60.0
    }
}

#[cfg(test)]
mod tests;
