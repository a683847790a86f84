//! A sliding-window rate meter over fixed buckets: add amounts as they happen, roll the window
//! at each publication, read the rate over the last `buckets` rolls.

/// Sums amounts over a window of `n` buckets of equal width; [`RateMeter::rate_per_s`] gives
/// the mean rate over the full window.
#[derive(Debug, Clone)]
pub struct RateMeter {
    /// Closed buckets; the entry at `current` is stale until the bucket closes.
    buckets: Vec<f64>,
    current: usize,
    /// The sum of the bucket being filled, kept inline: adding touches no other memory.
    filling: f64,
    window_sum: f64,
    window_s: f64,
}

impl RateMeter {
    /// A meter over `n` buckets of `bucket_ms` each (n ≥ 1).
    pub fn new(n: usize, bucket_ms: f64) -> Self {
        let n = n.max(1);
        Self {
            buckets: vec![0.0; n],
            current: 0,
            filling: 0.0,
            window_sum: 0.0,
            window_s: n as f64 * bucket_ms / 1000.0,
        }
    }

    /// Adds `x` to the current bucket.
    #[inline]
    pub fn add(&mut self, x: f64) {
        // The same sum, in the same order, as adding into the bucket (which starts at 0).
        self.filling += x;
        self.window_sum += x;
    }

    /// Closes the current bucket and opens the next, dropping the oldest; returns the rate per
    /// second over the window that just closed.
    pub fn roll(&mut self) -> f64 {
        let rate = self.rate_per_s();
        self.buckets[self.current] = std::mem::take(&mut self.filling);
        self.current = (self.current + 1) % self.buckets.len();
        self.window_sum -= self.buckets[self.current];
        self.buckets[self.current] = 0.0;
        // Guard against drift of the running sum.
        if self.current == 0 {
            self.window_sum = self.buckets.iter().sum();
        }
        rate
    }

    /// Mean rate per second over the window (including the bucket being filled).
    #[inline]
    pub fn rate_per_s(&self) -> f64 {
        self.window_sum / self.window_s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_covers_the_last_n_buckets() {
        let mut m = RateMeter::new(2, 500.0); // 1 s window
        m.add(3.0);
        assert_eq!(m.roll(), 3.0);
        m.add(1.0);
        assert_eq!(m.roll(), 4.0);
        // The first bucket (3.0) has now been dropped.
        assert_eq!(m.rate_per_s(), 1.0);
        assert_eq!(m.roll(), 1.0);
        assert_eq!(m.rate_per_s(), 0.0);
    }
}
