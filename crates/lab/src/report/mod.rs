//! Results of runs, in the shape every output format shares: JSON (the contract of the
//! `compare` command), CSV, a text table, and SVG plots.

mod csv;
mod plot;
mod text_table;

pub use csv::to_csv;
pub use plot::{plot_p99_over_time, plot_success_over_time, plot_success_per_app};
pub use text_table::{to_text_table, to_time_series_text_table};

use continuum_core::metrics::{Counts, MitigationCounts};
use continuum_sim::{SimStats, Simulation};
use serde::{Deserialize, Serialize};

/// Latency percentiles of answered queries, ms.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
}

/// One application class's outcome under one policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppResult {
    /// App name.
    pub app: String,
    /// Queries offered.
    pub offered: u64,
    /// Answered in time.
    pub success: u64,
    /// Answered late.
    pub failure: u64,
    /// Never processed.
    pub rejected: u64,
    /// Degraded by `tdp` (neither success, failure nor rejected).
    pub degraded: u64,
    /// success / offered.
    pub success_ratio: f64,
    /// End-to-end latency of its answered queries.
    pub latency_ms: Latency,
}

/// The success ratio and tail latency of one window (all schedulers and apps).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WindowPoint {
    /// Start of the window, s.
    pub t_s: f64,
    /// success / offered in the window.
    pub success_ratio: f64,
    /// Queries emitted in the window (so a reader can leave out the warm-up windows and weigh
    /// the rest).
    pub offered: u64,
    /// Of them, answered in time.
    pub success: u64,
    /// 99th percentile latency of the window's answered queries (by emission), ms, to two
    /// significant digits; 0 when none was answered.
    pub p99_ms: f64,
}

/// The per-job tail, ms: over jobs, each one's slowest answered task.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct JobTail {
    /// Mean over jobs (EdgeTuner's figure).
    pub mean: f64,
    /// Median over jobs (within 1.6 %).
    pub p50: f64,
    /// 95th percentile over jobs (within 1.6 %).
    pub p95: f64,
    /// 99th percentile over jobs (within 1.6 %).
    pub p99: f64,
}

/// Jobs of a run: a job is the queries one stream emits in one window (docs/model.md §12).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct JobsReport {
    /// Jobs (those of streams that found no binding included).
    pub jobs: u64,
    /// Jobs complete on time: every task not degraded answered within its deadline.
    pub on_time: u64,
    /// on_time / jobs.
    pub on_time_ratio: f64,
    /// Jobs whose `restart` or `tdp` trigger fired.
    pub triggered: u64,
}

/// One policy's run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyResult {
    /// Policy name.
    pub policy: String,
    /// Queries offered.
    pub offered: u64,
    /// Answered in time.
    pub success: u64,
    /// Answered late.
    pub failure: u64,
    /// Never processed.
    pub rejected: u64,
    /// Of `rejected`, the queries of streams refused at binding (no feasible binding, a pull
    /// step's patience run out, or a redeployment that left them unbound).
    #[serde(default)]
    pub rejected_at_binding: u64,
    /// Of `rejected`, the queries of bound streams that no worker processed: dropped at the
    /// worker's queue bound, discarded by a mitigation, or sent to a worker with no load.
    #[serde(default)]
    pub rejected_at_worker: u64,
    /// Degraded by `tdp`: offered, neither success, failure nor rejected (offered = success +
    /// failure + rejected + degraded).
    pub degraded: u64,
    /// success / offered.
    pub success_ratio: f64,
    /// End-to-end latency of answered queries.
    pub latency_ms: Latency,
    /// Mean end-to-end latency of answered queries, ms (0 when none).
    pub latency_mean_ms: f64,
    /// Per stream, its slowest answered query; the percentiles are over streams.
    pub stream_tail_ms: Latency,
    /// EdgeTuner's job tail: per job (a stream's queries in one window), its slowest answered
    /// task; the mean and percentiles are over jobs with an answer.
    pub job_tail_ms: JobTail,
    /// How many jobs there were and how many completed on time.
    pub jobs: JobsReport,
    /// What tail-latency mitigation did.
    pub mitigation: MitigationCounts,
    /// Per application class.
    pub per_app: Vec<AppResult>,
    /// Per window, in time order.
    pub per_window: Vec<WindowPoint>,
    /// For a meta-policy row: how often each action was chosen per class.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actions: Option<ActionShareReport>,
    /// For a row under an allocator: what the allocator did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allocation: Option<AllocationReport>,
    /// success_ratio over the run's offline bound, when the report has one
    /// ([`Report::bound`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_of_bound: Option<f64>,
}

/// The offline upper bound of a run (`--bound`, docs/model.md §16): no dispatcher of the model
/// serves more of the same streams in the fluid model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoundReport {
    /// served / offered.
    pub success_ratio: f64,
    /// Queries the run offers.
    pub offered: u64,
    /// The most of them served, work carried across slice ends included (a dual-feasible
    /// value of the run's LP: an upper bound whatever the solver's accuracy).
    pub served: f64,
    /// Of `served`, what work carried from one slice into the next adds (reports written
    /// before the bound coupled slices have none: 0).
    #[serde(default)]
    pub carried: f64,
    /// Streams that emit a query.
    pub streams: usize,
    /// Of them, those no worker can serve even at zero load.
    pub unservable: usize,
    /// Slices with a query.
    pub slices: usize,
    /// Of them, those in which every query fits without an LP.
    pub fit: usize,
    /// LPs solved (column generation's master LPs, over the other slices).
    pub lps: usize,
    /// Columns generated, summed over the slices, against the full LPs' `pairs`.
    pub columns: usize,
    /// Columns the slices' full LPs would have, summed.
    pub pairs: usize,
    /// The largest gap a slice's column generation left, relative to its queries.
    pub worst_gap: f64,
    /// Its time slices, ms.
    pub slice_ms: f64,
    /// Wall-clock time to replay the workload, build and solve the LP, s.
    pub wall_s: f64,
}

impl BoundReport {
    /// The report of `b`, computed with slices of `slice_ms`.
    pub fn new(b: &continuum_bound::Bound, slice_ms: f64) -> Self {
        Self {
            success_ratio: b.success_ratio,
            offered: b.offered,
            served: b.served,
            carried: b.carried,
            streams: b.streams,
            unservable: b.unservable,
            slices: b.slices,
            fit: b.fit,
            lps: b.lps,
            columns: b.columns,
            pairs: b.pairs,
            worst_gap: b.worst_gap,
            slice_ms,
            wall_s: b.build_s + b.solve_s,
        }
    }
}

/// What an allocator above dispatch did during a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AllocationReport {
    /// Allocator name (`static`: the topology file's deployment throughout).
    pub allocator: String,
    /// Slot length, s.
    pub slot_s: f64,
    /// OGASched's reward q(x, y) per slot, averaged over the slots (`None` for `static`,
    /// which allocates nothing).
    pub mean_reward: Option<f64>,
    /// OGA's initial learning rate η0 (`None` for the other allocators).
    pub eta0: Option<f64>,
    /// Replicas added and removed over the run, summed over workers.
    pub replica_changes: u64,
    /// Streams that re-bound because their worker was withdrawn.
    pub rebound: u64,
}

/// Shares of a meta-policy's decisions, per class and action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionShareReport {
    /// Class names.
    pub classes: Vec<String>,
    /// Action (policy) names.
    pub actions: Vec<String>,
    /// `share[c][a]`: fraction of class `c`'s decisions (every scheduler and window) that
    /// chose action `a`.
    pub share: Vec<Vec<f64>>,
}

impl From<&continuum_learn::meta::ActionShares> for ActionShareReport {
    fn from(a: &continuum_learn::meta::ActionShares) -> Self {
        Self {
            classes: a.classes.clone(),
            actions: a.actions.clone(),
            share: (0..a.classes.len())
                .map(|c| (0..a.actions.len()).map(|x| a.share(c, x)).collect())
                .collect(),
        }
    }
}

impl PolicyResult {
    /// Summarises a finished simulation run under the name `policy`.
    pub fn from_sim(policy: &str, sim: &Simulation) -> Self {
        let m = sim.metrics();
        let apps = &sim.scenario().workload.apps;
        let total = m.sum(|_, _, _| true);
        let per_app = apps
            .iter()
            .enumerate()
            .map(|(i, a)| AppResult {
                latency_ms: Latency {
                    p50: m.app_latency_quantile_ms(i, 0.50),
                    p95: m.app_latency_quantile_ms(i, 0.95),
                    p99: m.app_latency_quantile_ms(i, 0.99),
                },
                ..app_result(&a.name, &m.sum(|_, _, x| x == i))
            })
            .collect();
        let per_window = (0..m.windows())
            .map(|w| {
                let c = m.sum(|x, _, _| x == w);
                WindowPoint {
                    t_s: w as f64 * m.window_ms() / 1000.0,
                    success_ratio: c.success_ratio(),
                    offered: c.offered,
                    success: c.success,
                    p99_ms: m.window_latency_quantile_ms(w, 0.99),
                }
            })
            .collect();
        let mut tails = sim.stream_tails_ms();
        tails.sort_unstable_by(f64::total_cmp);
        let jobs = sim.jobs();
        Self {
            policy: policy.to_string(),
            offered: total.offered,
            success: total.success,
            failure: total.failure,
            rejected: total.rejected,
            rejected_at_binding: m.rejected_unbound_total(),
            rejected_at_worker: total.rejected.saturating_sub(m.rejected_unbound_total()),
            degraded: total.degraded,
            success_ratio: total.success_ratio(),
            latency_ms: Latency {
                p50: m.latency_quantile_ms(0.50),
                p95: m.latency_quantile_ms(0.95),
                p99: m.latency_quantile_ms(0.99),
            },
            latency_mean_ms: m.latency_mean_ms(),
            stream_tail_ms: Latency {
                p50: sorted_quantile(&tails, 0.50),
                p95: sorted_quantile(&tails, 0.95),
                p99: sorted_quantile(&tails, 0.99),
            },
            job_tail_ms: JobTail {
                mean: jobs.mean_tail_ms(),
                p50: jobs.tail_quantile_ms(0.50),
                p95: jobs.tail_quantile_ms(0.95),
                p99: jobs.tail_quantile_ms(0.99),
            },
            jobs: JobsReport {
                jobs: jobs.jobs,
                on_time: jobs.on_time,
                on_time_ratio: jobs.on_time_ratio(),
                triggered: m.mitigation.jobs_triggered,
            },
            mitigation: m.mitigation,
            per_app,
            per_window,
            actions: None,
            allocation: None,
            share_of_bound: None,
        }
    }
}

fn app_result(name: &str, c: &Counts) -> AppResult {
    AppResult {
        app: name.to_string(),
        offered: c.offered,
        success: c.success,
        failure: c.failure,
        rejected: c.rejected,
        degraded: c.degraded,
        success_ratio: c.success_ratio(),
        latency_ms: Latency {
            p50: 0.0,
            p95: 0.0,
            p99: 0.0,
        },
    }
}

/// The nearest-rank quantile `q` of ascending `xs`; 0 when empty.
fn sorted_quantile(xs: &[f64], q: f64) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let rank = (q * xs.len() as f64).ceil() as usize;
    xs[rank.clamp(1, xs.len()) - 1]
}

/// What the simulator did and how fast (the only part of a report that varies between runs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SimSummary {
    /// Queries simulated over all runs.
    pub queries: u64,
    /// Events processed over all runs.
    pub events: u64,
    /// Wall-clock time of the runs, s.
    pub wall_s: f64,
    /// Simulated queries per wall-clock second, per core busy.
    pub queries_per_core_s: f64,
    /// Simulated time over wall-clock time, per core busy (one run on one core).
    pub x_real_time_per_core: f64,
    /// Worker threads used.
    pub threads: usize,
}

impl SimSummary {
    /// Totals over runs of `duration_s` simulated each, which took `wall_s` on `threads`.
    pub fn new(stats: &[SimStats], duration_s: f64, wall_s: f64, threads: usize) -> Self {
        let queries: u64 = stats.iter().map(|s| s.queries).sum();
        let events = stats.iter().map(|s| s.events).sum();
        let busy = threads.min(stats.len()).max(1) as f64;
        let core_s = (wall_s * busy).max(1e-9);
        Self {
            queries,
            events,
            wall_s,
            queries_per_core_s: queries as f64 / core_s,
            x_real_time_per_core: duration_s * stats.len() as f64 / core_s,
            threads,
        }
    }
}

impl SimSummary {
    /// The summary of runs that each ran alone on one thread, from their own summaries (a
    /// sweep's cells): totals, and speeds per core-second spent.
    pub fn of_cells(parts: &[SimSummary], duration_s: f64) -> Self {
        let queries = parts.iter().map(|p| p.queries).sum::<u64>();
        let events = parts.iter().map(|p| p.events).sum();
        let core_s = parts.iter().map(|p| p.wall_s).sum::<f64>().max(1e-9);
        Self {
            queries,
            events,
            wall_s: core_s,
            queries_per_core_s: queries as f64 / core_s,
            x_real_time_per_core: duration_s * parts.len() as f64 / core_s,
            threads: 1,
        }
    }
}

/// The report of a `simulate` or `compare` run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Topology name.
    pub topology: String,
    /// Seed.
    pub seed: u64,
    /// Client rate per scheduler, clients/min: its time-average over the run (the rate itself
    /// when constant).
    pub lambda: f64,
    /// How the client rate moves over time: `60` for a constant, else e.g. `sine(mean 60,
    /// amplitude 40, period 600 s)`.
    pub lambda_profile: String,
    /// Simulated duration, s.
    pub duration_s: f64,
    /// How schedulers counted their own bindings between load publications (docs/model.md §8).
    #[serde(default)]
    pub own_bindings: String,
    /// The load view schedulers decided on, when not the default `published` (docs/model.md
    /// §8): `current`. Absent otherwise, so reports of published runs are as they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_view: Option<String>,
    /// One entry per policy, in the order asked for.
    pub results: Vec<PolicyResult>,
    /// Simulator work and speed.
    pub sim: SimSummary,
    /// The run's offline upper bound, with `--bound`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<BoundReport>,
}

/// A report's [`Report::load_view`] for a run under `mode`: `None` under the default.
pub fn load_view_field(mode: continuum_core::load::LoadViewMode) -> Option<String> {
    (!mode.is_published()).then(|| mode.name().to_string())
}

impl Report {
    /// Sets the run's bound and every row's share of it.
    pub fn set_bound(&mut self, bound: BoundReport) {
        for p in &mut self.results {
            p.share_of_bound = Some(if bound.success_ratio > 0.0 {
                p.success_ratio / bound.success_ratio
            } else {
                0.0
            });
        }
        self.bound = Some(bound);
    }

    /// Pretty JSON, with the format's version first (`"schema"`).
    pub fn to_json(&self) -> String {
        continuum_core::config::versioned_json(self).expect("reports serialise")
    }
}
