//! Run settings of a simulation: how long, which windows, how stale the load view, the queue
//! bound, the seed, the mitigation, the workers' actual speed and own-binding accounting.

use super::{CapacityScale, QueueBound};
use continuum_core::load::OwnBindings;
use continuum_core::mitigation::Mitigation;

/// The most metrics windows a run may have: each keeps its own counters and latency
/// histograms (about 2 KB), so this bounds a run's memory for them near 400 MB; with the
/// default 5 s windows it is 11.6 days of simulated time.
pub(crate) const MAX_WINDOWS: f64 = 200_000.0;

/// Run settings (the scenario's files say what is simulated; these say how).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimConfig {
    /// Simulated time during which clients arrive and streams emit, s.
    pub duration_s: f64,
    /// Metrics (and meta-policy) window T, s.
    pub window_s: f64,
    /// Load publication period Δ (staleness), ms.
    pub staleness_ms: f64,
    /// Sliding window over which loads and throughputs are measured, ms.
    pub load_window_ms: f64,
    /// Worker queue bound.
    pub queue_bound: QueueBound,
    /// Seed of every random stream.
    pub seed: u64,
    /// What happens to late queries.
    pub mitigation: Mitigation,
    /// Actual worker speed against the profiles.
    pub capacity: CapacityScale,
    /// How each scheduler counts its own bindings since the last publication (docs/model.md §8).
    pub own_bindings: OwnBindings,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            duration_s: 600.0,
            window_s: 5.0,
            staleness_ms: 100.0,
            load_window_ms: 1000.0,
            queue_bound: QueueBound::Deadline,
            seed: 1,
            mitigation: Mitigation::None,
            capacity: CapacityScale::default(),
            own_bindings: OwnBindings::default(),
        }
    }
}

impl SimConfig {
    /// Checks the settings; the error names the field.
    pub fn validate(&self) -> Result<(), String> {
        let pos = |x: f64, name: &str| {
            if x > 0.0 && x.is_finite() {
                Ok(())
            } else {
                Err(format!("{name} must be a finite number > 0, got {x}"))
            }
        };
        pos(self.duration_s, "duration")?;
        pos(self.window_s, "window")?;
        pos(self.staleness_ms, "staleness-ms")?;
        pos(self.load_window_ms, "load-window-ms")?;
        let windows = (self.duration_s / self.window_s).ceil();
        if windows > MAX_WINDOWS {
            return Err(format!(
                "duration: {} s in windows of {} s is {windows:.0} windows; at most {MAX_WINDOWS:.0} \
                 (every window keeps its own counters and latency histograms in memory): shorten \
                 --duration or lengthen --window",
                self.duration_s, self.window_s
            ));
        }
        Ok(())
    }
}
