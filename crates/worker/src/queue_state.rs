//! Admission (docs/model.md §7): a query whose deadline cannot be met given the work already queued is
//! refused at once with a `rejected` status, never queued to miss its deadline silently.
//!
//! The worker estimates when a new query of `items` items would be answered: the rest of the
//! batch now running, then the queued items (its own included) in batches of up to B, each
//! batch taking the measured batch time for its size, plus the batching wait when its own batch
//! would not be full. Batch time of k items is interpolated between the measured times of a
//! batch of 1 and a full batch (both warmed up at load, then tracked with a moving average).

use std::time::Duration;

/// What the estimate needs to know about a variant at the moment a query arrives.
#[derive(Debug, Clone, Copy)]
pub struct QueueState {
    /// Items waiting in the queue (not yet in a running batch).
    pub queued_items: usize,
    /// Time left of the batch now running (zero when idle).
    pub running_left: Duration,
    /// Batch size B.
    pub max_batch: usize,
    /// Measured time of a batch of one item.
    pub batch1: Duration,
    /// Measured time of a full batch of B items.
    pub batch_full: Duration,
    /// Longest wait for a batch to fill.
    pub max_queue_delay: Duration,
}

impl QueueState {
    /// Estimated time of a batch of `k` items (1 ≤ k ≤ B): linear between `batch1` and
    /// `batch_full`.
    pub fn batch_time(&self, k: usize) -> Duration {
        let b = self.max_batch.max(1);
        let k = k.clamp(1, b);
        if b == 1 {
            return self.batch1;
        }
        let t1 = self.batch1.as_secs_f64();
        let tb = self.batch_full.as_secs_f64().max(t1);
        Duration::from_secs_f64(t1 + (tb - t1) * (k - 1) as f64 / (b - 1) as f64)
    }

    /// Estimated time from now until a new query of `items` items is answered: the batch that
    /// holds its last item starts when docs/model.md §7's rule says ([`continuum_core::admission::batch_start`],
    /// here with the worker's one replica, free once the running batch ends) and takes the
    /// time of its size, plus the batching wait when that batch would not be full.
    pub fn estimate(&self, items: usize) -> Duration {
        let b = self.max_batch.max(1);
        let total = self.queued_items + items.max(1);
        let k = (total - 1) / b;
        let rest = total % b;
        let mut free = [self.running_left.as_secs_f64() * 1000.0];
        let full_ms = self.batch_time(b).as_secs_f64() * 1000.0;
        let start_ms = continuum_core::admission::batch_start(&mut free, k, full_ms);
        let own = if rest == 0 {
            self.batch_time(b)
        } else {
            self.batch_time(rest) + self.max_queue_delay
        };
        Duration::from_secs_f64(start_ms / 1000.0) + own
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(queued: usize) -> QueueState {
        QueueState {
            queued_items: queued,
            running_left: Duration::from_millis(3),
            max_batch: 4,
            batch1: Duration::from_millis(2),
            batch_full: Duration::from_millis(5),
            max_queue_delay: Duration::from_millis(1),
        }
    }

    #[test]
    fn batch_time_interpolates() {
        let s = state(0);
        assert_eq!(s.batch_time(1), Duration::from_millis(2));
        assert_eq!(s.batch_time(4), Duration::from_millis(5));
        assert_eq!(s.batch_time(9), Duration::from_millis(5));
        assert!((s.batch_time(2).as_secs_f64() - 0.003).abs() < 1e-9);
    }

    #[test]
    fn estimate_counts_queued_batches() {
        // Idle but running 3 ms, alone: 3 + t(1) + wait 1 = 6 ms.
        assert!((state(0).estimate(1).as_secs_f64() - 0.006).abs() < 1e-9);
        // 3 queued + 1 = one full batch: 3 + 5 = 8 ms, no batching wait.
        assert!((state(3).estimate(1).as_secs_f64() - 0.008).abs() < 1e-9);
        // 8 queued + 1: two full batches and one of 1: 3 + 10 + 2 + 1 = 16 ms.
        assert!((state(8).estimate(1).as_secs_f64() - 0.016).abs() < 1e-9);
    }
}
