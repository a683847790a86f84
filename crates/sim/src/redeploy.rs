//! Deployment changes during a run (an allocator above dispatch): replicas per worker move
//! while queries flow, with the rules of a real cluster.
//!
//! - **Additions** take effect after the variant's model-load delay (`load_s` in the
//!   profiles): the new replicas then take batches and the schedulers see the capacity.
//! - **Removals** take the capacity out of binding at once. A surplus replica unloads when it
//!   finds its worker's queue empty, so every query a worker has admitted is still served.
//!   A worker left with no replica keeps its last one until [`DRAIN_GRACE_MS`] after the
//!   change, then unloads it as soon as it is idle; a query that still reaches it afterwards
//!   is rejected there (counted in [`super::SimStats::unloaded_rejected`]).
//! - **Streams** keep their binding until their worker has no replica left, then re-bind at
//!   their next emission with their class's policy; a stream that finds no feasible worker
//!   has its queries rejected, trying again at each emission.

use super::queue::Kind;
use super::{NO_WORKER, Simulation};
use continuum_core::dispatch::{Placement, bind};
use continuum_core::feasibility::Demand;

/// How long a withdrawn worker keeps its last replica for queries already on their way, ms.
/// Assumption: an uplink takes the access delay (≤ 10 ms in the shipped workloads), the
/// network (tens of ms across the hierarchy) and the frame's transmission (≤ 64 ms for 80 KB at
/// 10 Mbit/s); two seconds covers it many times over.
pub(crate) const DRAIN_GRACE_MS: f64 = 2000.0;

impl Simulation {
    /// Sets the replicas of every worker (indexed like the fleet) from now on, under the rules
    /// of the module documentation. `replicas` must have one entry per worker.
    pub fn set_deployment(&mut self, replicas: &[u32]) {
        assert_eq!(
            replicas.len(),
            self.workers.len(),
            "one replica count per worker"
        );
        self.deploying = true;
        let now = self.now;
        let sc = std::sync::Arc::make_mut(&mut self.sc);
        for (w, &want) in replicas.iter().enumerate() {
            let info = &mut sc.fleet.workers[w];
            let ws = &mut self.workers[w];
            let active = ws.active();
            // Servers ready to serve, and those still loading from earlier changes.
            let loading = self
                .target
                .as_ref()
                .map_or(0, |t| t[w].saturating_sub(active));
            if want < active {
                ws.keep = want.max(1).min(active);
                ws.retire_idle_surplus();
                if want == 0 {
                    self.events
                        .push(now + DRAIN_GRACE_MS, Kind::Retire, w as u32, 0);
                }
            } else {
                ws.keep = active;
                let more = want - active;
                if more > loading {
                    let load_ms = sc.profiles.variants[info.variant as usize].load_s * 1000.0;
                    self.events
                        .push(now + load_ms, Kind::Load, w as u32, more - loading);
                }
            }
            info.replicas = want.min(ws.active());
            info.capacity_qps =
                f64::from(info.replicas) * sc.profiles.variants[info.variant as usize].capacity_qps;
        }
        self.target = Some(replicas.to_vec());
    }

    /// Replicas of each worker that are loaded now (serving or draining).
    pub fn loaded_replicas(&self) -> Vec<u32> {
        self.workers.iter().map(|w| w.active()).collect()
    }

    /// `count` replicas of worker `w` finished loading: those still wanted start serving.
    pub(super) fn on_load(&mut self, w: usize, count: u32) {
        let want = self.target.as_ref().map_or(0, |t| t[w]);
        let now = self.now;
        let sc = std::sync::Arc::make_mut(&mut self.sc);
        let info = &mut sc.fleet.workers[w];
        let ws = &mut self.workers[w];
        let add = want.saturating_sub(ws.active()).min(count);
        for _ in 0..add {
            ws.add_server(now, info.batch);
        }
        ws.keep = ws.keep.max(want.min(ws.active()));
        info.replicas = want.min(ws.active());
        info.capacity_qps =
            f64::from(info.replicas) * sc.profiles.variants[info.variant as usize].capacity_qps;
        while !self.workers[w].queue.is_empty() {
            let Some(s) = self.workers[w].idle.pop() else {
                break;
            };
            self.start_batch(w, s as usize);
        }
    }

    /// The grace of a withdrawn worker is over: its idle last replica unloads, a busy one when
    /// it next finds the queue empty.
    pub(super) fn on_retire(&mut self, w: usize) {
        if self.target.as_ref().is_some_and(|t| t[w] == 0) {
            let ws = &mut self.workers[w];
            ws.keep = 0;
            if ws.queue.is_empty() {
                ws.retire_idle_surplus();
            }
        }
    }

    /// The stream of serial `serial` ended: its worker has one open stream fewer.
    pub(super) fn stream_ended(&mut self, serial: u32) {
        let w = self.facts[serial as usize].worker;
        if w != NO_WORKER {
            self.detach(serial, w);
        }
    }

    /// Whether stream `id` is bound to a worker that serves, re-binding it first when its
    /// worker was withdrawn (or an earlier re-binding failed).
    pub(super) fn keep_bound(&mut self, id: u32) -> bool {
        let st = self.streams.get(id);
        let old = st.worker;
        if old != NO_WORKER && self.sc.fleet.workers[old as usize].replicas > 0 {
            return true;
        }
        let f = self.facts[st.serial as usize];
        let s = usize::from(st.sched);
        let demand = Demand {
            task: self.sc.workload.apps[usize::from(st.app)].task,
            rate_qps: f64::from(f.rate_qps),
            frame_kb: st.frame_kb,
            tx_ms: st.tx_ms,
            access_ms: st.access_ms,
            max_delay_ms: st.max_delay_ms,
            min_accuracy: f64::from(f.min_accuracy),
            items: 1,
        };
        let policy = self.policies[s * self.classes.len() + usize::from(f.class)];
        let sc = self.sc.clone();
        let reach = &sc.topology.schedulers[s].reach;
        let bound = {
            let sched = &mut self.scheds[s];
            bind(
                &demand,
                reach,
                &sc.fleet,
                &self.view,
                &mut sched.own,
                self.now,
                policy,
                &mut sched.policy,
                &mut self.scratch,
            )
        };
        let serial = st.serial as usize;
        if old != NO_WORKER {
            self.detach(serial as u32, old);
        }
        let Ok(Placement {
            candidate: c,
            reach: r,
        }) = bound
        else {
            self.facts[serial].worker = NO_WORKER;
            self.streams.get_mut(id).worker = NO_WORKER;
            return false;
        };
        let ref_kb = sc.fleet.workers[c.worker as usize].ref_kb;
        let st = self.streams.get_mut(id);
        st.worker = c.worker;
        st.d_ms = r.d_ms;
        st.sigma_ms = r.sigma_ms;
        st.eta = st.frame_kb / ref_kb;
        self.facts[serial].worker = c.worker;
        self.attach(serial as u32, c.worker, c.demand_qps);
        self.stats.rebound += 1;
        true
    }

    /// Processes the pending emission of stream `id`, which has no worker: the query is
    /// offered and rejected at once, and the next emission scheduled.
    pub(super) fn emit_unbound(&mut self, id: u32) {
        let job = self.job_of_emission(id);
        let super::engine::UnsentEmission {
            t,
            sched,
            app,
            window,
            emitted,
            mitigated,
            last,
        } = self.unsent_emission(id);
        self.metrics.rejected_unbound(t, sched, app);
        self.by_bind.count(window, sched, app, 0);
        self.by_bind.count(
            window,
            sched,
            app,
            continuum_core::metrics::Outcome::Rejected as usize,
        );
        self.job_unsent(job, mitigated, continuum_core::metrics::Outcome::Rejected);
        if last {
            self.close_job(job, emitted);
        }
    }
}
