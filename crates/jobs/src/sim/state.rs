//! The state of a run — nodes, jobs, tasks, the queue, the future completions — and the loop
//! over scheduling steps that drives it; the report built from it at the end.

use super::SimSettings;
use crate::mitigation::Mitigation;
use crate::nodes::Nodes;
use crate::placement::{Placement, Slot};
use crate::report::{JobRecord, LatencySummary, QueueSample, Report, TaskCounts};
use crate::resources::Res;
use crate::workload::{JobSpec, JobsWorkload};
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TaskState {
    /// Its job has not arrived, or a parent stage has not finished.
    Pending,
    /// In the queue.
    Waiting,
    /// Running on this node.
    Running(u32),
    /// Finished.
    Done,
    /// Discarded by `tdp@r`.
    Discarded,
}

/// A task: its job, its stage, its attempt and its state.
#[derive(Debug, Clone, Copy)]
pub(super) struct Task {
    pub(super) job: u32,
    pub(super) stage: u16,
    pub(super) attempt: u32,
    pub(super) state: TaskState,
    pub(super) work_cpu_s: f64,
    /// When it entered its present state (queued or started), s.
    pub(super) since_s: f64,
}

/// Where a job is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum JobPhase {
    NotArrived,
    Active,
    Complete,
    Rejected,
}

/// A job's run-time state.
#[derive(Debug, Clone)]
pub(super) struct Job {
    pub(super) first_task: u32,
    pub(super) tasks: u32,
    pub(super) done: u32,
    pub(super) phase: JobPhase,
    /// Per stage: tasks not yet done.
    pub(super) stage_left: Vec<u32>,
    /// Per stage: parents not yet done.
    pub(super) parents_left: Vec<u32>,
    /// Per stage: the stages that wait for it.
    pub(super) children: Vec<Vec<u16>>,
    /// Requests of its running attempts (DRF's numerator).
    pub(super) allocated: Res,
    pub(super) completion_s: Option<f64>,
    pub(super) restarted: u32,
    pub(super) discarded: u32,
    pub(super) mitigated: bool,
}

/// A completion to come: attempt `attempt` of `task` at `t`; `seq` orders equal times.
#[derive(Debug, Clone, Copy)]
pub(super) struct Event {
    pub(super) t: f64,
    pub(super) seq: u64,
    pub(super) task: u32,
    pub(super) attempt: u32,
}

impl PartialEq for Event {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Event {
    fn cmp(&self, o: &Self) -> Ordering {
        self.t.total_cmp(&o.t).then(self.seq.cmp(&o.seq))
    }
}

/// A run in progress.
pub(super) struct Sim<'a> {
    pub(super) placement: &'a Placement,
    /// The next scheduling step (its time is `k × step_s`).
    pub(super) k: u64,
    /// The run is over: nothing more can happen, or the drain time is over.
    pub(super) over: bool,
    /// Per node, the cores its running attempts run at (their limits; their requests where
    /// they have none).
    pub(super) node_cpu_use: Vec<f64>,
    /// Jobs completed since the log was last taken, in completion order.
    pub(super) completed: Vec<u32>,
    pub(super) mitigation: Mitigation,
    pub(super) workload: &'a JobsWorkload,
    pub(super) settings: SimSettings,
    pub(super) specs: &'a [JobSpec],
    pub(super) slots: Vec<Slot>,
    pub(super) speeds: Vec<f64>,
    pub(super) node_running: Vec<u32>,
    pub(super) nodes: &'a Nodes,
    pub(super) jobs: Vec<Job>,
    pub(super) tasks: Vec<Task>,
    /// Job ids in arrival order, and the next to arrive.
    pub(super) arrival_order: Vec<u32>,
    pub(super) next_arrival: usize,
    pub(super) active_jobs: usize,
    /// The queue, in the order tasks entered it (entries no longer waiting are dropped at the
    /// next step).
    pub(super) waiting: Vec<u32>,
    pub(super) n_waiting: u64,
    pub(super) n_running: u64,
    pub(super) completions: BinaryHeap<Reverse<Event>>,
    pub(super) seq: u64,
    pub(super) counts: TaskCounts,
    /// Something changed since the last step that placed nothing.
    pub(super) dirty: bool,
    pub(super) samples: Vec<QueueSample>,
    pub(super) now: f64,
    /// Per job, its rank in a job-level step (`u32::MAX` outside one).
    pub(super) rank: Vec<u32>,
    /// DeepRM's visible slots, each a waiting task or empty (empty outside a DeepRM queue
    /// order, `placement::QueueOrder::Visible`).
    pub(super) visible: Vec<Option<u32>>,
}

impl<'a> Sim<'a> {
    pub(super) fn new(
        nodes: &'a Nodes,
        workload: &'a JobsWorkload,
        specs: &'a [JobSpec],
        placement: &'a Placement,
        mitigation: Mitigation,
        settings: &SimSettings,
    ) -> Self {
        let mut tasks = Vec::with_capacity(specs.iter().map(JobSpec::tasks).sum());
        let jobs = specs
            .iter()
            .enumerate()
            .map(|(j, spec)| {
                let first_task = tasks.len() as u32;
                let mut children = vec![Vec::new(); spec.stages.len()];
                for (k, s) in spec.stages.iter().enumerate() {
                    for &p in &s.parents {
                        children[p].push(k as u16);
                    }
                    tasks.extend(s.work_cpu_s.iter().map(|&w| Task {
                        job: j as u32,
                        stage: k as u16,
                        attempt: 0,
                        state: TaskState::Pending,
                        work_cpu_s: w,
                        since_s: 0.0,
                    }));
                }
                Job {
                    first_task,
                    tasks: spec.tasks() as u32,
                    done: 0,
                    phase: JobPhase::NotArrived,
                    stage_left: spec
                        .stages
                        .iter()
                        .map(|s| s.work_cpu_s.len() as u32)
                        .collect(),
                    parents_left: spec.stages.iter().map(|s| s.parents.len() as u32).collect(),
                    children,
                    allocated: Res::ZERO,
                    completion_s: None,
                    restarted: 0,
                    discarded: 0,
                    mitigated: false,
                }
            })
            .collect();
        let mut arrival_order: Vec<u32> = (0..specs.len() as u32).collect();
        arrival_order.sort_by(|a, b| {
            specs[*a as usize]
                .arrival_s
                .total_cmp(&specs[*b as usize].arrival_s)
        });
        Self {
            placement,
            k: 0,
            over: false,
            node_cpu_use: vec![0.0; nodes.len()],
            completed: Vec::new(),
            mitigation,
            workload,
            settings: *settings,
            specs,
            slots: nodes
                .nodes()
                .iter()
                .map(|n| Slot {
                    cap: n.capacity,
                    used: Res::ZERO,
                })
                .collect(),
            speeds: nodes.nodes().iter().map(|n| n.speed).collect(),
            node_running: vec![0; nodes.len()],
            nodes,
            jobs,
            tasks,
            arrival_order,
            next_arrival: 0,
            active_jobs: 0,
            waiting: Vec::new(),
            n_waiting: 0,
            n_running: 0,
            completions: BinaryHeap::new(),
            seq: 0,
            counts: TaskCounts::default(),
            dirty: false,
            samples: Vec::new(),
            now: 0.0,
            rank: vec![u32::MAX; specs.len()],
            visible: Vec::new(),
        }
    }

    /// The time of the next arrival or completion, if any.
    fn next_event_s(&self) -> Option<f64> {
        let a = self
            .arrival_order
            .get(self.next_arrival)
            .map(|&j| self.specs[j as usize].arrival_s);
        let c = self.completions.peek().map(|e| e.0.t);
        match (a, c) {
            (Some(a), Some(c)) => Some(a.min(c)),
            (x, y) => x.or(y),
        }
    }

    /// Steps until every job has arrived and none is active, nothing more can happen, or the
    /// drain time is over.
    pub(super) fn run(&mut self) {
        self.advance(f64::INFINITY);
        self.close();
    }

    /// Runs every scheduling step at a time ≤ `until` not yet run; returns whether the run
    /// goes on (a later call may run more steps). A step with nothing new to do is skipped to
    /// the step of the next event.
    pub(super) fn advance(&mut self, until: f64) -> bool {
        let step = self.settings.step_s;
        let end = self.settings.duration_s + self.settings.drain_s;
        while !self.over {
            let t = self.k as f64 * step;
            if t > end {
                self.over = true;
                break;
            }
            if t > until {
                return true;
            }
            self.sample_before(t);
            self.now = t;
            self.process_events(t);
            if self.dirty {
                self.dirty = self.schedule(t) > 0;
            }
            if self.next_arrival == self.arrival_order.len() && self.active_jobs == 0 {
                self.over = true;
                break;
            }
            if self.dirty {
                self.k += 1;
                continue;
            }
            let Some(te) = self.next_event_s() else {
                self.over = true;
                break;
            };
            self.k = (self.k + 1).max((te / step).ceil() as u64);
        }
        false
    }

    /// The windows that end at the last step too.
    pub(super) fn close(&mut self) {
        self.sample_before(self.now + self.settings.window_s * 1e-9);
    }

    /// Queue samples at every window end before `t`, of the state as it is now.
    fn sample_before(&mut self, t: f64) {
        let w = self.settings.window_s;
        let total_cpu = self.nodes.total().cpu;
        loop {
            let b = (self.samples.len() + 1) as f64 * w;
            if b >= t {
                break;
            }
            let used: f64 = self.slots.iter().map(|s| s.used.cpu).sum();
            self.samples.push(QueueSample {
                t_s: b,
                waiting: self.n_waiting,
                running: self.n_running,
                cpu_allocated: if total_cpu > 0.0 {
                    used / total_cpu
                } else {
                    0.0
                },
            });
        }
    }

    /// The report of the run as it stands.
    pub(super) fn report(mut self) -> Report {
        for t in &self.tasks {
            match t.state {
                TaskState::Pending if self.jobs[t.job as usize].phase == JobPhase::Active => {
                    self.counts.pending_at_end += 1
                }
                TaskState::Waiting => self.counts.waiting_at_end += 1,
                TaskState::Running(_) => self.counts.running_at_end += 1,
                _ => {}
            }
        }
        debug_assert!(
            self.counts.attempts_balance() && self.counts.tasks_balance(),
            "conservation: {:?}",
            self.counts
        );
        let jobs: Vec<JobRecord> = self
            .jobs
            .iter()
            .zip(self.specs)
            .enumerate()
            .map(|(i, (j, s))| JobRecord {
                id: i as u32,
                kind: s.kind,
                arrival_s: s.arrival_s,
                completion_s: j.completion_s,
                tasks: j.tasks,
                restarted: j.restarted,
                discarded: j.discarded,
                rejected: j.phase == JobPhase::Rejected,
            })
            .collect();
        let latencies: Vec<f64> = jobs.iter().filter_map(JobRecord::latency_s).collect();
        let done = || jobs.iter().filter(|j| j.completion_s.is_some());
        let first = done().map(|j| j.arrival_s).fold(f64::INFINITY, f64::min);
        let last = done()
            .filter_map(|j| j.completion_s)
            .fold(f64::NEG_INFINITY, f64::max);
        let arrived = self
            .jobs
            .iter()
            .filter(|j| j.phase != JobPhase::NotArrived)
            .count();
        let rejected = jobs.iter().filter(|j| j.rejected).count();
        Report {
            placement: self.placement.name().to_string(),
            mitigation: self.mitigation.name(),
            seed: self.settings.seed,
            end_s: self.now,
            jtl: LatencySummary::of(&latencies),
            jobs_arrived: arrived,
            jobs_completed: latencies.len(),
            jobs_rejected: rejected,
            jobs_unfinished: arrived - latencies.len() - rejected,
            tasks: self.counts,
            queue: self.samples,
            makespan_s: (!latencies.is_empty()).then_some(last - first),
            jobs,
        }
    }
}
