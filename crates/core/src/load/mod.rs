//! What a scheduler sees of the workers (docs/model.md §8): a published snapshot of each worker's
//! measured load, stream count and throughput, and the sliding-window meter that measures them.
//! The simulator publishes it every Δ ms of virtual time; the gateway fills it from reports.
//! Between publications a scheduler may add its own recent bindings to it ([`OwnLoad`]). In the
//! simulator the view may instead be every worker's present load ([`LoadViewMode::Current`]).

mod meter;
mod mode;
mod own;

pub use meter::RateMeter;
pub use mode::LoadViewMode;
pub use own::{OwnBindings, OwnLoad};

/// One worker's state as last published.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WorkerLoad {
    /// Measured incoming load L_w, normalised qps (queries weighted by η = ζ/ζ_ref).
    pub load_qps: f64,
    /// Open streams bound to the worker, |I_w|.
    pub streams: u32,
    /// Measured throughput R_w, answered queries per second.
    pub throughput_qps: f64,
}

/// A snapshot of every worker's load, as a scheduler sees it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadView {
    /// Per worker, indexed like the topology's workers.
    pub workers: Vec<WorkerLoad>,
    /// When it was published (ms, the driver's clock).
    pub published_ms: f64,
}

impl LoadView {
    /// An all-idle view of `n` workers.
    pub fn idle(n: usize) -> Self {
        Self {
            workers: vec![WorkerLoad::default(); n],
            published_ms: 0.0,
        }
    }

    /// Age of the view at time `now_ms`.
    pub fn age_ms(&self, now_ms: f64) -> f64 {
        now_ms - self.published_ms
    }
}
