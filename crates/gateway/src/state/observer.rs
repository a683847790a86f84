//! The meta-policy's window observer at a live gateway: what the agent sees of each window
//! (docs/model.md §9). Queries are counted per demand bucket in atomics, so the forwarding path
//! takes no lock; the counts are folded into the core's [`WindowObserver`] when a window
//! closes. Load publications (every Δ) and window closes (every T) take the observer's own
//! lock, which no query touches.

use arc_swap::ArcSwapOption;
use continuum_core::load::LoadView;
use continuum_core::observe::{DemandBuckets, WindowObservation, WindowObserver};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Per-bucket query counts of one scheduler since the last window close.
struct Counts {
    sched: usize,
    buckets: DemandBuckets,
    per_bucket: Vec<AtomicU64>,
}

/// The live window observer: absent until an agent is configured.
#[derive(Default)]
pub(crate) struct MetaObserver {
    window: Mutex<Option<WindowObserver>>,
    counts: ArcSwapOption<Counts>,
}

impl MetaObserver {
    /// Starts observing for scheduler `sched` with `observer` (a fresh window), or stops
    /// observing with `None` (no agent). Counts not yet folded are dropped with the old window.
    pub(crate) fn install(&self, sched: usize, observer: Option<WindowObserver>) {
        let mut w = self.window.lock().expect("observer lock");
        self.counts.store(observer.as_ref().map(|o| {
            std::sync::Arc::new(Counts {
                sched,
                buckets: o.buckets().clone(),
                per_bucket: (0..o.buckets().len()).map(|_| AtomicU64::new(0)).collect(),
            })
        }));
        *w = observer;
    }

    /// Whether an agent's window is being observed.
    #[cfg(test)]
    fn is_active(&self) -> bool {
        self.counts.load().is_some()
    }

    /// The demand bucket of a stream with this deadline and frame rate (0 without an agent).
    pub(crate) fn bucket_of(&self, max_delay_ms: f64, rate_qps: f64) -> usize {
        self.counts
            .load()
            .as_ref()
            .map_or(0, |c| c.buckets.index(max_delay_ms, rate_qps))
    }

    /// One query arrived from a stream in `bucket`: an atomic add, no lock.
    #[inline]
    pub(crate) fn count_query(&self, bucket: usize) {
        if let Some(c) = self.counts.load().as_ref()
            && let Some(n) = c.per_bucket.get(bucket)
        {
            n.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A load view was published.
    pub(crate) fn load_published(&self, view: &LoadView) {
        if let Some(o) = self.window.lock().expect("observer lock").as_mut() {
            o.load_published(view);
        }
    }

    /// Closes the window at `now_ms`: folds the query counts in and returns what the window
    /// showed (`None` without an agent).
    pub(crate) fn close(&self, now_ms: f64, view: &LoadView) -> Option<WindowObservation> {
        let mut w = self.window.lock().expect("observer lock");
        let o = w.as_mut()?;
        if let Some(c) = self.counts.load().as_ref() {
            for (b, n) in c.per_bucket.iter().enumerate() {
                let n = n.swap(0, Ordering::Relaxed);
                if n > 0 {
                    o.incoming_queries(c.sched, b, n as f64);
                }
            }
        }
        Some(o.close(now_ms, view))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counting through the atomics and folding at close gives the window the core's observer
    /// computes when fed query by query.
    #[test]
    fn folded_counts_equal_direct_counting() {
        let buckets = DemandBuckets::default();
        let nb = buckets.len();
        let view = LoadView::idle(2);
        let mut direct = WindowObserver::new(buckets.clone(), 2, 3, 0.0);
        let live = MetaObserver::default();
        assert!(!live.is_active());
        live.count_query(0); // no agent: ignored, no panic
        live.install(1, Some(WindowObserver::new(buckets, 2, 3, 0.0)));
        assert!(live.is_active());
        let arrivals = [(0usize, 7u32), (nb - 1, 3), (0, 2)];
        for &(b, n) in &arrivals {
            for _ in 0..n {
                live.count_query(b);
                direct.incoming_query(1, b);
            }
        }
        live.count_query(nb + 5); // out of range: ignored
        live.load_published(&view);
        direct.load_published(&view);
        let got = live.close(2_000.0, &view).expect("active");
        let want = direct.close(2_000.0, &view);
        assert_eq!(got, want);
        assert_eq!(got.incoming(1)[0], 9.0 / 2.0);
        // The next window starts from zero.
        let next = live.close(4_000.0, &view).expect("active");
        assert!(next.incoming_qps.iter().all(|&q| q == 0.0));
        live.install(1, None);
        assert!(live.close(5_000.0, &view).is_none());
    }
}
