//! Outcome counters per window × scheduler × app and end-to-end latency histograms (docs/model.md §7):
//! every offered query ends as exactly one of success, failure, rejected or degraded (the last
//! only under the simulator's `tdp` mitigation, docs/model.md §12).

mod log_hist;
mod objective;

pub use log_hist::LogHistogram;
pub use objective::Objective;

use hdrhistogram::Histogram;

/// The outcome of a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum Outcome {
    /// Answered within its deadline.
    Success = 1,
    /// Answered, but late.
    Failure = 2,
    /// Never processed.
    Rejected = 3,
    /// Discarded by `tdp`: its job completed without it (neither a success nor a failure).
    Degraded = 4,
}

/// Offered / success / failure / rejected / degraded counts: offered = success + failure +
/// rejected + degraded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Queries offered.
    pub offered: u64,
    /// Answered within the deadline.
    pub success: u64,
    /// Answered late.
    pub failure: u64,
    /// Never processed.
    pub rejected: u64,
    /// Discarded by `tdp` once their job had enough tasks done (0 under every other
    /// mitigation).
    pub degraded: u64,
}

impl Counts {
    /// success / offered (0 when nothing was offered).
    pub fn success_ratio(&self) -> f64 {
        if self.offered == 0 {
            0.0
        } else {
            self.success as f64 / self.offered as f64
        }
    }

    /// Adds `o` to `self`.
    pub fn add(&mut self, o: &Counts) {
        self.offered += o.offered;
        self.success += o.success;
        self.failure += o.failure;
        self.rejected += o.rejected;
        self.degraded += o.degraded;
    }

    /// Whether every offered query has exactly one outcome.
    pub fn conserved(&self) -> bool {
        self.offered == self.success + self.failure + self.rejected + self.degraded
    }
}

/// Largest latency the histograms track, µs (one hour); longer ones are clamped.
const MAX_LATENCY_US: u64 = 3_600_000_000;

/// `x.round() as u64` for x ≥ 0 (halves away from zero), without the library call `round` is
/// on x86-64 processors the build cannot assume SSE4.1 of. Exact: below 2^52 the integer part
/// and the fraction are exact in f64; above, x is already an integer. Saturates like `as`.
#[inline]
fn round_non_negative(x: f64) -> u64 {
    let i = x as u64;
    if x - i as f64 >= 0.5 {
        i.saturating_add(1)
    } else {
        i
    }
}

/// What tail-latency mitigation did in a run (see [`crate::mitigation`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MitigationCounts {
    /// Queries reissued (a second copy sent).
    pub reissued: u64,
    /// Reissued queries whose copy answered first.
    pub reissue_won: u64,
    /// Late queries left alone because no other binding was feasible.
    pub reissue_no_target: u64,
    /// Copies cancelled before processing because the other copy had answered.
    pub cancelled: u64,
    /// Copies processed after the other copy had answered (work for nothing).
    pub wasted: u64,
    /// Queries dropped by `discard` that the deadline bound alone would have kept.
    pub discarded: u64,
    /// Jobs (a stream's queries in one window) whose `restart` or `tdp` trigger fired.
    pub jobs_triggered: u64,
    /// Copies sent by `restart` (a task unanswered when its job triggered, or emitted after).
    pub restarted: u64,
    /// Restarted tasks whose copy answered first.
    pub restart_won: u64,
    /// Tasks `restart` left alone because no other binding was feasible.
    pub restart_no_target: u64,
    /// Tasks `tdp` discarded (unanswered when their job triggered) or did not send (emitted
    /// after): the degraded outcome.
    pub degraded: u64,
}

/// The recorder a run fills in. Queries are attributed to the window of their emission.
#[derive(Debug, Clone)]
pub struct Metrics {
    window_ms: f64,
    windows: usize,
    schedulers: usize,
    apps: usize,
    /// `[offered, success, failure, rejected]` at `(window * schedulers + scheduler) * apps + app`.
    cells: Vec<[u64; 4]>,
    /// Degraded queries, indexed like `cells`; empty until the first one (only `tdp` has
    /// them, and the hot counters stay four to a cell).
    degraded: Vec<u64>,
    /// Latency of answered queries, µs.
    latency_us: Histogram<u64>,
    /// Latency of answered queries per app (quantiles within 1.6 %).
    app_latency: Vec<LogHistogram>,
    /// Latency of answered queries per window of emission (quantiles within 1.6 %).
    window_latency: Vec<LogHistogram>,
    /// What mitigation did.
    pub mitigation: MitigationCounts,
    /// Of the rejected queries, those of streams that had no binding when they were emitted
    /// (refused at binding, or left unbound by a redeployment); the others were dropped at a
    /// worker.
    rejected_unbound: u64,
    queue_wait_sum_ms: f64,
    queue_wait_n: u64,
}

impl Metrics {
    /// A recorder for a run of `duration_ms` cut into windows of `window_ms`.
    pub fn new(duration_ms: f64, window_ms: f64, schedulers: usize, apps: usize) -> Self {
        let windows = ((duration_ms / window_ms).ceil() as usize).max(1);
        Self {
            window_ms,
            windows,
            schedulers,
            apps,
            cells: vec![[0; 4]; windows * schedulers * apps],
            degraded: Vec::new(),
            latency_us: Histogram::new_with_bounds(1, MAX_LATENCY_US, 3)
                .expect("valid histogram bounds"),
            app_latency: vec![LogHistogram::default(); apps],
            window_latency: vec![LogHistogram::default(); windows],
            mitigation: MitigationCounts::default(),
            rejected_unbound: 0,
            queue_wait_sum_ms: 0.0,
            queue_wait_n: 0,
        }
    }

    #[inline]
    fn window_of(&self, t_emit_ms: f64) -> usize {
        ((t_emit_ms / self.window_ms) as usize).min(self.windows - 1)
    }

    #[inline]
    fn cell_index(&self, t_emit_ms: f64, sched: u16, app: u16) -> usize {
        let w = self.window_of(t_emit_ms);
        (w * self.schedulers + sched as usize) * self.apps + app as usize
    }

    #[inline]
    fn cell_mut(&mut self, t_emit_ms: f64, sched: u16, app: u16) -> &mut [u64; 4] {
        let i = self.cell_index(t_emit_ms, sched, app);
        &mut self.cells[i]
    }

    /// The counters a query emitted at `t_emit_ms` at scheduler `sched` of application `app`
    /// counts in (`[offered, success, failure, rejected]`).
    #[inline]
    pub fn cell(&self, t_emit_ms: f64, sched: u16, app: u16) -> &[u64; 4] {
        &self.cells[self.cell_index(t_emit_ms, sched, app)]
    }

    /// A query was offered at `t_emit_ms`.
    #[inline]
    pub fn offered(&mut self, t_emit_ms: f64, sched: u16, app: u16) {
        self.cell_mut(t_emit_ms, sched, app)[0] += 1;
    }

    /// A query of a stream that found no feasible binding was offered at `t_emit_ms`: it is
    /// rejected at once.
    #[inline]
    pub fn rejected_unbound(&mut self, t_emit_ms: f64, sched: u16, app: u16) {
        let c = self.cell_mut(t_emit_ms, sched, app);
        c[0] += 1;
        c[Outcome::Rejected as usize] += 1;
        self.rejected_unbound += 1;
    }

    /// Of the rejected queries, those of streams without a binding when they were emitted
    /// ([`Metrics::rejected_unbound`]); the rest were dropped at a worker.
    pub fn rejected_unbound_total(&self) -> u64 {
        self.rejected_unbound
    }

    /// The query emitted at `t_emit_ms` ended with `outcome`; answered ones give their latency.
    #[inline]
    pub fn outcome(
        &mut self,
        t_emit_ms: f64,
        sched: u16,
        app: u16,
        outcome: Outcome,
        latency_ms: Option<f64>,
    ) {
        let w = self.window_of(t_emit_ms);
        let i = (w * self.schedulers + sched as usize) * self.apps + app as usize;
        if outcome == Outcome::Degraded {
            self.degrade(i);
            return;
        }
        self.cells[i][outcome as usize] += 1;
        if let Some(l) = latency_ms {
            let us = round_non_negative(l * 1000.0).clamp(1, MAX_LATENCY_US);
            self.latency_us.record(us).expect("clamped into range");
            self.app_latency[usize::from(app)].record(l);
            self.window_latency[w].record(l);
        }
    }

    /// One more degraded query in cell `i`.
    #[inline(never)]
    fn degrade(&mut self, i: usize) {
        if self.degraded.is_empty() {
            self.degraded = vec![0; self.cells.len()];
        }
        self.degraded[i] += 1;
    }

    /// A query waited `ms` in a worker queue before its batch started.
    #[inline]
    pub fn queue_wait(&mut self, ms: f64) {
        self.queue_wait_sum_ms += ms;
        self.queue_wait_n += 1;
    }

    /// Number of windows.
    pub fn windows(&self) -> usize {
        self.windows
    }

    /// Window length, ms.
    pub fn window_ms(&self) -> f64 {
        self.window_ms
    }

    /// Counts of one (window, scheduler, app) cell.
    pub fn get(&self, window: usize, sched: usize, app: usize) -> Counts {
        let i = (window * self.schedulers + sched) * self.apps + app;
        let c = self.cells[i];
        Counts {
            offered: c[0],
            success: c[1],
            failure: c[2],
            rejected: c[3],
            degraded: self.degraded.get(i).copied().unwrap_or(0),
        }
    }

    /// Sum over the cells that `keep(window, scheduler, app)` selects.
    pub fn sum(&self, keep: impl Fn(usize, usize, usize) -> bool) -> Counts {
        let mut t = Counts::default();
        for w in 0..self.windows {
            for s in 0..self.schedulers {
                for a in 0..self.apps {
                    if keep(w, s, a) {
                        t.add(&self.get(w, s, a));
                    }
                }
            }
        }
        t
    }

    /// Mean latency of answered queries, ms (at the histogram's microsecond resolution); 0
    /// when none was answered.
    pub fn latency_mean_ms(&self) -> f64 {
        if self.latency_us.is_empty() {
            0.0
        } else {
            self.latency_us.mean() / 1000.0
        }
    }

    /// Latency quantile `q` (0..1) of answered queries, ms; 0 when none was answered.
    pub fn latency_quantile_ms(&self, q: f64) -> f64 {
        if self.latency_us.is_empty() {
            0.0
        } else {
            self.latency_us.value_at_quantile(q) as f64 / 1000.0
        }
    }

    /// Latency quantile `q` of the answered queries of app `app`, ms (within 1.6 %); 0 when
    /// none.
    pub fn app_latency_quantile_ms(&self, app: usize, q: f64) -> f64 {
        self.app_latency[app].quantile_ms(q)
    }

    /// Latency quantile `q` of the answered queries emitted in window `w`, ms (within
    /// 1.6 %); 0 when none.
    pub fn window_latency_quantile_ms(&self, w: usize, q: f64) -> f64 {
        self.window_latency[w].quantile_ms(q)
    }

    /// Latencies of the answered queries emitted in window `w` (within 1.6 %).
    pub fn window_latency(&self, w: usize) -> &LogHistogram {
        &self.window_latency[w]
    }

    /// Latencies of the answered queries of app `app` (within 1.6 %).
    pub fn app_latency(&self, app: usize) -> &LogHistogram {
        &self.app_latency[app]
    }

    /// Mean time queries waited in worker queues, ms.
    pub fn mean_queue_wait_ms(&self) -> f64 {
        if self.queue_wait_n == 0 {
            0.0
        } else {
            self.queue_wait_sum_ms / self.queue_wait_n as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Metrics, Outcome, round_non_negative};

    /// A degraded query is offered, counted apart from success, failure and rejected, and
    /// records no latency; the success ratio keeps its meaning (success / offered).
    #[test]
    fn degraded_is_an_outcome_of_its_own() {
        let mut m = Metrics::new(10_000.0, 5_000.0, 1, 2);
        for (t, app, o, l) in [
            (100.0, 0, Outcome::Success, Some(10.0)),
            (200.0, 0, Outcome::Degraded, None),
            (6_000.0, 1, Outcome::Degraded, None),
            (6_100.0, 1, Outcome::Rejected, None),
        ] {
            m.offered(t, 0, app);
            m.outcome(t, 0, app, o, l);
        }
        let t = m.sum(|_, _, _| true);
        assert_eq!(
            (t.offered, t.success, t.failure, t.rejected, t.degraded),
            (4, 1, 0, 1, 2)
        );
        assert!(t.conserved());
        assert_eq!(t.success_ratio(), 0.25);
        assert_eq!(m.get(1, 0, 1).degraded, 1);
        assert_eq!(m.get(0, 0, 1).degraded, 0);
        assert!((m.latency_quantile_ms(1.0) - 10.0).abs() < 0.01);
        assert_eq!(m.app_latency(0).len(), 1);
        assert!(m.app_latency(1).is_empty());
    }

    #[test]
    fn rounding_matches_the_library() {
        let specials = [
            0.0,
            0.5,
            1.5,
            2.5,
            0.499_999_999_999_999_94,
            4_503_599_627_370_495.5,
            4_503_599_627_370_497.0,
            1e19,
            1e30,
            f64::INFINITY,
            f64::NAN,
        ];
        let mut x = 0.000_123_f64;
        let grid = std::iter::from_fn(|| {
            x *= 1.001_37;
            (x < 1e12).then_some(x)
        });
        for v in specials.into_iter().chain(grid) {
            assert_eq!(round_non_negative(v), v.round() as u64, "{v}");
        }
    }
}
