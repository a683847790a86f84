//! The offline upper bound on a run's success ratio (docs/model.md §16): given every stream the
//! run emits — how many queries it sends in each time slice, and the workers that could serve
//! it at zero load — a linear program per slice assigns each stream's queries fractionally to
//! those workers so that no worker is asked for more processing time than its replicas have,
//! and maximises the queries served; work carried from a slice into the next ones (as far as
//! the slice's deadlines reach) couples the slices, so the bound holds for the whole run. It is
//! clairvoyant (it knows every arrival in advance) and fluid (it splits streams and ignores
//! queueing), and a dual-feasible value (valid whatever the solver's accuracy), so no run of
//! the model's online dispatchers can serve more.
//!
//! The workload is replayed with the simulator's own draws ([`continuum_core::workload::emission`]):
//! same seed, same clients, same emissions. The LPs are solved by Clarabel (an interior-point
//! solver in pure Rust; why this one, and why by column generation: docs/baselines.md).

#![warn(missing_docs)]
#![deny(unreachable_pub)]

mod carry;
mod lp;
mod solver;
mod streams;

pub use lp::{Solution, solve};
pub use solver::Lp;
pub use streams::{BoundStream, bound_streams};

use continuum_core::scenario::Scenario;
use std::time::Instant;

/// What the bound is computed over.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundSettings {
    /// The run's seed (its clients and emissions).
    pub seed: u64,
    /// The run's duration, s: clients arrive and streams emit before it.
    pub duration_s: f64,
    /// Length of the slices in which each worker's capacity holds, ms.
    pub slice_ms: f64,
    /// Per worker, the factor on its processing delay (1: as profiled; the simulator's
    /// `--capacity-scale`); empty means 1 everywhere.
    pub slowdown: Vec<f64>,
}

/// Why no bound could be computed.
#[derive(Debug, thiserror::Error)]
pub enum BoundError {
    /// A setting is out of range.
    #[error("{0}")]
    Settings(String),
    /// The solver did not reach an optimum.
    #[error("the LP solver stopped without an optimum: {0}")]
    Solver(String),
}

/// The bound of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    /// Queries the run offers (every emission of every stream).
    pub offered: u64,
    /// The most of them a clairvoyant fluid dispatcher serves, work carried across slice ends
    /// included.
    pub served: f64,
    /// Of `served`, what work carried from one slice into the next adds to the slices'
    /// bounds (docs/model.md §16).
    pub carried: f64,
    /// served / offered: no success ratio of the run can exceed it in the fluid model.
    pub success_ratio: f64,
    /// Streams that emit at least one query.
    pub streams: usize,
    /// Of them, those with no feasible worker even at zero load.
    pub unservable: usize,
    /// Slices with a query.
    pub slices: usize,
    /// Of them, those in which every query fits (no LP needed).
    pub fit: usize,
    /// LPs solved (column generation's master LPs).
    pub lps: usize,
    /// Columns generated, summed over the slices.
    pub columns: usize,
    /// Columns the slices' full LPs would have, summed.
    pub pairs: usize,
    /// The largest gap a slice's column generation left, relative to its queries.
    pub worst_gap: f64,
    /// Wall-clock time to replay the workload, s.
    pub build_s: f64,
    /// Wall-clock time to build and solve the LPs, s.
    pub solve_s: f64,
}

/// The offline upper bound of a run of `sc` under `settings`.
pub fn offline_bound(sc: &Scenario, settings: &BoundSettings) -> Result<Bound, BoundError> {
    let positive = |x: f64, what: &str| {
        if x > 0.0 && x.is_finite() {
            Ok(())
        } else {
            Err(BoundError::Settings(format!(
                "{what}: expected a finite number > 0, got {x}"
            )))
        }
    };
    positive(settings.duration_s, "duration")?;
    positive(settings.slice_ms, "bound slice")?;
    let n = sc.fleet.workers.len();
    if !settings.slowdown.is_empty() && settings.slowdown.len() != n {
        return Err(BoundError::Settings(format!(
            "slowdown: expected one factor per worker ({n}), got {}",
            settings.slowdown.len()
        )));
    }
    let t = Instant::now();
    let horizon_ms = settings.duration_s * 1000.0;
    let streams = bound_streams(
        sc,
        settings.seed,
        horizon_ms,
        settings.slice_ms,
        &settings.slowdown,
    );
    let offered: u64 = streams.iter().map(|s| s.queries).sum();
    let unservable = streams.iter().filter(|s| s.workers.is_empty()).count();
    // A worker's processing time per slice: its replicas, each busy the whole slice.
    let capacity_ms: Vec<f64> = sc
        .fleet
        .workers
        .iter()
        .map(|w| f64::from(w.replicas) * settings.slice_ms)
        .collect();
    let build_s = t.elapsed().as_secs_f64();
    let sol = solve(&streams, &capacity_ms, settings.slice_ms)?;
    Ok(Bound {
        offered,
        served: sol.served,
        carried: sol.carried,
        success_ratio: if offered > 0 {
            (sol.served / offered as f64).min(1.0)
        } else {
            1.0
        },
        streams: streams.len(),
        unservable,
        slices: sol.slices,
        fit: sol.fit,
        lps: sol.lps,
        columns: sol.columns,
        pairs: sol.pairs,
        worst_gap: sol.worst_gap,
        build_s,
        solve_s: sol.solve_s,
    })
}
