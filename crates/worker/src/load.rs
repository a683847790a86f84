//! Load measurement per variant (docs/model.md §8): incoming qps, throughput and open streams over a
//! sliding window, and the load report the worker pushes to gateways every Δ ms.

pub use continuum_wire::{LoadReport, VariantLoad};
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// Sliding-window counters of one variant.
#[derive(Debug)]
pub struct Meter {
    window: Duration,
    arrivals: VecDeque<(Instant, u32)>,
    completions: VecDeque<(Instant, u32)>,
    streams: HashMap<u64, Instant>,
    /// Items answered since start.
    pub served_total: u64,
    /// Items refused since start.
    pub rejected_total: u64,
}

impl Meter {
    /// An empty meter over `window`.
    pub fn new(window: Duration) -> Self {
        Self {
            window,
            arrivals: VecDeque::new(),
            completions: VecDeque::new(),
            streams: HashMap::new(),
            served_total: 0,
            rejected_total: 0,
        }
    }

    /// Records an offered query of `items` items from `stream` (if the client named one).
    pub fn arrival(&mut self, now: Instant, items: usize, stream: Option<u64>) {
        self.arrivals.push_back((now, items as u32));
        if let Some(s) = stream {
            self.streams.insert(s, now);
        }
        self.trim(now);
    }

    /// Records answered items.
    pub fn completion(&mut self, now: Instant, items: usize) {
        self.completions.push_back((now, items as u32));
        self.served_total += items as u64;
        self.trim(now);
    }

    /// Records refused items.
    pub fn rejection(&mut self, items: usize) {
        self.rejected_total += items as u64;
    }

    fn trim(&mut self, now: Instant) {
        let w = self.window;
        let old = |t: &Instant| now.saturating_duration_since(*t) > w;
        while self.arrivals.front().is_some_and(|(t, _)| old(t)) {
            self.arrivals.pop_front();
        }
        while self.completions.front().is_some_and(|(t, _)| old(t)) {
            self.completions.pop_front();
        }
        if self.streams.len() > 1024 || self.streams.values().any(old) {
            self.streams.retain(|_, t| !old(t));
        }
    }

    /// (incoming qps, throughput qps, open streams) over the window ending at `now`.
    pub fn rates(&mut self, now: Instant) -> (f64, f64, usize) {
        self.trim(now);
        let w = self.window.as_secs_f64();
        let sum = |q: &VecDeque<(Instant, u32)>| q.iter().map(|x| x.1 as f64).sum::<f64>();
        (
            sum(&self.arrivals) / w,
            sum(&self.completions) / w,
            self.streams.len(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_over_the_window() {
        let t0 = Instant::now();
        let mut m = Meter::new(Duration::from_secs(1));
        for i in 0..10 {
            m.arrival(t0 + Duration::from_millis(i * 50), 2, Some(i % 3));
        }
        m.completion(t0 + Duration::from_millis(500), 4);
        let (inc, thr, streams) = m.rates(t0 + Duration::from_millis(600));
        assert_eq!((inc, thr, streams), (20.0, 4.0, 3));
        // 2 s later everything has left the window.
        assert_eq!(m.rates(t0 + Duration::from_secs(3)), (0.0, 0.0, 0));
        assert_eq!(m.served_total, 4);
    }
}
