//! Run settings of a simulation: how long, which windows, how stale the load view, the queue
//! bound, the seed, the mitigation, the workers' actual speed, own-binding accounting and which
//! load view schedulers decide on.

use super::{CapacityScale, QueueBound};
use continuum_core::load::{LoadViewMode, OwnBindings};
use continuum_core::mitigation::Mitigation;

/// The most metrics windows a run may have: each keeps its own counters and latency
/// histograms (about 2 KB), so this bounds a run's memory for them near 400 MB; with the
/// default 5 s windows it is 11.6 days of simulated time.
pub(crate) const MAX_WINDOWS: f64 = 200_000.0;

/// The most client arrivals a run may expect (λ × schedulers × duration). Clients are drawn
/// before the run and each stream keeps its own state, a few hundred bytes; assumption: 10⁷
/// keeps that within a few GB, and is 2 000 times full-edge's 300 s at λ 60.
pub(crate) const MAX_CLIENTS: f64 = 1e7;
/// The most queries a run may expect (arrivals × each app's mean rate × its mean stream
/// duration, within the run). Assumption: 5·10⁹ is about 20 minutes per row on one core at the
/// simulator's measured speed (docs/performance.md: over 4 M queries/s).
pub(crate) const MAX_QUERIES: f64 = 5e9;

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
    /// The load view schedulers decide on: the published snapshot, or every worker's present
    /// load with every scheduler's bindings (docs/model.md §8).
    pub load_view: LoadViewMode,
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
            load_view: LoadViewMode::default(),
        }
    }
}

/// A count for a message: whole below a million, else in scientific notation.
fn count(x: f64) -> String {
    if x < 1e6 {
        format!("{x:.0}")
    } else {
        format!("{x:.3e}")
    }
}

impl SimConfig {
    /// Checks what a run of `sc` under these settings would cost before it starts: the clients
    /// it expects to arrive and the queries they would send, each against its bound
    /// ([`MAX_CLIENTS`], [`MAX_QUERIES`]); the error says how many, the bound, why and what to
    /// shorten.
    pub fn check_size(&self, sc: &crate::Scenario) -> Result<(), String> {
        let w = &sc.workload;
        let duration = self.duration_s;
        let lambda = w.lambda.mean_over(duration * 1000.0);
        let schedulers = sc.topology.schedulers.len() as f64;
        let clients = lambda / 60.0 * schedulers * duration;
        if clients > MAX_CLIENTS {
            return Err(format!(
                "this run expects {} client arrivals (λ {lambda} clients/min × {schedulers} \
                 schedulers × {duration} s); at most {MAX_CLIENTS:.0e} (each is drawn before the \
                 run and keeps its own state in memory): lower --lambda or shorten --duration",
                count(clients)
            ));
        }
        let shares: f64 = w.apps.iter().map(|a| a.share).sum();
        let per_client: f64 = w
            .apps
            .iter()
            .map(|a| {
                a.share / shares.max(f64::MIN_POSITIVE)
                    * a.rate_qps.mean()
                    * a.duration_s.mean().min(duration)
            })
            .sum();
        let queries = clients * per_client;
        if queries > MAX_QUERIES {
            return Err(format!(
                "this run expects {} queries ({} clients × {} queries each, from the workload's \
                 rates and stream durations); at most {MAX_QUERIES:.0e} (about 20 minutes per \
                 row on one core): lower --lambda, shorten --duration or the workload's \
                 rate_qps / duration_s",
                count(queries),
                count(clients),
                count(per_client)
            ));
        }
        Ok(())
    }

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
        if self.load_view == LoadViewMode::Current && self.own_bindings != OwnBindings::Off {
            return Err(format!(
                "own-bindings: `{}` adds a scheduler's own bindings to a published view; under \
                 --load-view current every binding, its own included, is in the view already: \
                 use --own-bindings off",
                self.own_bindings.name()
            ));
        }
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
