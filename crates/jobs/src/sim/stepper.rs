//! A run driven from outside, window by window (EdgeTuner's time-steps): the caller advances
//! virtual time to a window's end, reads what happened and the state the scheduler sees, and
//! may switch the placement configuration and the mitigation before the next window. Driven
//! with one configuration throughout, it runs exactly the steps [`super::run_jobs`] runs.

use super::state::{JobPhase, Sim, TaskState};
use super::{SimSettings, check_jobs};
use crate::error::JobsError;
use crate::mitigation::Mitigation;
use crate::nodes::Nodes;
use crate::placement::Placement;
use crate::report::Report;
use crate::resources::Res;
use crate::workload::{JobSpec, JobsWorkload};

/// A node as the scheduler sees it (EdgeTuner's node 9-tuple): per resource what running
/// attempts use, what they requested, and the capacity. Use is the cores attempts run at
/// (their limits); memory and GPUs are used as requested (the model has no other notion of use).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct NodeView {
    /// Used, requested and capacity of CPU cores.
    pub cpu: [f64; 3],
    /// Used, requested and capacity of memory, GB.
    pub mem: [f64; 3],
    /// Used, requested and capacity of GPUs.
    pub gpu: [f64; 3],
}

/// A waiting task (EdgeTuner's 7-tuple, and how long it has waited).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WaitingView {
    /// Its request.
    pub request: Res,
    /// Its limits (0: none).
    pub limit: Res,
    /// Its work, CPU-seconds.
    pub work_cpu_s: f64,
    /// Its job.
    pub job: u32,
    /// Seconds since it entered the queue.
    pub waited_s: f64,
}

/// A running task (EdgeTuner's 6-tuple).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunningView {
    /// Its work, CPU-seconds.
    pub work_cpu_s: f64,
    /// The node it runs on.
    pub node: u32,
    /// The cores it runs at.
    pub cpu: f64,
    /// The GPUs it holds.
    pub gpu: f64,
    /// Seconds since it started.
    pub elapsed_s: f64,
    /// Its job.
    pub job: u32,
}

/// What the scheduler sees at a window's end.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Observation {
    /// Every node, in the order of [`Nodes::nodes`].
    pub nodes: Vec<NodeView>,
    /// The first tasks of the queue (queue order: the longest waiting first), at most the
    /// number asked for.
    pub waiting: Vec<WaitingView>,
    /// The longest running tasks, the longest first, at most the number asked for.
    pub running: Vec<RunningView>,
    /// Tasks waiting in all.
    pub waiting_total: u64,
    /// Tasks running in all.
    pub running_total: u64,
    /// The longest any waiting task has waited, s (0 when none waits).
    pub max_waited_s: f64,
    /// The longest any running task has run, s (0 when none runs).
    pub max_elapsed_s: f64,
}

/// A job completed in a window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Completed {
    /// The job.
    pub job: u32,
    /// Its latency (completion − arrival), s.
    pub latency_s: f64,
}

/// A run advanced window by window.
pub struct Stepper<'a> {
    sim: Sim<'a>,
}

impl<'a> Stepper<'a> {
    /// A run of `jobs` (checked as [`super::run_jobs`] checks them) starting under `placement`
    /// and `mitigation`.
    pub fn new(
        nodes: &'a Nodes,
        workload: &'a JobsWorkload,
        jobs: &'a [JobSpec],
        placement: &'a Placement,
        mitigation: Mitigation,
        settings: &SimSettings,
    ) -> Result<Self, JobsError> {
        settings.check()?;
        check_jobs(workload, jobs)?;
        Ok(Self {
            sim: Sim::new(nodes, workload, jobs, placement, mitigation, settings),
        })
    }

    /// The configuration from the next step on. A change of placement lets the next step try
    /// the queue again (the new scoring may place what the old one could not).
    pub fn set_config(&mut self, placement: &'a Placement, mitigation: Mitigation) {
        if !std::ptr::eq(self.sim.placement, placement) && self.sim.placement != placement {
            self.sim.dirty = true;
        }
        self.sim.placement = placement;
        self.sim.mitigation = mitigation;
    }

    /// Runs every step at a time ≤ `until_s`; returns the jobs completed since the last call
    /// (in completion order) and whether the run goes on.
    pub fn advance(&mut self, until_s: f64) -> (Vec<Completed>, bool) {
        let going = self.sim.advance(until_s);
        let done = self
            .sim
            .completed
            .drain(..)
            .map(|j| {
                let job = &self.sim.jobs[j as usize];
                let arrival = self.sim.specs[j as usize].arrival_s;
                Completed {
                    job: j,
                    latency_s: job.completion_s.unwrap_or(arrival) - arrival,
                }
            })
            .collect();
        (done, going)
    }

    /// What the scheduler sees at `at_s` (a window's end): every node, the first `waiting`
    /// tasks of the queue and the `running` longest-running tasks.
    pub fn observe(&self, at_s: f64, waiting: usize, running: usize) -> Observation {
        let sim = &self.sim;
        let nodes = sim
            .slots
            .iter()
            .zip(&sim.node_cpu_use)
            .map(|(s, &cpu_use)| NodeView {
                cpu: [cpu_use, s.used.cpu, s.cap.cpu],
                mem: [s.used.mem_gb, s.used.mem_gb, s.cap.mem_gb],
                gpu: [s.used.gpu, s.used.gpu, s.cap.gpu],
            })
            .collect();
        let mut obs = Observation {
            nodes,
            waiting_total: sim.n_waiting,
            running_total: sim.n_running,
            ..Observation::default()
        };
        for &task in &sim.waiting {
            let t = &sim.tasks[task as usize];
            if t.state != TaskState::Waiting {
                continue;
            }
            let waited_s = (at_s - t.since_s).max(0.0);
            obs.max_waited_s = obs.max_waited_s.max(waited_s);
            if obs.waiting.len() < waiting {
                let (request, limit) = sim.needs(task);
                obs.waiting.push(WaitingView {
                    request,
                    limit,
                    work_cpu_s: t.work_cpu_s,
                    job: t.job,
                    waited_s,
                });
            } else {
                break; // the queue is in entry order: the first waiting entry waited longest
            }
        }
        let mut runs: Vec<RunningView> = Vec::new();
        for (j, job) in sim.jobs.iter().enumerate() {
            if job.phase != JobPhase::Active {
                continue;
            }
            let first = job.first_task as usize;
            for t in &sim.tasks[first..first + job.tasks as usize] {
                if let TaskState::Running(node) = t.state {
                    let stage = &sim.specs[j].stages[t.stage as usize];
                    runs.push(RunningView {
                        work_cpu_s: t.work_cpu_s,
                        node,
                        cpu: stage.allocated_cpu(),
                        gpu: stage.request.gpu,
                        elapsed_s: (at_s - t.since_s).max(0.0),
                        job: j as u32,
                    });
                }
            }
        }
        runs.sort_by(|a, b| b.elapsed_s.total_cmp(&a.elapsed_s));
        obs.max_elapsed_s = runs.first().map_or(0.0, |r| r.elapsed_s);
        runs.truncate(running);
        obs.running = runs;
        obs
    }

    /// The report of the run so far (the whole run once [`Self::advance`] said it is over).
    pub fn report(mut self) -> Report {
        self.sim.close();
        self.sim.report()
    }
}
