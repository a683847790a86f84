//! The discrete-event simulator (docs/model.md §7–8, §10): virtual time drives the sans-IO core.
//! Every query is simulated (uplink with jitter, worker queue, batching, processing, downlink);
//! loads are published every Δ ms; the state is cloneable so a run can be forked.

#![warn(missing_docs)]
#![deny(unreachable_pub)]

mod ages;
mod by_bind;
mod capacity;
mod config;
mod engine;
mod hedge;
mod jobs;
mod present;
mod pull;
mod queue;
mod redeploy;

mod slab;
mod stream;
mod tails;
mod worker;

pub use ages::TaskAges;
pub use capacity::CapacityScale;
pub use config::SimConfig;
pub use continuum_core::scenario::Scenario;
pub use jobs::{JobStats, TaskFlow, WindowJobs};
pub use pull::{PullConfig, PullStepOutcome, PullTotals};
pub use worker::QueueBound;

use by_bind::BindCounts;
use continuum_core::feasibility::Candidate;
use continuum_core::load::{LoadView, OwnLoad};
use continuum_core::metrics::Metrics;
use continuum_core::mitigation::{Configuration, Mitigation};
use continuum_core::observe::{DemandBuckets, WindowObservation, WindowObserver};
use continuum_core::policy::{Policy, PolicyTable, StreamClasses};
use continuum_core::rng::{Purpose, SimRng, stream_rng};
use jobs::Jobs;
use queue::{EventQueue, Kind};
use slab::Slab;
use std::sync::Arc;
use stream::Stream;
use tails::TailLog;
use worker::WorkerState;

/// Per-scheduler dynamic state.
#[derive(Debug, Clone)]
struct SchedState {
    arrivals: SimRng,
    policy: SimRng,
    downlink: SimRng,
    /// Network delays of reissued copies.
    reissue: SimRng,
    clients: u64,
    /// Its own bindings since the view was published (docs/model.md §8).
    own: OwnLoad,
}

/// An in-flight query (64 bytes, one cache line); copies what it needs so its stream may end
/// first. Under `reissue` or `restart` a query may have a second record, its copy (see
/// [`hedge`]). Its arrival time at the worker is its arrival event's time.
#[derive(Debug, Clone, Copy, Default)]
#[repr(align(64))]
struct Query {
    /// The stream whose next emission is processed when this query arrives, or `NO_STREAM`.
    chain: u32,
    t_emit: f64,
    /// When the query is due: its emission + the stream's `max_delay_ms` (D^i), ms.
    due_ms: f64,
    frame_kb: f32,
    access_ms: f32,
    d_ms: f32,
    sigma_ms: f32,
    worker: u32,
    /// Serial of its stream (index in `Simulation::facts`).
    stream: u32,
    /// Its job: its stream's queries of its window of emission ([`jobs`]).
    job: u32,
    /// An original: its live copy, or `NO_QUERY`; a copy: its original.
    twin: u32,
    sched: u16,
    app: u16,
    bind_window: u16,
    /// What still refers to the record: its own passage (network, queue, batch, answer), a
    /// pending reissue time, a live copy. It is freed at zero.
    refs: u8,
    /// `hedge::COPY`, `SETTLED`, `DONE`, `RESTART`, `DEGRADED`, `JOB`.
    flags: u8,
}

const _: () = assert!(std::mem::size_of::<Query>() == 64);

/// The second operand of an arrival event: a hint, for prefetching only, of the stream whose
/// next emission rides on the query (its slot + 1; 0 for none, or a slot beyond 24 bits).
#[inline]
fn chain_hint(chain: u32) -> u32 {
    if chain < (1 << 24) - 1 { chain + 1 } else { 0 }
}

/// What the simulator keeps of a bound stream past its last emission.
#[derive(Debug, Clone, Copy)]
struct StreamFacts {
    /// Frame rate ρ_i, qps (a reissued copy's binding must carry it, docs/model.md §5).
    rate_qps: f32,
    /// Min accuracy A^i.
    min_accuracy: f32,
    /// Its slowest answered query so far, ms (0: none yet).
    tail_ms: f32,
    /// Its stream class (the mitigation of its queries is its scheduler's for the class).
    class: u16,
    /// The worker it is bound to now (`NO_WORKER` after a failed re-binding).
    worker: u32,
    /// Its queries settled so far (any outcome; what a pull agent's binding is credited with).
    settled: u32,
    /// Of those, successes.
    success: u32,
}

/// Events per offered query, measured on the shipped scenarios (an arrival, a share of a batch
/// completion, the emissions that cannot ride on an arrival): sizes the event calendar only.
const EVENTS_PER_QUERY: f64 = 1.25;

/// Expected events per simulated ms from which the simulator prefetches deeply: every cache
/// line of the records its next events touch, the queries of a finishing batch and the metrics
/// counters of an arriving query. Below it the simulated state stays in the caches and those
/// prefetches only cost instructions (assumption: on the development machine, deep prefetching
/// cost 5–8 % per query at 64–256 antennas of full-edge's make-up, 80–320 events per ms, and
/// saved 13–16 % at 1 024–4 096 antennas; the threshold sits between). Speed only: results
/// never depend on it.
const DEEP_PREFETCH_EVENTS_PER_MS: f64 = 640.0;

/// The event rate a scenario should produce at its peak client rate, per simulated ms.
fn expected_events_per_ms(sc: &Scenario, schedulers: usize) -> f64 {
    let wl = &sc.workload;
    wl.expected_qps(wl.lambda.max()) * schedulers as f64 * EVENTS_PER_QUERY / 1000.0
}

/// No stream: a query that does not carry its stream's next emission.
const NO_STREAM: u32 = u32::MAX;
/// No query: an original without a live copy.
const NO_QUERY: u32 = u32::MAX;
/// No worker: a stream whose worker was withdrawn and that found no other.
const NO_WORKER: u32 = u32::MAX;

/// Counters of the work a run did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SimStats {
    /// Queries offered (emitted, or counted for unbound streams).
    pub queries: u64,
    /// Events processed.
    pub events: u64,
    /// Streams opened (bound or not).
    pub streams: u64,
    /// Streams that found no feasible binding.
    pub streams_rejected: u64,
    /// Streams re-bound because a deployment change withdrew their worker.
    pub rebound: u64,
    /// Queries that reached a worker with every replica unloaded (rejected there).
    pub unloaded_rejected: u64,
}

/// A simulation run in progress. Clone it to fork the run.
#[derive(Clone)]
pub struct Simulation {
    sc: Arc<Scenario>,
    cfg: SimConfig,
    horizon_ms: f64,
    now: f64,
    events: EventQueue,
    /// How streams are classed, and the class of each workload application (`None`: by
    /// demand bucket, stream by stream).
    classes: Arc<StreamClasses>,
    class_of_app: Vec<Option<u16>>,
    /// The policy of class `c` at scheduler `s`, at `s * classes + c`.
    policies: Vec<&'static dyn Policy>,
    scheds: Vec<SchedState>,
    streams: Slab<Stream>,
    queries: Slab<Query>,
    workers: Vec<WorkerState>,
    view: LoadView,
    metrics: Metrics,
    stats: SimStats,
    scratch: Vec<Candidate>,
    free_scratch: Vec<f64>,
    observer: Option<WindowObserver>,
    by_bind: BindCounts,
    /// Per bound stream, by serial.
    facts: Vec<StreamFacts>,
    /// Answers not yet folded into the streams' tails.
    tails: TailLog,
    /// Jobs in progress and the totals of finished ones.
    jobs: Jobs,
    /// Actual processing time over profiled, per worker.
    slowdown: Arc<[f64]>,
    /// The mitigation of the queries of class `c` at scheduler `s`, at `s * classes + c`
    /// (`cfg.mitigation` until changed).
    mitigations: Vec<Mitigation>,
    /// Whether any scheduler discards (queues are then checked when batches start).
    any_discard: bool,
    /// Whether any scheduler reissues.
    any_reissue: bool,
    /// Whether the deployment has changed during the run (emissions then check that their
    /// stream's worker still serves).
    deploying: bool,
    /// Replicas each worker should have (`None` until the first deployment change).
    target: Option<Vec<u32>>,
    /// Whether to prefetch deeply (see [`DEEP_PREFETCH_EVENTS_PER_MS`]).
    deep_prefetch: bool,
    /// Pull dispatch, when on (docs/model.md §15).
    pull: Option<pull::PullState>,
    /// The workers' present loads, under the `current` load view (docs/model.md §8).
    present: Option<present::PresentLoad>,
}

impl Simulation {
    /// A run of `scenario` under `cfg`, every scheduler using `policy`.
    pub fn new(sc: Arc<Scenario>, cfg: SimConfig, policy: &'static dyn Policy) -> Self {
        let n_sched = sc.topology.schedulers.len();
        let buckets = (cfg.load_window_ms / cfg.staleness_ms).round().max(1.0) as usize;
        let workers = sc
            .fleet
            .workers
            .iter()
            .map(|w| WorkerState::new(w.replicas, w.batch, buckets, cfg.staleness_ms))
            .collect();
        let scheds = (0..n_sched as u64)
            .map(|s| SchedState {
                arrivals: stream_rng(cfg.seed, Purpose::Arrivals, s, 0),
                policy: stream_rng(cfg.seed, Purpose::Policy, s, 0),
                downlink: stream_rng(cfg.seed, Purpose::Downlink, s, 0),
                reissue: stream_rng(cfg.seed, Purpose::Reissue, s, 0),
                clients: 0,
                own: OwnLoad::new(cfg.own_bindings, cfg.load_window_ms),
            })
            .collect();
        let horizon_ms = cfg.duration_s * 1000.0;
        let n_apps = sc.workload.apps.len();
        let rate = expected_events_per_ms(&sc, n_sched);
        let events = EventQueue::for_rate(rate);
        let mut sim = Self {
            metrics: Metrics::new(
                horizon_ms,
                cfg.window_s * 1000.0,
                n_sched,
                sc.workload.apps.len(),
            ),
            view: LoadView::idle(sc.fleet.workers.len()),
            slowdown: cfg.capacity.slowdowns(&sc.topology).into(),
            mitigations: vec![cfg.mitigation; n_sched],
            any_discard: cfg.mitigation.discards(),
            any_reissue: cfg.mitigation.reissues(),
            deploying: false,
            target: None,
            deep_prefetch: rate >= DEEP_PREFETCH_EVENTS_PER_MS,
            pull: None,
            present: present::PresentLoad::for_mode(cfg.load_view, sc.fleet.workers.len()),
            facts: Vec::new(),
            tails: TailLog::default(),
            jobs: Jobs::new(cfg.window_s * 1000.0),
            sc,
            cfg,
            horizon_ms,
            now: 0.0,
            events,
            classes: Arc::new(StreamClasses::single()),
            class_of_app: vec![Some(0); n_apps],
            policies: vec![policy; n_sched],
            scheds,
            streams: Slab::default(),
            queries: Slab::default(),
            workers,
            stats: SimStats::default(),
            scratch: Vec::new(),
            free_scratch: Vec::new(),
            observer: None,
            by_bind: BindCounts::new(n_sched, n_apps, cfg.window_s * 1000.0, horizon_ms),
        };
        for s in 0..n_sched {
            sim.schedule_next_client(s, 0.0);
        }
        sim.events.push(cfg.staleness_ms, Kind::Publish, 0, 0);
        sim
    }

    /// A run in which every scheduler uses `table` (one policy per stream class).
    pub fn with_table(sc: Arc<Scenario>, cfg: SimConfig, table: &PolicyTable) -> Self {
        let mut sim = Self::new(sc, cfg, table.policies[0]);
        sim.set_classes(Arc::new(table.classes.clone()));
        for s in 0..sim.scheds.len() {
            for (c, p) in table.policies.iter().enumerate() {
                sim.set_class_policy(s, c, *p);
            }
        }
        sim
    }

    /// Groups new streams into `classes` (each with its own policy per scheduler); every class
    /// of a scheduler starts with the policy of its first class so far.
    pub fn set_classes(&mut self, classes: Arc<StreamClasses>) {
        let n = classes.len();
        let old = self.classes.len();
        self.policies = (0..self.scheds.len())
            .flat_map(|s| std::iter::repeat_n(self.policies[s * old], n))
            .collect();
        self.mitigations = (0..self.scheds.len())
            .flat_map(|s| std::iter::repeat_n(self.mitigations[s * old], n))
            .collect();
        self.class_of_app = classes.for_apps(&self.sc.workload);
        self.classes = classes;
    }

    /// The stream classes in use.
    pub fn classes(&self) -> &StreamClasses {
        &self.classes
    }

    /// Sets the policy scheduler `s` uses for its next bindings, for every class.
    pub fn set_policy(&mut self, s: usize, policy: &'static dyn Policy) {
        let n = self.classes.len();
        self.policies[s * n..(s + 1) * n].fill(policy);
    }

    /// Sets the policy scheduler `s` uses for its next bindings of streams of class `class`.
    pub fn set_class_policy(&mut self, s: usize, class: usize, policy: &'static dyn Policy) {
        self.policies[s * self.classes.len() + class] = policy;
    }

    /// Sets the tail-latency mitigation of the queries scheduler `s` emits from now on, for
    /// every class (queries already emitted keep theirs for reissue; the discard rule is the
    /// current one of the query's scheduler and class). A tuner switches it between windows. A
    /// stream's next emission may already have been processed, up to one frame period ahead
    /// (see `engine::emit`): that query keeps the previous mitigation's reissue. A job keeps
    /// the per-job mitigation (or none) it started with, until its window ends.
    pub fn set_mitigation(&mut self, s: usize, m: Mitigation) {
        let n = self.classes.len();
        self.mitigations[s * n..(s + 1) * n].fill(m);
        self.mitigations_changed();
    }

    /// Sets the configuration of class `class` at scheduler `s`: the policy of its next
    /// bindings and the mitigation of its queries emitted from now on (as
    /// [`Self::set_mitigation`], for that class only).
    pub fn set_class_configuration(&mut self, s: usize, class: usize, c: &Configuration) {
        let i = s * self.classes.len() + class;
        self.policies[i] = c.policy;
        self.mitigations[i] = c.mitigation;
        self.mitigations_changed();
    }

    fn mitigations_changed(&mut self) {
        self.any_discard = self.mitigations.iter().any(Mitigation::discards);
        self.any_reissue = self.mitigations.iter().any(Mitigation::reissues);
    }

    /// The mitigation of class `class` at scheduler `s` now.
    pub fn mitigation(&self, s: usize, class: usize) -> Mitigation {
        self.mitigations[s * self.classes.len() + class]
    }

    /// The mitigation of query `q`: its scheduler's for its stream's class.
    #[inline]
    fn mitigation_of(&self, q: &Query) -> Mitigation {
        let class = usize::from(self.facts[q.stream as usize].class);
        self.mitigations[usize::from(q.sched) * self.classes.len() + class]
    }

    /// The class of a new stream of workload application `app`.
    #[inline]
    fn class_of(&self, p: &continuum_core::workload::StreamParams) -> usize {
        match self.class_of_app[usize::from(p.app)] {
            Some(c) => usize::from(c),
            None => self
                .classes
                .class_of_bucket(p.demand.max_delay_ms, p.demand.rate_qps),
        }
    }

    /// Starts observing windows (for a meta-policy): from now on, incoming queries are counted
    /// by demand bucket and published loads are averaged, until [`Self::close_window`].
    pub fn observe(&mut self, buckets: DemandBuckets) {
        let n = self.sc.topology.schedulers.len();
        self.observer = Some(WindowObserver::new(
            buckets,
            self.workers.len(),
            n,
            self.now,
        ));
    }

    /// Ends the current observation window at the current time and starts the next; `None`
    /// when the run is not observed.
    pub fn close_window(&mut self) -> Option<WindowObservation> {
        let now = self.now;
        let view = &self.view;
        self.observer.as_mut().map(|o| o.close(now, view))
    }

    /// Starts counting outcomes by the window, scheduler and application of each stream's
    /// binding ([`Self::bound_counts`]); call it before the run starts. Off by default.
    pub fn count_by_binding(&mut self) {
        debug_assert!(
            self.stats.queries == 0,
            "counting by binding starts with the run"
        );
        self.by_bind.enable();
    }

    /// Outcomes so far of the queries of streams of workload application `app` opened at
    /// scheduler `s` during window `w`: the consequence of the bindings made there and then
    /// (zero unless [`Self::count_by_binding`] was called).
    pub fn bound_counts(&self, w: usize, s: usize, app: usize) -> continuum_core::metrics::Counts {
        self.by_bind.get(w, s, app)
    }

    /// The policy scheduler `s` uses now for streams of class `class`.
    pub fn policy(&self, s: usize, class: usize) -> &'static dyn Policy {
        self.policies[s * self.classes.len() + class]
    }

    /// Processes every event before `t_ms` and advances the clock to `t_ms`.
    pub fn run_until(&mut self, t_ms: f64) {
        while let Some(e) = self.events.pop_before(t_ms) {
            let t = e.time();
            // Two events ahead, their own records; one ahead (whose record was asked for at the
            // previous step), what that record points to.
            if let Some(after) = self.events.peek_ready(1) {
                self.prefetch_target(after);
            }
            if let Some(next) = self.events.peek_ready(0) {
                self.prefetch_linked(next);
            }
            self.now = t;
            self.stats.events += 1;
            self.dispatch(e);
        }
        self.jobs.fold();
        self.now = self.now.max(t_ms.min(self.horizon_ms));
    }

    /// Starts loading the record event `e` will touch first (see [`slab::prefetch`]).
    #[inline]
    fn prefetch_target(&self, e: queue::Event) {
        let stream = |id: u32| {
            if self.deep_prefetch {
                self.streams.prefetch_all(id);
            } else {
                self.streams.prefetch(id);
            }
        };
        match e.kind() {
            Kind::Emit => stream(e.a()),
            Kind::Arrive => {
                self.queries.prefetch(e.a());
                if e.b() > 0 {
                    stream(e.b() - 1);
                }
            }
            Kind::BatchDone => self.prefetch_worker(e.a()),
            _ => {}
        }
    }

    /// Starts loading worker `w`'s state (every line of it when prefetching deeply).
    #[inline]
    fn prefetch_worker(&self, w: u32) {
        if let Some(w) = self.workers.get(w as usize) {
            if self.deep_prefetch {
                slab::prefetch(w);
            } else {
                slab::prefetch_line(w);
            }
        }
    }

    /// Starts loading what the record of event `e` points to: an arriving query's worker (and,
    /// deeply, the counters its stream's next emission adds to); the queries of a finishing
    /// batch, deeply.
    #[inline]
    fn prefetch_linked(&self, e: queue::Event) {
        match e.kind() {
            Kind::Arrive => {
                let q = self.queries.get(e.a());
                self.prefetch_worker(q.worker);
                if self.deep_prefetch {
                    slab::prefetch_line(self.metrics.cell(q.t_emit, q.sched, q.app));
                }
            }
            Kind::BatchDone if self.deep_prefetch => {
                let server = self
                    .workers
                    .get(e.a() as usize)
                    .and_then(|w| w.servers.get(e.b() as usize));
                for &qid in server.map_or(&[][..], |s| &s.batch) {
                    self.queries.prefetch(qid);
                }
            }
            _ => {}
        }
    }

    /// Runs to the end: no arrival or emission after the horizon; in-flight queries drain.
    pub fn finish(&mut self) {
        self.run_until(f64::INFINITY);
    }

    /// Whether every event has been processed.
    pub fn is_done(&self) -> bool {
        self.events.is_empty()
    }

    /// The current simulated time, ms.
    pub fn now_ms(&self) -> f64 {
        self.now
    }

    /// The horizon (end of arrivals and emissions), ms.
    pub fn horizon_ms(&self) -> f64 {
        self.horizon_ms
    }

    /// The outcome counters and latency histogram so far.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The load view schedulers currently see.
    pub fn load_view(&self) -> &LoadView {
        &self.view
    }

    /// Work counters.
    pub fn stats(&self) -> SimStats {
        self.stats
    }

    /// The scenario being simulated.
    pub fn scenario(&self) -> &Arc<Scenario> {
        &self.sc
    }

    /// The run settings.
    pub fn config(&self) -> &SimConfig {
        &self.cfg
    }

    /// Query records still in flight (in a network leg, a queue or a batch; a reissued query
    /// in two places counts twice).
    pub fn in_flight(&self) -> usize {
        self.queries.live()
    }
}

#[cfg(test)]
mod golden_tests;
#[cfg(test)]
mod job_tests;
#[cfg(test)]
mod mitigation_tests;
#[cfg(test)]
mod present_tests;
#[cfg(test)]
mod pull_tests;
#[cfg(test)]
mod redeploy_tests;
#[cfg(test)]
mod tests;
