//! The event handlers: client arrivals and binding, query emission, arrival at a worker
//! (admission, queueing), batch completion (downlink, outcome), and load publication.

use super::hedge::JOB;
use super::jobs::NO_JOB;
use super::queue::{Event, Kind};
use super::stream::{Stream, net_delay};
use super::worker::{QueueBound, Waiting};
use super::{NO_QUERY, NO_STREAM, Query, Simulation, StreamFacts};
use continuum_core::dispatch::{Placement, bind};
use continuum_core::feasibility::feasible;
use continuum_core::metrics::Outcome;
use continuum_core::mitigation::Mitigation;
use continuum_core::rng::{Purpose, stream_rng};
use continuum_core::workload::emission::{Client, accept_candidate, next_candidate_ms};

impl Simulation {
    pub(super) fn dispatch(&mut self, e: Event) {
        match e.kind() {
            Kind::ClientArrival => self.on_client_arrival(e.a() as usize),
            Kind::Emit => self.emit(e.a()),
            Kind::Arrive => self.on_arrive(e.a()),
            Kind::BatchDone => self.on_batch_done(e.a() as usize, e.b() as usize),
            Kind::Publish => self.on_publish(),
            Kind::StreamEnd => self.stream_ended(e.a()),
            Kind::Reissue => self.on_reissue(e.a()),
            Kind::Answer => self.answered(e.a(), self.now),
            Kind::Load => self.on_load(e.a() as usize, e.b()),
            Kind::Retire => self.on_retire(e.a() as usize),
        }
    }

    /// Schedules the next candidate arrival at scheduler `s` after `from` (thinning at the
    /// peak rate; [`Self::on_client_arrival`] accepts with probability λ(t)/λ_max).
    pub(super) fn schedule_next_client(&mut self, s: usize, from: f64) {
        let lambda = &self.sc.workload.lambda;
        let next = next_candidate_ms(&mut self.scheds[s].arrivals, lambda, from);
        if let Some(t) = next.filter(|t| *t < self.horizon_ms) {
            self.events.push(t, Kind::ClientArrival, s as u32, 0);
        }
    }

    fn on_client_arrival(&mut self, s: usize) {
        let now = self.now;
        let sc = self.sc.clone();
        let wl = &sc.workload;
        let st = &mut self.scheds[s];
        if accept_candidate(&mut st.arrivals, &wl.lambda, now) {
            let p = wl.sample_stream(&mut st.arrivals, now);
            let client = st.clients;
            st.clients += 1;
            self.open_stream(s, client, &p);
        }
        self.schedule_next_client(s, now);
    }

    pub(super) fn open_stream(
        &mut self,
        s: usize,
        client: u64,
        p: &continuum_core::workload::StreamParams,
    ) {
        let now = self.now;
        self.stats.streams += 1;
        let demand = p.demand;
        let sc = self.sc.clone();
        let sched = &sc.topology.schedulers[s];
        let class = self.class_of(p);
        // Push dispatch binds now; pull dispatch (docs/model.md §15) only checks that some
        // cluster could take the stream, which then waits for the next decision step.
        let bound = if self.pull.is_some() {
            let short = feasible(
                &demand,
                &sched.reach,
                &sc.fleet,
                &self.view,
                &mut self.scratch,
            );
            if self.scratch.is_empty() {
                Err(short)
            } else {
                Ok(None)
            }
        } else {
            let policy = self.policies[s * self.classes.len() + class];
            let st = &mut self.scheds[s];
            bind(
                &demand,
                &sched.reach,
                &sc.fleet,
                &self.view,
                &mut st.own,
                now,
                policy,
                &mut st.policy,
                &mut self.scratch,
            )
            .map(Some)
        };
        let mut stream = Stream {
            emission: Client {
                t_ms: now,
                index: client,
                params: *p,
            }
            .emission(self.cfg.seed, s as u64, self.horizon_ms),
            net_rng: stream_rng(self.cfg.seed, Purpose::Uplink, s as u64, client),
            sched: s as u16,
            app: p.app,
            worker: u32::MAX,
            pending_ms: now,
            frame_kb: p.demand.frame_kb,
            tx_ms: p.demand.tx_ms,
            access_ms: p.demand.access_ms,
            max_delay_ms: p.demand.max_delay_ms,
            d_ms: 0.0,
            sigma_ms: 0.0,
            eta: 0.0,
            bucket: 0,
            bind_window: self.by_bind.window_of(now),
            serial: 0,
            job: NO_JOB,
            job_end_ms: f64::NEG_INFINITY,
            job_emitted: 0,
            job_mitigated: false,
        };
        if let Some(o) = &self.observer {
            stream.bucket = o.buckets().index(p.demand.max_delay_ms, p.demand.rate_qps) as u8;
        }
        match bound {
            Err(_) => self.reject_stream(stream, p.demand.rate_qps),
            Ok(None) => self.wait_for_pull(stream, *p, class),
            Ok(Some(placed)) => {
                self.bind_stream(
                    stream,
                    &placed,
                    p.demand.rate_qps,
                    p.demand.min_accuracy,
                    class,
                );
            }
        }
    }

    /// A stream that found no binding: every query it would have sent is rejected.
    pub(super) fn reject_stream(&mut self, mut stream: Stream, rate_qps: f64) {
        let jitter = self.sc.workload.jitter;
        let (s, now) = (usize::from(stream.sched), self.now);
        self.stats.streams_rejected += 1;
        if let Some(o) = &mut self.observer {
            o.incoming_unbound(
                s,
                usize::from(stream.bucket),
                now,
                stream.emission.t_end,
                rate_qps,
            );
        }
        // Its jobs: one per window it emits in, every task rejected.
        let mut window = None;
        while let Some(t) = stream.next_emission(jitter) {
            let w = self.jobs.window_of(t);
            if window != Some(w) {
                window = Some(w);
                self.jobs.unbound(w);
            }
            self.stats.queries += 1;
            self.metrics.rejected_unbound(t, stream.sched, stream.app);
            let (w, s, a) = (stream.bind_window, stream.sched, stream.app);
            self.by_bind.count(w, s, a, 0);
            self.by_bind.count(w, s, a, Outcome::Rejected as usize);
        }
    }

    /// Binds `stream` to candidate `c` (one of its scheduler's reach) and schedules its first
    /// emission (now, if that emission's time has passed while it waited to be pulled: the
    /// scheduler held it). Returns the stream's serial, or `None` when it emits nothing.
    pub(super) fn bind_stream(
        &mut self,
        mut stream: Stream,
        placed: &Placement,
        rate_qps: f64,
        min_accuracy: f64,
        class: usize,
    ) -> Option<u32> {
        let jitter = self.sc.workload.jitter;
        let (c, reach) = (&placed.candidate, &placed.reach);
        stream.worker = c.worker;
        stream.d_ms = reach.d_ms;
        stream.sigma_ms = reach.sigma_ms;
        stream.eta = stream.frame_kb / self.sc.fleet.workers[c.worker as usize].ref_kb;
        let t = stream.next_emission(jitter)?;
        stream.pending_ms = t;
        stream.serial = self.facts.len() as u32;
        self.facts.push(StreamFacts {
            rate_qps: rate_qps as f32,
            min_accuracy: min_accuracy as f32,
            tail_ms: 0.0,
            class: class as u16,
            worker: c.worker,
            settled: 0,
            success: 0,
        });
        self.attach(stream.serial, c.worker, c.demand_qps);
        let end = stream.emission.t_end.max(self.now);
        self.events.push(end, Kind::StreamEnd, stream.serial, 0);
        let serial = stream.serial;
        let id = self.streams.insert(stream);
        self.events.push(t.max(self.now), Kind::Emit, id, 0);
        Some(serial)
    }

    /// Processes the pending emission of stream `id` (at its time `pending_ms`, or earlier: an
    /// emission touches only the stream's own state and schedules a future arrival, so it may
    /// run ahead of time). The next emission rides on this query's arrival event when it comes
    /// no earlier than that arrival; otherwise it gets an event of its own. This saves about
    /// one event per query.
    fn emit(&mut self, id: u32) {
        if self.deploying && !self.keep_bound(id) {
            self.emit_unbound(id);
            return;
        }
        let jitter = self.sc.workload.jitter;
        let job = self.job_of_emission(id);
        let now = self.now;
        let st = self.streams.get_mut(id);
        let t = st.pending_ms;
        let up = st.uplink_ms();
        // Sent when emitted, or now for a query held while its stream waited to be pulled.
        let t_arrive = t.max(now) + up;
        let mut q = Query {
            chain: NO_STREAM,
            t_emit: t,
            due_ms: t + st.max_delay_ms,
            frame_kb: st.frame_kb as f32,
            access_ms: st.access_ms as f32,
            d_ms: st.d_ms as f32,
            sigma_ms: st.sigma_ms as f32,
            worker: st.worker,
            stream: st.serial,
            job,
            twin: NO_QUERY,
            sched: st.sched,
            app: st.app,
            bind_window: st.bind_window,
            refs: 1,
            flags: if st.job_mitigated { JOB } else { 0 },
        };
        let bucket = st.bucket;
        let (mitigated, emitted) = (st.job_mitigated, st.job_emitted);
        let next = st.next_emission(jitter);
        let last = next.is_none();
        match next {
            Some(tn) => {
                st.pending_ms = tn;
                if tn >= t_arrive {
                    q.chain = id;
                } else {
                    self.events.push(tn.max(now), Kind::Emit, id, 0);
                }
            }
            None => self.streams.remove(id),
        }
        self.stats.queries += 1;
        if let Some(o) = &mut self.observer {
            o.incoming_query(usize::from(q.sched), usize::from(bucket));
        }
        self.metrics.offered(t, q.sched, q.app);
        self.by_bind.count(q.bind_window, q.sched, q.app, 0);
        let qid = self.queries.insert(q);
        self.events
            .push(t_arrive, Kind::Arrive, qid, super::chain_hint(q.chain));
        if self.any_reissue && self.mitigation_of(&q).reissues() {
            self.arm_reissue(qid);
        }
        if mitigated {
            self.job_task_sent(job, qid);
        }
        if last {
            self.close_job(job, emitted);
        }
    }

    /// The pending emission of stream `id` belongs to job `job`, whose `tdp` has fired: it is
    /// offered and degraded at once, not sent; the next emission is scheduled.
    /// Stream `id`'s pending emission is offered but not sent: schedules its next emission (or
    /// ends the stream), counts the query and its demand, and says what the caller settles.
    pub(super) fn unsent_emission(&mut self, id: u32) -> UnsentEmission {
        let jitter = self.sc.workload.jitter;
        let st = self.streams.get_mut(id);
        let t = st.pending_ms;
        let (sched, app, window, bucket) = (st.sched, st.app, st.bind_window, st.bucket);
        let (mitigated, emitted) = (st.job_mitigated, st.job_emitted);
        let last = match st.next_emission(jitter) {
            Some(tn) => {
                st.pending_ms = tn;
                self.events.push(tn.max(self.now), Kind::Emit, id, 0);
                false
            }
            None => {
                self.streams.remove(id);
                true
            }
        };
        self.stats.queries += 1;
        if let Some(o) = &mut self.observer {
            o.incoming_query(usize::from(sched), usize::from(bucket));
        }
        UnsentEmission {
            t,
            sched,
            app,
            window,
            emitted,
            mitigated,
            last,
        }
    }

    fn on_arrive(&mut self, qid: u32) {
        let now = self.now;
        let q = *self.queries.get(qid);
        if q.chain != NO_STREAM {
            self.emit(q.chain);
        }
        if (q.refs > 1 || q.flags != 0) && self.is_settled(qid) {
            // Only under mitigation: a copy, or an original with a copy or a reissue pending,
            // whose query was answered meanwhile.
            self.cancel_arriving(qid);
            return;
        }
        let info = self.sc.fleet.workers[q.worker as usize];
        let slow = self.slowdown[q.worker as usize];
        let mitigation = if self.any_discard {
            self.mitigation_of(&q)
        } else {
            Mitigation::None
        };
        let w = &mut self.workers[q.worker as usize];
        w.load.add(f64::from(q.frame_kb) / info.ref_kb);
        let estimate =
            matches!(self.cfg.queue_bound, QueueBound::Deadline) || mitigation.discards();
        let unloaded = w.active() == 0;
        if unloaded {
            self.stats.unloaded_rejected += 1;
        }
        let full = match self.cfg.queue_bound {
            QueueBound::MaxQueries(n) => !w.has_idle_server() && w.queue.len() >= n as usize,
            _ => false,
        } || unloaded;
        let mut drop = full;
        if !full && estimate {
            let finish = w.estimated_finish(
                now,
                info.batch,
                info.delay_ms(f64::from(q.frame_kb)) * slow,
                &mut self.free_scratch,
            );
            let answer = finish + f64::from(q.access_ms) + f64::from(q.d_ms);
            drop = answer > mitigation.answer_limit_ms(q.t_emit, q.due_ms);
            let bound_keeps =
                !matches!(self.cfg.queue_bound, QueueBound::Deadline) || answer <= q.due_ms;
            if drop && bound_keeps {
                self.metrics.mitigation.discarded += 1;
            }
        }
        if drop {
            if q.refs == 1 && q.flags == 0 {
                // No mitigation in play: rejected.
                self.count_outcome(&q, qid, Outcome::Rejected, None);
                self.queries.remove(qid);
            } else {
                self.unanswered(qid);
            }
            return;
        }
        w.queue.push_back(Waiting {
            qid,
            frame_kb: q.frame_kb,
            t_arrive: now,
        });
        if let Some(s) = w.idle.pop() {
            self.start_batch(q.worker as usize, s as usize);
        }
    }

    /// Server `s` of worker `w` takes the next batch from the queue. Under `discard`, queries
    /// that can no longer answer in time are dropped instead of processed.
    pub(super) fn start_batch(&mut self, w: usize, s: usize) {
        let now = self.now;
        let info = self.sc.fleet.workers[w];
        let slow = self.slowdown[w];
        let mut batch = std::mem::take(&mut self.workers[w].servers[s].batch);
        let mut max_kb = 0.0f64;
        if self.any_discard {
            self.take_in_time(w, &mut batch, &mut max_kb);
        } else {
            let queue = &mut self.workers[w].queue;
            while batch.len() < info.batch as usize {
                let Some(q) = queue.pop_front() else {
                    break;
                };
                max_kb = max_kb.max(f64::from(q.frame_kb));
                self.metrics.queue_wait(now - q.t_arrive);
                batch.push(q.qid);
            }
        }
        self.jobs.flow.batched += batch.len() as u64;
        let ws = &mut self.workers[w];
        let empty = batch.is_empty();
        ws.servers[s].batch = batch;
        if empty {
            // Everything waiting was discarded.
            ws.idle.push(s as u32);
            return;
        }
        let done = now + info.delay_ms(max_kb) * slow;
        ws.set_free_at(s, done);
        self.events.push(done, Kind::BatchDone, w as u32, s as u32);
    }

    /// Fills `batch` from worker `w`'s queue under `discard`: a query whose answer, if it
    /// started now, would come after its limit is dropped (rejected at once) instead.
    fn take_in_time(&mut self, w: usize, batch: &mut Vec<u32>, max_kb: &mut f64) {
        let now = self.now;
        let info = self.sc.fleet.workers[w];
        let slow = self.slowdown[w];
        while batch.len() < info.batch as usize {
            let Some(Waiting { qid, t_arrive, .. }) = self.workers[w].queue.pop_front() else {
                break;
            };
            let q = *self.queries.get(qid);
            let answer = now
                + info.delay_ms(f64::from(q.frame_kb)) * slow
                + f64::from(q.access_ms)
                + f64::from(q.d_ms);
            let m = self.mitigation_of(&q);
            if m.discards() && answer > m.answer_limit_ms(q.t_emit, q.due_ms) {
                self.metrics.mitigation.discarded += 1;
                self.unanswered(qid);
                continue;
            }
            *max_kb = max_kb.max(f64::from(q.frame_kb));
            self.metrics.queue_wait(now - t_arrive);
            batch.push(qid);
        }
    }

    fn on_batch_done(&mut self, w: usize, s: usize) {
        let now = self.now;
        let mut batch = std::mem::take(&mut self.workers[w].servers[s].batch);
        self.jobs.flow.processed += batch.len() as u64;
        for &qid in &batch {
            let q = *self.queries.get(qid);
            let rng = &mut self.scheds[q.sched as usize].downlink;
            let down =
                f64::from(q.access_ms) + net_delay(rng, f64::from(q.d_ms), f64::from(q.sigma_ms));
            let answered = now + down;
            if q.refs == 1 && q.flags == 0 {
                // No mitigation in play: the answer settles the query.
                let outcome = if answered <= q.due_ms {
                    Outcome::Success
                } else {
                    Outcome::Failure
                };
                self.count_outcome(&q, qid, outcome, Some(answered - q.t_emit));
                self.queries.remove(qid);
            } else if self.is_hedged(qid) {
                // Two copies live: the answers race to the client.
                self.events.push(answered, Kind::Answer, qid, 0);
            } else {
                // Settle at once (a pending reissue time then finds it settled), unless the
                // other copy answered first.
                self.answered(qid, answered);
            }
        }
        let ws = &mut self.workers[w];
        ws.done.add(batch.len() as f64);
        batch.clear();
        ws.servers[s].batch = batch;
        if ws.queue.is_empty() {
            if ws.active() > ws.keep {
                // Unloaded by a deployment change once its queue is served.
                ws.retire(s);
            } else {
                ws.idle.push(s as u32);
            }
        } else {
            self.start_batch(w, s);
        }
    }

    fn on_publish(&mut self) {
        let now = self.now;
        // Under the `current` view the seen loads follow the bindings (`attach`, `detach`);
        // the meters still roll, for the throughput.
        let measured = !self.sees_present_load();
        for (ws, seen) in self.workers.iter_mut().zip(self.view.workers.iter_mut()) {
            let load = ws.load.roll();
            if measured {
                seen.load_qps = load;
            }
            seen.throughput_qps = ws.done.roll();
            seen.streams = ws.streams;
        }
        self.view.published_ms = now;
        if let Some(o) = &mut self.observer {
            o.load_published(&self.view);
        }
        let next = now + self.cfg.staleness_ms;
        if next < self.horizon_ms {
            self.events.push(next, Kind::Publish, 0, 0);
        }
    }
}

/// An emission offered but not sent ([`Simulation::unsent_emission`]).
pub(super) struct UnsentEmission {
    /// Its time, ms.
    pub t: f64,
    /// Its scheduler.
    pub sched: u16,
    /// Its application.
    pub app: u16,
    /// The window its stream was bound in.
    pub window: u16,
    /// Tasks its job had emitted before it.
    pub emitted: u32,
    /// Whether its job runs under a per-job mitigation.
    pub mitigated: bool,
    /// Whether it was the stream's last emission.
    pub last: bool,
}
