//! The retry budget of retry-on-reset (the forward layer's retry): over a sliding window,
//! retries may be at most `min_per_s` × window + `budget_ratio` × the queries received
//! (Finagle's `RetryBudget`). Its settings are the configuration's ([`RetrySettings`]).

use crate::config::RetrySettings;
use crate::config::retry::MAX_WINDOW_S;
use std::sync::atomic::{AtomicU64, Ordering};

/// One second of the budget's window: the queries received and the retries sent in it.
#[derive(Default)]
struct Bucket {
    /// The second it counts (since the gateway started), plus one (0: never used).
    sec: AtomicU64,
    queries: AtomicU64,
    retries: AtomicU64,
}

/// The retry budget: queries and retries counted per second in a ring of atomics (no lock on
/// the query path). Counts are approximate where two threads roll one bucket over at the
/// same instant; the budget is a bound on load, not an exact quota.
pub(crate) struct RetryBudget {
    ring: Vec<Bucket>,
}

impl Default for RetryBudget {
    fn default() -> Self {
        Self {
            ring: (0..MAX_WINDOW_S).map(|_| Bucket::default()).collect(),
        }
    }
}

impl RetryBudget {
    /// The bucket of second `now_s`, emptied first if it still holds an older second.
    fn bucket(&self, now_s: u64) -> &Bucket {
        let b = &self.ring[(now_s % MAX_WINDOW_S) as usize];
        let tag = now_s + 1;
        let old = b.sec.load(Ordering::Acquire);
        if old != tag
            && b.sec
                .compare_exchange(old, tag, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            b.queries.store(0, Ordering::Release);
            b.retries.store(0, Ordering::Release);
        }
        b
    }

    /// Counts one query received at second `now_s`.
    pub(crate) fn deposit(&self, now_s: u64) {
        self.bucket(now_s).queries.fetch_add(1, Ordering::AcqRel);
    }

    /// Queries and retries of the `window_s` seconds up to `now_s`.
    fn totals(&self, now_s: u64, window_s: u64) -> (u64, u64) {
        let (mut q, mut r) = (0, 0);
        for b in &self.ring {
            let tag = b.sec.load(Ordering::Acquire);
            if tag != 0 && tag - 1 <= now_s && now_s - (tag - 1) < window_s {
                q += b.queries.load(Ordering::Acquire);
                r += b.retries.load(Ordering::Acquire);
            }
        }
        (q, r)
    }

    /// Takes one retry at second `now_s` if the budget of `s` allows it.
    pub(crate) fn try_withdraw(&self, now_s: u64, s: &RetrySettings) -> bool {
        let window_s = (s.window_ms / 1000).clamp(1, MAX_WINDOW_S);
        let (queries, retries) = self.totals(now_s, window_s);
        let allowed = s.min_per_s * window_s as f64 + s.budget_ratio * queries as f64;
        if (retries + 1) as f64 > allowed {
            return false;
        }
        self.bucket(now_s).retries.fetch_add(1, Ordering::AcqRel);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(ratio: f64, min_per_s: f64, window_ms: u64) -> RetrySettings {
        RetrySettings {
            enabled: true,
            budget_ratio: ratio,
            min_per_s,
            window_ms,
        }
    }

    /// 100 queries in a 10 s window at 20 %: 20 retries pass, the 21st is refused; queries
    /// that fall out of the window stop paying for retries.
    #[test]
    fn the_budget_bounds_retries_to_a_share_of_recent_queries() {
        let b = RetryBudget::default();
        let s = settings(0.2, 0.0, 10_000);
        for i in 0..100 {
            b.deposit(i % 5);
        }
        let passed = (0..50).filter(|_| b.try_withdraw(5, &s)).count();
        assert_eq!(passed, 20);
        assert!(!b.try_withdraw(9, &s));
        // At second 14 the queries of seconds 0–4 have left the window (the retries of
        // second 5 have not): nothing is allowed until new queries come.
        assert!(!b.try_withdraw(14, &s));
        for _ in 0..200 {
            b.deposit(14);
        }
        // 200 × 0.2 = 40 allowed, 20 still counted from second 5.
        let passed = (0..50).filter(|_| b.try_withdraw(14, &s)).count();
        assert_eq!(passed, 20);
        // Once second 5 leaves the window, its 20 retries no longer count.
        let passed = (0..50).filter(|_| b.try_withdraw(15, &s)).count();
        assert_eq!(passed, 20);
        // At second 24 second 14's queries have left; second 15's retries still count.
        assert!(!b.try_withdraw(24, &s));
    }

    /// Without traffic the floor alone allows min_per_s × window retries; a ratio of 0 and a
    /// floor of 0 allow none.
    #[test]
    fn the_floor_allows_a_few_retries_without_traffic() {
        let b = RetryBudget::default();
        let s = settings(0.2, 1.0, 3000);
        let passed = (0..10).filter(|_| b.try_withdraw(100, &s)).count();
        assert_eq!(passed, 3);
        let none = RetryBudget::default();
        for _ in 0..1000 {
            none.deposit(1);
        }
        assert!(!none.try_withdraw(1, &settings(0.0, 0.0, 1000)));
    }

    #[test]
    fn settings_are_checked_naming_the_key() {
        assert!(RetrySettings::default().validate().is_ok());
        let e = settings(1.5, 0.0, 1000).validate().unwrap_err();
        assert!(e.starts_with("retry.budget_ratio"), "{e}");
        let e = settings(0.2, -1.0, 1000).validate().unwrap_err();
        assert!(e.starts_with("retry.min_per_s"), "{e}");
        for w in [0, 1500, 61_000] {
            let e = settings(0.2, 1.0, w).validate().unwrap_err();
            assert!(e.starts_with("retry.window_ms"), "{e}");
        }
    }
}
