//! Outcomes grouped by the window in which each query's stream was opened, per scheduler and
//! application: what the bindings made in one window at one scheduler led to (a meta-policy's
//! credit for them). Counted only in runs that ask for them ([`BindCounts::enable`]): the
//! counters of a long run on a large topology are tens of MB touched at random, which a plain
//! run does not need.

use continuum_core::metrics::Counts;

/// `[offered, success, failure, rejected, degraded]` per (opening window, scheduler, app).
#[derive(Debug, Clone)]
pub(crate) struct BindCounts {
    schedulers: usize,
    apps: usize,
    windows: usize,
    window_ms: f64,
    /// Empty until [`Self::enable`].
    cells: Vec<[u64; 5]>,
}

impl BindCounts {
    /// Counters (not yet counting) for `schedulers` and `apps` over a run of `horizon_ms` in
    /// windows of `window_ms`.
    pub(crate) fn new(schedulers: usize, apps: usize, window_ms: f64, horizon_ms: f64) -> Self {
        let windows = ((horizon_ms / window_ms).ceil() as usize).clamp(1, usize::from(u16::MAX));
        Self {
            schedulers,
            apps,
            windows,
            window_ms,
            cells: Vec::new(),
        }
    }

    /// Starts counting (from zero), if not counting yet.
    pub(crate) fn enable(&mut self) {
        if self.cells.is_empty() {
            self.cells = vec![[0; 5]; self.windows * self.schedulers * self.apps];
        }
    }

    /// The window of time `t_ms`.
    pub(crate) fn window_of(&self, t_ms: f64) -> u16 {
        ((t_ms / self.window_ms) as usize).min(self.windows - 1) as u16
    }

    /// Adds one to counter `k` (0 offered, then the outcome index) of (`window`, `sched`,
    /// `app`), when counting.
    #[inline]
    pub(crate) fn count(&mut self, window: u16, sched: u16, app: u16, k: usize) {
        if self.cells.is_empty() {
            return;
        }
        let i = (usize::from(window) * self.schedulers + usize::from(sched)) * self.apps
            + usize::from(app);
        self.cells[i][k] += 1;
    }

    /// Counts of (`window`, `sched`, `app`); zero outside the run or when not counting.
    pub(crate) fn get(&self, window: usize, sched: usize, app: usize) -> Counts {
        let c = self
            .cells
            .get((window * self.schedulers + sched) * self.apps + app)
            .copied()
            .unwrap_or_default();
        Counts {
            offered: c[0],
            success: c[1],
            failure: c[2],
            rejected: c[3],
            degraded: c[4],
        }
    }
}
