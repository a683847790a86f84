//! A simulated worker: replicas serving one FIFO queue in batches of up to B_v, its admission
//! rule, and its load and throughput meters.

use continuum_core::load::RateMeter;
use std::collections::VecDeque;

pub use continuum_core::admission::QueueBound;

/// One replica: the batch it is processing.
#[derive(Debug, Clone, Default)]
pub(crate) struct Server {
    /// Query slots of the batch in progress (empty when idle).
    pub batch: Vec<u32>,
    /// When the batch in progress finishes, ms.
    pub free_at: f64,
    /// Unloaded by a deployment change: it takes no batch until loaded again.
    pub retired: bool,
}

/// A query waiting in a worker's queue, with what taking it into a batch needs (so that
/// forming a batch does not load the query records, which a large run keeps beyond the caches).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Waiting {
    /// Its query slot.
    pub qid: u32,
    /// Its size ζ, KB (the query record's).
    pub frame_kb: f32,
    /// When it reached the worker, ms.
    pub t_arrive: f64,
}

/// A worker's dynamic state.
#[derive(Debug, Clone)]
pub(crate) struct WorkerState {
    /// Waiting queries, oldest first.
    pub queue: VecDeque<Waiting>,
    /// Replicas.
    pub servers: Vec<Server>,
    /// Open streams bound here.
    pub streams: u32,
    /// Servers with no batch in progress (a stack of indices).
    pub idle: Vec<u32>,
    /// Every active (not retired) server's `free_at`, sorted ascending (kept by
    /// [`Self::set_free_at`]), so the queue bound never sorts per query.
    free_sorted: Vec<f64>,
    /// Active servers an idle server may leave behind when it retires: the worker's target
    /// replicas during a deployment change (its replica count otherwise). A server that
    /// finds the queue empty while more than this many are active retires.
    pub keep: u32,
    /// Incoming normalised load.
    pub load: RateMeter,
    /// Answered queries.
    pub done: RateMeter,
}

impl WorkerState {
    /// An idle worker with `replicas` servers and meters of `buckets` × `bucket_ms`.
    pub(crate) fn new(replicas: u32, batch: u32, buckets: usize, bucket_ms: f64) -> Self {
        Self {
            queue: VecDeque::new(),
            servers: (0..replicas)
                .map(|_| Server {
                    batch: Vec::with_capacity(batch as usize),
                    free_at: 0.0,
                    retired: false,
                })
                .collect(),
            streams: 0,
            idle: (0..replicas).rev().collect(),
            free_sorted: vec![0.0; replicas as usize],
            keep: replicas,
            load: RateMeter::new(buckets, bucket_ms),
            done: RateMeter::new(buckets, bucket_ms),
        }
    }

    /// Whether some server is idle.
    #[inline]
    pub(crate) fn has_idle_server(&self) -> bool {
        !self.idle.is_empty()
    }

    /// Servers that are loaded (not retired).
    #[inline]
    pub(crate) fn active(&self) -> u32 {
        self.free_sorted.len() as u32
    }

    /// Unloads idle server `s` (not on the idle stack any more).
    pub(crate) fn retire(&mut self, s: usize) {
        let srv = &mut self.servers[s];
        debug_assert!(!srv.retired && srv.batch.is_empty());
        srv.retired = true;
        let at = self.free_sorted.partition_point(|x| *x < srv.free_at);
        debug_assert_eq!(self.free_sorted[at], srv.free_at);
        self.free_sorted.remove(at);
    }

    /// Unloads idle servers while more than [`Self::keep`] are active.
    pub(crate) fn retire_idle_surplus(&mut self) {
        while self.active() > self.keep {
            let Some(s) = self.idle.pop() else {
                return;
            };
            self.retire(s as usize);
        }
    }

    /// Loads one more server, idle from `now`; returns its index (a retired slot is reused).
    pub(crate) fn add_server(&mut self, now: f64, batch: u32) -> usize {
        let s = match self.servers.iter().position(|s| s.retired) {
            Some(s) => s,
            None => {
                self.servers.push(Server {
                    batch: Vec::with_capacity(batch as usize),
                    free_at: now,
                    retired: true,
                });
                self.servers.len() - 1
            }
        };
        let srv = &mut self.servers[s];
        srv.retired = false;
        srv.free_at = now;
        let at = self.free_sorted.partition_point(|x| *x <= now);
        self.free_sorted.insert(at, now);
        self.idle.push(s as u32);
        s
    }

    /// Sets when server `s` finishes its batch.
    #[inline]
    pub(crate) fn set_free_at(&mut self, s: usize, t: f64) {
        let old = std::mem::replace(&mut self.servers[s].free_at, t);
        let f = &mut self.free_sorted;
        // Replace one copy of `old` by `t`, shifting the entries between them.
        let mut i = f.partition_point(|x| *x < old);
        debug_assert_eq!(f[i], old);
        if t >= old {
            while i + 1 < f.len() && f[i + 1] < t {
                f[i] = f[i + 1];
                i += 1;
            }
        } else {
            while i > 0 && f[i - 1] > t {
                f[i] = f[i - 1];
                i -= 1;
            }
        }
        f[i] = t;
    }

    /// Estimated time at which a query arriving now would finish, given the queue and the
    /// batches in progress, when one batch takes `batch_ms` (used by [`QueueBound::Deadline`]):
    /// the finish of the batch that will hold it, on the replica that will take that batch
    /// (docs/model.md §7, [`continuum_core::admission::batch_start`]). `scratch` is reused across calls.
    pub(crate) fn estimated_finish(
        &self,
        now: f64,
        batch: u32,
        batch_ms: f64,
        scratch: &mut Vec<f64>,
    ) -> f64 {
        if self.has_idle_server() {
            return now + batch_ms;
        }
        if self.free_sorted.is_empty() {
            // Every replica unloaded: nothing will ever take the query.
            return f64::INFINITY;
        }
        // Every server is busy, so each frees no earlier than now: its `free_at` is the time
        // of its pending batch completion.
        debug_assert!(self.free_sorted[0] >= now);
        let batches_ahead = self.queue.len() / batch as usize;
        continuum_core::admission::batch_start_sorted(
            &self.free_sorted,
            batches_ahead,
            batch_ms,
            scratch,
        ) + batch_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(qid: u32) -> Waiting {
        Waiting {
            qid,
            frame_kb: 1.0,
            t_arrive: 0.0,
        }
    }

    #[test]
    fn estimate_counts_full_batches_ahead_per_replica() {
        let mut w = WorkerState::new(2, 4, 1, 100.0);
        let mut scratch = Vec::new();
        assert_eq!(w.estimated_finish(10.0, 4, 5.0, &mut scratch), 15.0);
        w.idle.clear();
        w.set_free_at(0, 12.0);
        w.set_free_at(1, 14.0);
        // 9 queued = 2 full batches ahead: batch 0 on replica 0 at 12, batch 1 on replica 1 at
        // 14, ours on replica 0 at 17, finishing at 22.
        w.queue.extend((0..9).map(waiting));
        assert_eq!(w.estimated_finish(10.0, 4, 5.0, &mut scratch), 22.0);
    }

    /// docs/model.md §7: the estimate follows the replica that will take the query's batch. Replica 0
    /// frees at 12, replica 1 at 20; one query of batch size 1 waits. The waiting query goes to
    /// replica 0 at 12, so ours goes to replica 1 at 20 and finishes at 30 — not at 22, which
    /// starting from the earliest free replica would predict.
    #[test]
    fn estimate_follows_the_replica_that_takes_the_batch() {
        let mut w = WorkerState::new(2, 1, 1, 100.0);
        w.idle.clear();
        w.set_free_at(0, 12.0);
        w.set_free_at(1, 20.0);
        w.queue.push_back(waiting(0));
        assert_eq!(w.estimated_finish(10.0, 1, 10.0, &mut Vec::new()), 30.0);
    }

    /// Retired servers leave the estimate; a worker with none left never finishes a query; a
    /// loaded server is idle at once.
    #[test]
    fn retired_servers_leave_the_estimate() {
        let mut w = WorkerState::new(2, 1, 1, 100.0);
        w.idle.clear();
        w.set_free_at(0, 12.0);
        w.set_free_at(1, 20.0);
        w.queue.push_back(waiting(0));
        // Replica 1 finishes and retires (keep 1): the waiting query goes to replica 0 at 12,
        // ours after it at 22.
        w.keep = 1;
        w.idle.push(1);
        w.retire_idle_surplus();
        assert_eq!(w.active(), 1);
        w.idle.clear();
        assert_eq!(w.estimated_finish(10.0, 1, 10.0, &mut Vec::new()), 32.0);
        w.idle.push(0);
        w.keep = 0;
        w.retire_idle_surplus();
        assert_eq!(w.active(), 0);
        assert_eq!(
            w.estimated_finish(10.0, 1, 10.0, &mut Vec::new()),
            f64::INFINITY
        );
        let s = w.add_server(40.0, 1);
        assert!(s < 2, "a retired slot is reused");
        assert_eq!(w.active(), 1);
        assert_eq!(w.estimated_finish(40.0, 1, 10.0, &mut Vec::new()), 50.0);
    }

    #[test]
    fn free_times_stay_sorted() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(5);
        let mut w = WorkerState::new(5, 1, 1, 100.0);
        for _ in 0..1000 {
            let s = rng.random_range(0..5);
            w.set_free_at(s, f64::from(rng.random_range(0..40u32)));
            let mut want: Vec<f64> = w.servers.iter().map(|s| s.free_at).collect();
            want.sort_unstable_by(f64::total_cmp);
            assert_eq!(w.free_sorted, want);
        }
    }
}
