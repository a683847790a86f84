//! Own-binding accounting (docs/model.md §8): between two publications of the load view, a
//! scheduler adds to what it sees the demand of the streams it has bound itself, so that the
//! bindings it makes on one view do not all herd onto the worker that view shows emptiest.

use super::LoadView;

/// How a scheduler counts its own recent bindings into the view it decides on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OwnBindings {
    /// Not at all: every binding reads the published view as it is.
    #[default]
    Off,
    /// The demand of each stream bound since the view was published is added in full; the
    /// next publication clears it.
    Publication,
    /// The demand of each stream bound in the last load window is added for the share of the
    /// window the published view has not measured yet: a stream bound at t_b is seen in a view
    /// published at p for (p − t_b) / W of its rate (the meter sums the last W ms, docs/model.md
    /// §8), so 1 − (p − t_b) / W of it is added, all of it for a binding after p.
    Window,
}

impl OwnBindings {
    /// Every mode, in the order `--own-bindings` lists them.
    pub const ALL: [OwnBindings; 3] = [Self::Off, Self::Publication, Self::Window];

    /// The mode's name (`off`, `publication`, `window`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Publication => "publication",
            Self::Window => "window",
        }
    }

    /// Parses a mode name; the error lists the names.
    pub fn parse(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|m| m.name() == s.trim())
            .ok_or_else(|| {
                format!(
                    "unknown own-binding accounting `{}`; expected `off`, `publication` or `window`",
                    s.trim()
                )
            })
    }
}

/// One scheduler's own recent bindings.
#[derive(Debug, Clone)]
pub struct OwnLoad {
    mode: OwnBindings,
    window_ms: f64,
    /// (worker, demand in normalised qps, bound at ms), oldest first.
    bound: Vec<(u32, f64, f64)>,
}

impl OwnLoad {
    /// Accounting in `mode` against a view whose loads are measured over `window_ms`.
    pub fn new(mode: OwnBindings, window_ms: f64) -> Self {
        Self {
            mode,
            window_ms,
            bound: Vec::new(),
        }
    }

    /// The mode.
    pub fn mode(&self) -> OwnBindings {
        self.mode
    }

    /// Forgets the bindings `view` already shows in full. Call before reading [`Self::extra`]
    /// for a decision on `view`.
    pub fn settle(&mut self, view: &LoadView) {
        let p = view.published_ms;
        let horizon = match self.mode {
            OwnBindings::Off => {
                self.bound.clear();
                return;
            }
            OwnBindings::Publication => p,
            OwnBindings::Window => p - self.window_ms,
        };
        let stale = self.bound.partition_point(|b| b.2 < horizon);
        if stale > 0 {
            self.bound.drain(..stale);
        }
    }

    /// The demand the scheduler adds to worker `worker`'s seen load in `view`, normalised qps.
    #[inline]
    pub fn extra(&self, worker: u32, view: &LoadView) -> f64 {
        let p = view.published_ms;
        self.bound
            .iter()
            .filter(|b| b.0 == worker)
            .map(|&(_, demand, t)| match self.mode {
                OwnBindings::Off => 0.0,
                OwnBindings::Publication => {
                    if t >= p {
                        demand
                    } else {
                        0.0
                    }
                }
                OwnBindings::Window => {
                    let seen = if self.window_ms > 0.0 {
                        ((p - t) / self.window_ms).clamp(0.0, 1.0)
                    } else {
                        1.0
                    };
                    demand * (1.0 - seen)
                }
            })
            .sum()
    }

    /// Whether anything would be added to any worker.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.bound.is_empty()
    }

    /// Records that the scheduler bound a stream bringing `demand_qps` to `worker` at `now_ms`
    /// (times must not decrease).
    pub fn record(&mut self, worker: u32, demand_qps: f64, now_ms: f64) {
        if self.mode != OwnBindings::Off {
            self.bound.push((worker, demand_qps, now_ms));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(published_ms: f64) -> LoadView {
        LoadView {
            workers: vec![Default::default(); 3],
            published_ms,
        }
    }

    #[test]
    fn publication_counts_what_was_bound_since_the_view_and_forgets_at_the_next() {
        let mut own = OwnLoad::new(OwnBindings::Publication, 1000.0);
        let v = view(100.0);
        own.settle(&v);
        own.record(1, 10.0, 120.0);
        own.record(1, 5.0, 150.0);
        own.record(2, 7.0, 160.0);
        assert_eq!(own.extra(1, &v), 15.0);
        assert_eq!(own.extra(2, &v), 7.0);
        assert_eq!(own.extra(0, &v), 0.0);
        // The view of 200 ms measured them: nothing is added, and they are forgotten.
        let v = view(200.0);
        own.settle(&v);
        assert!(own.is_empty());
        assert_eq!(own.extra(1, &v), 0.0);
    }

    #[test]
    fn window_adds_the_share_the_view_has_not_measured_yet() {
        let mut own = OwnLoad::new(OwnBindings::Window, 1000.0);
        own.record(1, 10.0, 150.0);
        // Published at 100, before the binding: all of it.
        assert_eq!(own.extra(1, &view(100.0)), 10.0);
        // Published at 400: the view saw 250 ms of the 1000 ms window, so 75 % is added.
        let v = view(400.0);
        own.settle(&v);
        assert!((own.extra(1, &v) - 7.5).abs() < 1e-12);
        // At 1150 the whole window has seen it: nothing added, and it is forgotten at the next
        // settle after that.
        assert_eq!(own.extra(1, &view(1150.0)), 0.0);
        own.settle(&view(1200.0));
        assert!(own.is_empty());
    }

    #[test]
    fn off_records_nothing_and_names_parse() {
        let mut own = OwnLoad::new(OwnBindings::Off, 1000.0);
        own.record(0, 10.0, 0.0);
        assert!(own.is_empty());
        assert_eq!(own.extra(0, &view(0.0)), 0.0);
        for m in OwnBindings::ALL {
            assert_eq!(OwnBindings::parse(m.name()), Ok(m));
        }
        assert!(
            OwnBindings::parse("on")
                .unwrap_err()
                .contains("expected `off`")
        );
    }
}
