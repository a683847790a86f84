//! A simulated worker: replicas serving one FIFO queue in batches of up to B_v, its admission
//! rule, and its load and throughput meters.

use crate::load::RateMeter;
use std::collections::VecDeque;

/// When a query reaching a worker is dropped (counted as rejected) instead of queued.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum QueueBound {
    /// Drop it when the work already queued cannot finish in time for its deadline (default).
    Deadline,
    /// Drop it when this many queries are already waiting.
    MaxQueries(u32),
    /// Never drop.
    Unbounded,
}

/// One replica: the batch it is processing.
#[derive(Debug, Clone, Default)]
pub struct Server {
    /// Query slots of the batch in progress (empty when idle).
    pub batch: Vec<u32>,
    /// When the batch in progress finishes, ms.
    pub free_at: f64,
}

/// A worker's dynamic state.
#[derive(Debug, Clone)]
pub struct WorkerState {
    /// Waiting query slots, oldest first.
    pub queue: VecDeque<u32>,
    /// Replicas.
    pub servers: Vec<Server>,
    /// Open streams bound here.
    pub streams: u32,
    /// Servers with no batch in progress (a stack of indices).
    pub idle: Vec<u32>,
    /// Incoming normalised load.
    pub load: RateMeter,
    /// Answered queries.
    pub done: RateMeter,
}

impl WorkerState {
    /// An idle worker with `replicas` servers and meters of `buckets` × `bucket_ms`.
    pub fn new(replicas: u32, batch: u32, buckets: usize, bucket_ms: f64) -> Self {
        Self {
            queue: VecDeque::new(),
            servers: (0..replicas)
                .map(|_| Server {
                    batch: Vec::with_capacity(batch as usize),
                    free_at: 0.0,
                })
                .collect(),
            streams: 0,
            idle: (0..replicas).rev().collect(),
            load: RateMeter::new(buckets, bucket_ms),
            done: RateMeter::new(buckets, bucket_ms),
        }
    }

    /// Whether some server is idle.
    #[inline]
    pub fn has_idle_server(&self) -> bool {
        !self.idle.is_empty()
    }

    /// Estimated time at which a query arriving now would finish, given the queue and the
    /// batches in progress, when one batch takes `batch_ms` (used by [`QueueBound::Deadline`]):
    /// the finish of the batch that will hold it, on the replica that will take that batch
    /// (SPEC §7, [`crate::admission::batch_start`]). `scratch` is reused across calls.
    pub fn estimated_finish(
        &self,
        now: f64,
        batch: u32,
        batch_ms: f64,
        scratch: &mut Vec<f64>,
    ) -> f64 {
        if self.has_idle_server() {
            return now + batch_ms;
        }
        scratch.clear();
        scratch.extend(self.servers.iter().map(|s| s.free_at.max(now)));
        let batches_ahead = self.queue.len() / batch as usize;
        crate::admission::batch_start(scratch, batches_ahead, batch_ms) + batch_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_counts_full_batches_ahead_per_replica() {
        let mut w = WorkerState::new(2, 4, 1, 100.0);
        let mut scratch = Vec::new();
        assert_eq!(w.estimated_finish(10.0, 4, 5.0, &mut scratch), 15.0);
        w.idle.clear();
        w.servers[0].free_at = 12.0;
        w.servers[1].free_at = 14.0;
        // 9 queued = 2 full batches ahead: batch 0 on replica 0 at 12, batch 1 on replica 1 at
        // 14, ours on replica 0 at 17, finishing at 22.
        w.queue.extend(0..9);
        assert_eq!(w.estimated_finish(10.0, 4, 5.0, &mut scratch), 22.0);
    }

    /// SPEC §7: the estimate follows the replica that will take the query's batch. Replica 0
    /// frees at 12, replica 1 at 20; one query of batch size 1 waits. The waiting query goes to
    /// replica 0 at 12, so ours goes to replica 1 at 20 and finishes at 30 — not at 22, which
    /// starting from the earliest free replica would predict.
    #[test]
    fn estimate_follows_the_replica_that_takes_the_batch() {
        let mut w = WorkerState::new(2, 1, 1, 100.0);
        w.idle.clear();
        w.servers[0].free_at = 12.0;
        w.servers[1].free_at = 20.0;
        w.queue.push_back(0);
        assert_eq!(w.estimated_finish(10.0, 1, 10.0, &mut Vec::new()), 30.0);
    }
}
