//! Jobs and their tasks (docs/model.md §12): a *job* is the queries one stream emits in one
//! metrics window T, its *tasks*. A job completes with its slowest task, as EdgeTuner's jobs
//! do; its tail is that task's latency. Every job is counted; under the per-job mitigations
//! (`restart@r`, `tdp@r`) a job is also *triggered* once ⌈r · n_j⌉ of its n_j tasks are done
//! (answered or dropped, [`continuum_core::mitigation::job_triggered`]):
//!
//! - `restart` (EdgeTuner's TRP): each task emitted and still unanswered then — on its way or
//!   queued; one already in a batch runs on — gets a copy, sent by the reissue machinery of
//!   [`super::hedge`] to the feasible binding other than its own that would answer it first. A
//!   copy leaves the scheduler no earlier than the task reached it (emission + δ_i + t_i);
//! - `tdp` (EdgeTuner's TDP): each task emitted and still unanswered then is *degraded* —
//!   removed from its queue if queued; on its way or in a batch, its answer is dropped when it
//!   comes. A degraded task is offered, and is neither a success, a failure nor rejected.
//!
//! Either acts on the tasks unfinished when the trigger fires, the paper's "remaining tasks"
//! of a job whose tasks are all in the system; the job's later tasks (emitted after it) run
//! their course.
//!
//! n_j is known when the job starts: the stream's emission schedule (its rate, its jitter's own
//! random source, its end) is its client's, so the simulator counts the emissions left in the
//! window on a copy of it. Should a job end with fewer tasks (a stream ending early), n_j becomes
//! what it emitted. A job's mitigation is its stream's scheduler's for its class when the job
//! starts.
//!
//! Bookkeeping costs little per query: a stream counts its current job's emissions itself, and
//! the outcomes of jobs under no per-job mitigation are logged and folded into their records in
//! batches (as the streams' tails are, [`super::tails`]). Records are reused through a free list
//! (their pending lists keep their capacity); the tails of finished jobs go to a histogram.

use super::hedge::{COPY, DEGRADED, DONE, JOB, SETTLED};
use super::{NO_QUERY, Query, Simulation};
use continuum_core::metrics::{LogHistogram, Outcome};
use continuum_core::mitigation::{Mitigation, job_triggered};

/// No job yet (a stream before its first emission).
pub(super) const NO_JOB: u32 = u32::MAX;

/// Outcomes logged before they are folded into their jobs.
const BATCH: usize = 1024;

/// What happens to a job when its trigger fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum JobKind {
    /// No per-job mitigation: the job is only counted.
    #[default]
    Plain,
    /// `restart@r`.
    Restart,
    /// `tdp@r`.
    Tdp,
}

/// One job in progress: what every job counts (16 bytes, so that folding outcomes into many
/// jobs stays in the caches).
#[derive(Debug, Clone, Copy, Default)]
struct Job {
    /// Tasks emitted (known once the job is closed).
    emitted: u32,
    /// Tasks with an outcome.
    settled: u32,
    /// Its slowest answered task so far, ms.
    slowest_ms: f32,
    /// [`OPEN`], [`LIVE`], [`LATE_JOB`], [`ANSWERED`], [`MITIGATED`], [`REJECTED_JOB`].
    flags: u8,
}

/// Its stream may still emit into it.
const OPEN: u8 = 1;
/// In use (not on the free list).
const LIVE: u8 = 2;
/// Some task failed or was rejected.
const LATE_JOB: u8 = 4;
/// Some task was answered.
const ANSWERED: u8 = 8;
/// Some task was rejected (never processed): the job is not complete.
const REJECTED_JOB: u8 = 32;
/// Under a per-job mitigation (its [`Trigger`] is in use).
const MITIGATED: u8 = 16;

/// What a job under a per-job mitigation adds, in a table beside the jobs' (same slots).
#[derive(Debug, Clone, Default)]
struct Trigger {
    /// n_j.
    tasks: u32,
    /// The stream's transmission time t_i, ms (when a restarted task reaches the scheduler).
    tx_ms: f32,
    /// The trigger's share of the tasks.
    ratio: f64,
    kind: JobKind,
    /// It has fired.
    fired: bool,
    /// The job's unsettled tasks' records (originals), oldest first, until it fires.
    pending: Vec<u32>,
}

/// A logged outcome of a task of a job under no per-job mitigation (8 bytes).
#[derive(Debug, Clone, Copy)]
struct Logged {
    /// The job, with [`LATE`] set for a failure or a rejection.
    job: u32,
    /// Latency if answered, ms; negative otherwise.
    ms: f32,
}

/// The bit of [`Logged::job`] that marks a late task (job slots stay far below 2^31).
const LATE: u32 = 1 << 31;

/// Whether `outcome` makes its job late.
#[inline]
fn is_late(outcome: Outcome) -> bool {
    matches!(outcome, Outcome::Failure | Outcome::Rejected)
}

/// The totals of finished jobs: those whose window is over and whose every task has an outcome.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobStats {
    /// Jobs finished, those of streams that found no binding included (their tasks are all
    /// rejected).
    pub jobs: u64,
    /// Jobs complete on time: every task that is not degraded answered within its deadline.
    pub on_time: u64,
    /// Jobs with at least one answered task (those the tail is over).
    pub answered: u64,
    /// Sum over those jobs of their slowest answered task, ms.
    pub tail_sum_ms: f64,
    /// Their slowest answered task, ms (quantiles within 1.6 %).
    pub tails: LogHistogram,
}

impl JobStats {
    /// EdgeTuner's job tail: the mean over jobs of each one's slowest answered task, ms (0
    /// when no job had an answer).
    pub fn mean_tail_ms(&self) -> f64 {
        if self.answered == 0 {
            0.0
        } else {
            self.tail_sum_ms / self.answered as f64
        }
    }

    /// Quantile `q` over jobs of each one's slowest answered task, ms (within 1.6 %; 0 when
    /// none).
    pub fn tail_quantile_ms(&self, q: f64) -> f64 {
        self.tails.quantile_ms(q)
    }

    /// on_time / jobs (0 when there was no job).
    pub fn on_time_ratio(&self) -> f64 {
        if self.jobs == 0 {
            0.0
        } else {
            self.on_time as f64 / self.jobs as f64
        }
    }
}

/// The jobs of one window (those its streams started in it), once finished: what EdgeTuner's
/// job reward reads (docs/model.md §12).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WindowJobs {
    /// Jobs finished.
    pub jobs: u64,
    /// Those *complete*: no task rejected (late answers and degraded tasks complete a job).
    pub complete: u64,
    /// Complete jobs with an answered task.
    pub answered: u64,
    /// Sum over those of their slowest answered task (EdgeTuner's JTL), ms.
    pub tail_sum_ms: f64,
}

/// Tasks taken into batches and tasks whose batch finished, since the run began (copies
/// included): EdgeTuner's allocated and completed tasks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskFlow {
    /// Taken into a batch.
    pub batched: u64,
    /// Their batch finished.
    pub processed: u64,
}

/// Every job in progress and the totals of finished ones.
#[derive(Debug, Clone)]
pub(super) struct Jobs {
    window_ms: f64,
    slots: Vec<Job>,
    /// The window of the job in each slot.
    slot_window: Vec<u32>,
    /// Finished jobs by their window.
    by_window: Vec<WindowJobs>,
    /// Tasks batched and processed.
    pub flow: TaskFlow,
    /// The triggers of jobs under a per-job mitigation (as long as the highest such slot).
    triggers: Vec<Trigger>,
    free: Vec<u32>,
    log: Vec<Logged>,
    /// Totals of finished jobs.
    pub stats: JobStats,
}

impl Jobs {
    /// No job yet, windows of `window_ms`.
    pub(crate) fn new(window_ms: f64) -> Self {
        Self {
            window_ms,
            slots: Vec::new(),
            slot_window: Vec::new(),
            by_window: Vec::new(),
            flow: TaskFlow::default(),
            triggers: Vec::new(),
            free: Vec::new(),
            log: Vec::new(),
            stats: JobStats::default(),
        }
    }

    /// The window of an emission at `t_ms`.
    #[inline]
    pub(crate) fn window_of(&self, t_ms: f64) -> u32 {
        (t_ms / self.window_ms) as u32
    }

    /// When window `w` ends, ms.
    fn window_end(&self, w: u32) -> f64 {
        f64::from(w + 1) * self.window_ms
    }

    /// A new open job of window `window` under `m` of `tasks` tasks; its slot.
    fn open(&mut self, m: Mitigation, tasks: u32, tx_ms: f32, window: u32) -> u32 {
        let (kind, ratio) = match m {
            Mitigation::Restart { ratio } => (JobKind::Restart, ratio),
            Mitigation::Tdp { ratio } => (JobKind::Tdp, ratio),
            _ => (JobKind::Plain, 0.0),
        };
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.slots.push(Job::default());
                self.slot_window.push(0);
                (self.slots.len() - 1) as u32
            }
        };
        self.slot_window[id as usize] = window;
        debug_assert!(self.slots[id as usize].flags & LIVE == 0);
        let mitigated = kind != JobKind::Plain;
        self.slots[id as usize] = Job {
            flags: OPEN | LIVE | if mitigated { MITIGATED } else { 0 },
            ..Job::default()
        };
        if mitigated {
            if self.triggers.len() <= id as usize {
                self.triggers.resize_with(id as usize + 1, Trigger::default);
            }
            let t = &mut self.triggers[id as usize];
            debug_assert!(t.pending.is_empty());
            *t = Trigger {
                tasks,
                tx_ms,
                ratio,
                kind,
                fired: false,
                pending: std::mem::take(&mut t.pending),
            };
        }
        id
    }

    /// The trigger of job `job`, under a per-job mitigation.
    #[inline]
    fn trigger(&mut self, job: u32) -> &mut Trigger {
        debug_assert!(self.slots[job as usize].flags & MITIGATED != 0);
        &mut self.triggers[job as usize]
    }

    /// Task outcome of job `job` (late: a failure or a rejection), counted at once.
    #[inline]
    fn record(&mut self, job: u32, late: bool, latency_ms: Option<f32>) {
        let j = &mut self.slots[job as usize];
        debug_assert!(j.flags & LIVE != 0);
        j.settled += 1;
        if late {
            j.flags |= LATE_JOB;
            if latency_ms.is_none() {
                j.flags |= REJECTED_JOB;
            }
        }
        if let Some(ms) = latency_ms {
            j.flags |= ANSWERED;
            j.slowest_ms = j.slowest_ms.max(ms);
        }
    }

    /// Finishes job `job` if it is closed and every task has an outcome.
    #[inline]
    fn finish_if_done(&mut self, job: u32) {
        let j = &self.slots[job as usize];
        if j.flags & (OPEN | LIVE) == LIVE && j.settled == j.emitted {
            self.finish(job);
        }
    }

    /// Job `job` is done: into the totals, its slot freed.
    #[inline(never)]
    fn finish(&mut self, job: u32) {
        let j = &mut self.slots[job as usize];
        j.flags &= !LIVE;
        let j = *j;
        if j.flags & MITIGATED != 0 {
            self.triggers[job as usize].pending.clear();
        }
        let s = &mut self.stats;
        s.jobs += 1;
        s.on_time += u64::from(j.flags & LATE_JOB == 0);
        if j.flags & ANSWERED != 0 {
            s.answered += 1;
            s.tail_sum_ms += f64::from(j.slowest_ms);
            s.tails.record(f64::from(j.slowest_ms));
        }
        let w = self.window_jobs_mut(self.slot_window[job as usize]);
        w.jobs += 1;
        if j.flags & REJECTED_JOB == 0 {
            w.complete += 1;
            if j.flags & ANSWERED != 0 {
                w.answered += 1;
                w.tail_sum_ms += f64::from(j.slowest_ms);
            }
        }
        self.free.push(job);
    }

    /// Logs an outcome of a task of job `job` (under no per-job mitigation).
    #[inline]
    fn log(&mut self, job: u32, outcome: Outcome, latency_ms: Option<f32>) {
        debug_assert!(job < LATE);
        self.log.push(Logged {
            job: if is_late(outcome) { job | LATE } else { job },
            ms: latency_ms.unwrap_or(-1.0),
        });
        if self.log.len() >= BATCH {
            self.fold();
        }
    }

    /// Folds every logged outcome into its job, finishing the jobs that are done.
    pub(crate) fn fold(&mut self) {
        let log = std::mem::take(&mut self.log);
        for l in &log {
            let job = l.job & !LATE;
            self.record(job, l.job & LATE != 0, (l.ms >= 0.0).then_some(l.ms));
            self.finish_if_done(job);
        }
        self.log = log;
        self.log.clear();
    }

    /// A job of window `window` of a stream that found no binding: finished at once, not on
    /// time, not complete.
    pub(crate) fn unbound(&mut self, window: u32) {
        self.stats.jobs += 1;
        self.window_jobs_mut(window).jobs += 1;
    }

    /// The record of the jobs of window `w` (grown as needed).
    fn window_jobs_mut(&mut self, w: u32) -> &mut WindowJobs {
        let w = w as usize;
        if self.by_window.len() <= w {
            self.by_window.resize(w + 1, WindowJobs::default());
        }
        &mut self.by_window[w]
    }
}

impl Simulation {
    /// The totals of finished jobs (every job once the run has finished).
    pub fn jobs(&self) -> &JobStats {
        &self.jobs.stats
    }

    /// The finished jobs of window `w` so far (outcomes logged but not yet folded are folded
    /// first, so call it between events).
    pub fn window_jobs(&mut self, w: usize) -> WindowJobs {
        self.jobs.fold();
        self.jobs.by_window.get(w).copied().unwrap_or_default()
    }

    /// Tasks taken into batches and processed since the run began.
    pub fn task_flow(&self) -> TaskFlow {
        self.jobs.flow
    }

    /// The job of the pending emission of stream `id`: its current job, or a new one when the
    /// emission opens a window (the previous job is then closed). Counts the emission.
    #[inline]
    pub(super) fn job_of_emission(&mut self, id: u32) -> u32 {
        let st = self.streams.get_mut(id);
        // Emissions come in time order: one before the job's end is in its window.
        if st.pending_ms < st.job_end_ms {
            st.job_emitted += 1;
            return st.job;
        }
        self.new_job(id)
    }

    /// Stream `id`'s pending emission opens a window: a new job, under the mitigation of the
    /// stream's scheduler and class now; the previous job is closed.
    #[inline(never)]
    fn new_job(&mut self, id: u32) -> u32 {
        let st = self.streams.get_mut(id);
        let w = self.jobs.window_of(st.pending_ms);
        let end = self.jobs.window_end(w);
        let (old, emitted) = (st.job, st.job_emitted);
        let f = self.facts[st.serial as usize];
        let m = self.mitigations[usize::from(st.sched) * self.classes.len() + usize::from(f.class)];
        let tasks = if m.job_ratio().is_some() {
            // The emissions left in the window, this one included, on a copy of the schedule.
            let jitter = self.sc.workload.jitter;
            let mut e = st.emission.clone();
            let mut n = 1u32;
            while e.next(jitter).is_some_and(|x| x < end) {
                n += 1;
            }
            n
        } else {
            0
        };
        let tx = st.tx_ms as f32;
        let job = self.jobs.open(m, tasks, tx, w);
        let st = self.streams.get_mut(id);
        st.job = job;
        st.job_end_ms = end;
        st.job_emitted = 1;
        st.job_mitigated = m.job_ratio().is_some();
        if old != NO_JOB {
            self.close_job(old, emitted);
        }
        job
    }

    /// Job `job` gets no more tasks: it had `emitted`. Should that be fewer than n_j, n_j
    /// becomes `emitted` and the trigger is checked again.
    pub(super) fn close_job(&mut self, job: u32, emitted: u32) {
        let j = &mut self.jobs.slots[job as usize];
        j.flags &= !OPEN;
        j.emitted = emitted;
        if j.flags & MITIGATED != 0 {
            let t = self.jobs.trigger(job);
            if t.tasks > emitted {
                t.tasks = emitted;
                self.check_trigger(job);
            }
        }
        self.jobs.finish_if_done(job);
    }

    /// Task record `qid` (an original, `q`) of its job has its outcome.
    #[inline]
    pub(super) fn job_task_settled(
        &mut self,
        q: &Query,
        qid: u32,
        outcome: Outcome,
        latency_ms: Option<f32>,
    ) {
        if q.flags & JOB == 0 {
            self.jobs.log(q.job, outcome, latency_ms);
            return;
        }
        let t = self.jobs.trigger(q.job);
        if let Some(at) = t.pending.iter().position(|x| *x == qid) {
            t.pending.remove(at);
        }
        self.job_settled_now(q.job, outcome, latency_ms);
    }

    /// A task of job `job`, under a per-job mitigation, has its outcome: counted at once, then
    /// the trigger is checked.
    pub(super) fn job_settled_now(&mut self, job: u32, outcome: Outcome, latency_ms: Option<f32>) {
        self.jobs.record(job, is_late(outcome), latency_ms);
        self.check_trigger(job);
        self.jobs.finish_if_done(job);
    }

    /// An emission of stream `id` that is not sent (its stream has no worker, or its job's
    /// `tdp` has fired) settles at once as `outcome` in its job `job`.
    pub(super) fn job_unsent(&mut self, job: u32, mitigated: bool, outcome: Outcome) {
        if mitigated {
            self.job_settled_now(job, outcome, None);
        } else {
            self.jobs.log(job, outcome, None);
        }
    }

    /// After the emission of task `qid` of job `job` (under a per-job mitigation): before the
    /// trigger, the task is pending; after it, the task runs its course (the trigger acts on
    /// the tasks unfinished when it fires, not on later ones).
    pub(super) fn job_task_sent(&mut self, job: u32, qid: u32) {
        let t = self.jobs.trigger(job);
        if !t.fired {
            t.pending.push(qid);
        }
    }

    /// Fires job `job`'s trigger (under a per-job mitigation) if it is due.
    fn check_trigger(&mut self, job: u32) {
        let settled = self.jobs.slots[job as usize].settled;
        let t = self.jobs.trigger(job);
        if t.fired || !job_triggered(settled, t.tasks, t.ratio) {
            return;
        }
        t.fired = true;
        let (kind, tx) = (t.kind, t.tx_ms);
        let mut pending = std::mem::take(&mut t.pending);
        self.metrics.mitigation.jobs_triggered += 1;
        let now = self.now;
        for &qid in &pending {
            // A record made ahead of its emission (the next emission rides on an arrival) is a
            // later task: it runs its course.
            if self.queries.get(qid).t_emit > now {
                continue;
            }
            match kind {
                JobKind::Restart => self.restart(qid, tx),
                _ => self.degrade(qid),
            }
        }
        // The buffer goes back for its capacity (the job may have finished meanwhile).
        pending.clear();
        self.jobs.triggers[job as usize].pending = pending;
    }

    /// `restart`: task `qid` (an original) gets a copy, unless answered, ended or already
    /// copied. The copy leaves the scheduler now, or if later when the task reaches it:
    /// emission + δ_i + t_i (`tx_ms`, the stream's transmission). A task that has reached it
    /// and is already in a batch runs on alone.
    fn restart(&mut self, qid: u32, tx_ms: f32) {
        let now = self.now;
        let q = *self.queries.get(qid);
        if q.flags & (SETTLED | DONE) != 0 || q.twin != NO_QUERY {
            return;
        }
        let leaves = now.max(q.t_emit + f64::from(q.access_ms) + f64::from(tx_ms));
        if leaves == now && self.in_batch(qid, q.worker) {
            return;
        }
        self.send_copy(qid, &q, leaves, true);
    }

    /// Whether record `qid` is in a batch of worker `w`.
    fn in_batch(&self, qid: u32, w: u32) -> bool {
        self.workers[w as usize]
            .servers
            .iter()
            .any(|s| s.batch.contains(&qid))
    }

    /// `tdp`: task `qid` (an unsettled original) is degraded; its records waiting in a queue
    /// leave it, those on their way or in a batch are dropped when they arrive or answer.
    fn degrade(&mut self, qid: u32) {
        let q = self.queries.get_mut(qid);
        debug_assert!(q.flags & (COPY | SETTLED) == 0);
        q.flags |= DEGRADED;
        let twin = q.twin;
        self.metrics.mitigation.degraded += 1;
        self.settle(qid, Outcome::Degraded, None);
        self.drop_if_queued(qid);
        if twin != NO_QUERY {
            self.drop_if_queued(twin);
        }
    }
}
