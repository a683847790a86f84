//! A log line written at most once per period, for events a hostile or broken peer can repeat
//! at will (failed accepts, refused connections, failed handshakes).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A log line that is written at most once per period; the others are counted and the count
/// is reported with the next line written.
pub struct RateLimitedLog {
    period: Duration,
    last: std::sync::Mutex<Option<Instant>>,
    suppressed: AtomicU64,
}

impl RateLimitedLog {
    /// At most one line per `period`.
    pub fn new(period: Duration) -> Self {
        Self {
            period,
            last: std::sync::Mutex::new(None),
            suppressed: AtomicU64::new(0),
        }
    }

    /// Whether to write a line now; if so, how many were suppressed since the last one.
    pub fn allow(&self) -> Option<u64> {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if last.is_some_and(|t| now.duration_since(t) < self.period) {
            self.suppressed.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        *last = Some(now);
        Some(self.suppressed.swap(0, Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limited_log_counts_what_it_suppresses() {
        let l = RateLimitedLog::new(Duration::from_millis(50));
        assert_eq!(l.allow(), Some(0));
        assert_eq!((l.allow(), l.allow()), (None, None));
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(l.allow(), Some(2));
    }
}
