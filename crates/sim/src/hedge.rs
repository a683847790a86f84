//! The life of query records under tail-latency mitigation ([`continuum_core::mitigation`]): settling a
//! query's one outcome, reissuing a late query as a second copy, cancelling the loser, and
//! freeing records.
//!
//! A query has one record, its *original*, and under `reissue` or `restart` possibly a second,
//! its *copy* (`twin` links them both ways). The outcome belongs to the query, so it is counted once, on
//! the original (`SETTLED`): the first answer settles it; it is rejected when every record
//! ended unanswered. A record is freed when nothing refers to it any more (`refs`): its own
//! passage through network, queue, batch and answer; a pending reissue time; a live copy.
//!
//! Timing rules (modelling choices):
//! - a query whose batch has finished by its reissue time is not reissued: its answer is on
//!   its way back;
//! - the copy leaves from the scheduler, which holds the query: it pays the network to the new
//!   worker, not the radio uplink again ([`continuum_core::mitigation::reissue_demand`]);
//! - while both copies live, each answer travels as an event and the first to reach the client
//!   wins; a copy still queued then is cancelled (removed from its queue), one already in a
//!   batch runs to the end and its work counts as waste.

use super::queue::Kind;
use super::stream::net_delay;
use super::{NO_QUERY, NO_STREAM, Query, Simulation};
use continuum_core::feasibility::{Candidate, Demand, feasible};
use continuum_core::metrics::Outcome;
use continuum_core::mitigation::{reissue_demand, reissue_target};

/// The record is a copy (its `twin` is the original).
pub(super) const COPY: u8 = 1;
/// The query's outcome is counted (on originals only).
pub(super) const SETTLED: u8 = 2;
/// The original's own passage has ended (answered, dropped or cancelled).
pub(super) const DONE: u8 = 4;
/// The record is a copy sent by `restart` (not `reissue`).
pub(super) const RESTART: u8 = 8;
/// The query was degraded by `tdp` (on originals only): its records still about are dropped
/// when they arrive or answer, without counting as cancelled or wasted.
pub(super) const DEGRADED: u8 = 16;
/// The record is a task of a job under a per-job mitigation (`restart`, `tdp`): its outcome
/// counts in its job at once, and it takes the paths of mitigated queries ([`super::jobs`]).
pub(super) const JOB: u8 = 32;

impl Simulation {
    /// The original of record `qid` (itself unless a copy).
    #[inline]
    pub(super) fn original_of(&self, qid: u32) -> u32 {
        let q = self.queries.get(qid);
        if q.flags & COPY != 0 { q.twin } else { qid }
    }

    /// Whether the query of record `qid` already has its outcome.
    #[inline]
    pub(super) fn is_settled(&self, qid: u32) -> bool {
        self.queries.get(self.original_of(qid)).flags & SETTLED != 0
    }

    /// Whether record `qid` is one of two live copies of a query (so its answer must race the
    /// other's).
    #[inline]
    pub(super) fn is_hedged(&self, qid: u32) -> bool {
        let q = self.queries.get(qid);
        q.flags & COPY != 0 || q.twin != NO_QUERY
    }

    /// Counts the outcome of the query whose original is `orig`.
    pub(super) fn settle(&mut self, orig: u32, outcome: Outcome, latency_ms: Option<f64>) {
        let q = self.queries.get_mut(orig);
        debug_assert!(q.flags & (SETTLED | COPY) == 0);
        q.flags |= SETTLED;
        let q = *q;
        self.count_outcome(&q, orig, outcome, latency_ms);
    }

    /// Records the one outcome of query `q` (an original, record `qid`): the run's metrics,
    /// the counts by binding window, its stream's tail, its job.
    #[inline]
    pub(super) fn count_outcome(
        &mut self,
        q: &Query,
        qid: u32,
        outcome: Outcome,
        latency_ms: Option<f64>,
    ) {
        self.metrics
            .outcome(q.t_emit, q.sched, q.app, outcome, latency_ms);
        self.by_bind
            .count(q.bind_window, q.sched, q.app, outcome as usize);
        let f = &mut self.facts[q.stream as usize];
        f.settled += 1;
        f.success += u32::from(outcome == Outcome::Success);
        let l = latency_ms.map(|l| l as f32);
        if let Some(l) = l {
            self.tails.push(q.stream, l, &mut self.facts);
        }
        self.job_task_settled(q, qid, outcome, l);
    }

    /// Record `qid` answered the client at time `at`: settles its query unless the other copy
    /// answered first, and cancels the other copy if it still waits in a queue.
    #[inline(never)]
    pub(super) fn answered(&mut self, qid: u32, at: f64) {
        let orig = self.original_of(qid);
        if self.is_settled(qid) {
            if self.queries.get(orig).flags & DEGRADED == 0 {
                self.metrics.mitigation.wasted += 1;
            }
        } else {
            let q = *self.queries.get(qid);
            let outcome = if at <= q.due_ms {
                Outcome::Success
            } else {
                Outcome::Failure
            };
            self.settle(orig, outcome, Some(at - q.t_emit));
            let other = if q.flags & COPY != 0 {
                if q.flags & RESTART != 0 {
                    self.metrics.mitigation.restart_won += 1;
                } else {
                    self.metrics.mitigation.reissue_won += 1;
                }
                orig
            } else {
                q.twin
            };
            if other != NO_QUERY {
                self.cancel_if_queued(other);
            }
        }
        self.end_passage(qid);
    }

    /// Record `qid` ended without an answer (dropped or discarded): its query is rejected
    /// unless the other copy may still answer.
    #[inline(never)]
    pub(super) fn unanswered(&mut self, qid: u32) {
        let q = *self.queries.get(qid);
        let (orig, other_pending) = if q.flags & COPY != 0 {
            (q.twin, self.queries.get(q.twin).flags & DONE == 0)
        } else {
            (qid, q.twin != NO_QUERY)
        };
        if self.queries.get(orig).flags & SETTLED == 0 && !other_pending {
            self.settle(orig, Outcome::Rejected, None);
        }
        self.end_passage(qid);
    }

    /// Removes record `qid` from its worker's queue if it waits there: the other copy
    /// answered first. (Elsewhere — on its way, or in a batch — it runs on; only hedged
    /// queries get here, so the search costs nothing to the rest.)
    fn cancel_if_queued(&mut self, qid: u32) {
        if self.drop_if_queued(qid) {
            self.metrics.mitigation.cancelled += 1;
        }
    }

    /// Removes record `qid` from its worker's queue, ending its passage, if it waits there;
    /// whether it did.
    pub(super) fn drop_if_queued(&mut self, qid: u32) -> bool {
        let w = self.queries.get(qid).worker as usize;
        let queue = &mut self.workers[w].queue;
        let Some(at) = queue.iter().position(|x| x.qid == qid) else {
            return false;
        };
        queue.remove(at);
        self.end_passage(qid);
        true
    }

    /// A record reached its worker after its query was settled: it is not queued (a cancelled
    /// copy, unless its query was degraded).
    #[inline(never)]
    pub(super) fn cancel_arriving(&mut self, qid: u32) {
        if self.queries.get(self.original_of(qid)).flags & DEGRADED == 0 {
            self.metrics.mitigation.cancelled += 1;
        }
        self.end_passage(qid);
    }

    /// The passage of record `qid` is over.
    fn end_passage(&mut self, qid: u32) {
        let q = self.queries.get_mut(qid);
        if q.flags & COPY == 0 {
            q.flags |= DONE;
        }
        self.release(qid);
    }

    /// Drops one reference to record `qid`, freeing it at zero (a freed copy releases its
    /// original).
    pub(super) fn release(&mut self, qid: u32) {
        let q = self.queries.get_mut(qid);
        q.refs -= 1;
        if q.refs > 0 {
            return;
        }
        let (copy, twin) = (q.flags & COPY != 0, q.twin);
        self.queries.remove(qid);
        if copy {
            self.queries.get_mut(twin).twin = NO_QUERY;
            self.release(twin);
        }
    }

    /// Schedules the reissue time of the new original `qid` (mitigation `reissue`).
    #[inline(never)]
    pub(super) fn arm_reissue(&mut self, qid: u32) {
        let q = self.queries.get_mut(qid);
        q.refs += 1;
        let q = *q;
        let at = self.mitigation_of(&q).reissue_at_ms(q.t_emit, q.due_ms);
        self.events
            .push(at.expect("reissue mitigation"), Kind::Reissue, qid, 0);
    }

    /// The reissue time of original `qid` has come: if still unsettled and in flight, send a
    /// copy to the feasible binding with the lowest expected delay other than its own.
    #[inline(never)]
    pub(super) fn on_reissue(&mut self, qid: u32) {
        let now = self.now;
        let q = *self.queries.get(qid);
        if q.flags & (SETTLED | DONE) == 0 {
            self.send_copy(qid, &q, now, false);
        }
        self.release(qid);
    }

    /// Among the candidates in `scratch` other than worker `own`, the one that would answer a
    /// query of `frame_kb` sent at `now` (no earlier than the simulation's clock) first (EdgeTuner's restart "on the node that finishes
    /// it fastest"): uplink, the worker's estimated batch finish on its queue as it stands now
    /// (docs/model.md §7.3, at its actual speed) and downlink, each way the candidate's network
    /// distance. Ties: the lower worker index.
    pub(super) fn fastest_target(
        &mut self,
        own: u32,
        frame_kb: f64,
        now: f64,
    ) -> Option<Candidate> {
        let mut best: Option<(f64, Candidate)> = None;
        for c in self.scratch.iter().filter(|c| c.worker != own) {
            let info = self.sc.fleet.workers[c.worker as usize];
            let batch_ms = info.delay_ms(frame_kb) * self.slowdown[c.worker as usize];
            // The queue as it stands now, the query at the back of it once it arrives.
            let finish = self.workers[c.worker as usize]
                .estimated_finish(self.now, info.batch, batch_ms, &mut self.free_scratch)
                .max(now + c.net_ms + batch_ms);
            let answer = finish + c.net_ms;
            if answer.is_finite() && best.is_none_or(|(b, _)| answer < b) {
                best = Some((answer, *c));
            }
        }
        best.map(|(_, c)| c)
    }

    /// Sends a copy of original `qid` (`q`) at `now` to a feasible binding other than its own: a
    /// reissue to the one with the lowest expected delay, or under `restart` a restart to the
    /// one that would finish it first ([`Self::fastest_target`]).
    pub(super) fn send_copy(&mut self, qid: u32, q: &Query, now: f64, restart: bool) {
        let sc = self.sc.clone();
        let facts = self.facts[q.stream as usize];
        let own = &sc.fleet.workers[q.worker as usize];
        let stream = Demand {
            task: own.task,
            rate_qps: f64::from(facts.rate_qps),
            frame_kb: f64::from(q.frame_kb),
            tx_ms: 0.0,
            access_ms: f64::from(q.access_ms),
            max_delay_ms: q.due_ms - q.t_emit,
            min_accuracy: f64::from(facts.min_accuracy),
            items: 1,
        };
        let reach = &sc.topology.schedulers[usize::from(q.sched)].reach;
        let demand = reissue_demand(&stream, q.due_ms - now);
        feasible(&demand, reach, &sc.fleet, &self.view, &mut self.scratch);
        let target = if restart {
            self.fastest_target(q.worker, f64::from(q.frame_kb), now)
        } else {
            reissue_target(&self.scratch, q.worker).copied()
        };
        let Some(target) = target else {
            if restart {
                self.metrics.mitigation.restart_no_target += 1;
            } else {
                self.metrics.mitigation.reissue_no_target += 1;
            }
            return;
        };
        let r = reach
            .iter()
            .find(|r| r.worker == target.worker)
            .expect("candidate comes from reach");
        let rng = &mut self.scheds[usize::from(q.sched)].reissue;
        let up = net_delay(rng, r.d_ms, r.sigma_ms);
        let copy = Query {
            chain: NO_STREAM,
            d_ms: r.d_ms as f32,
            sigma_ms: r.sigma_ms as f32,
            worker: target.worker,
            twin: qid,
            refs: 1,
            flags: if restart { COPY | RESTART } else { COPY },
            ..*q
        };
        let cid = self.queries.insert(copy);
        let orig = self.queries.get_mut(qid);
        orig.twin = cid;
        orig.refs += 1;
        if restart {
            self.metrics.mitigation.restarted += 1;
        } else {
            self.metrics.mitigation.reissued += 1;
        }
        self.events.push(now + up, Kind::Arrive, cid, 0);
    }
}
