//! A run of TapFinger's problem (docs/jobs.md §11; TapFinger §III): edge clusters take ML
//! tasks from their queues and give each a whole number of CPU cores and GPUs. Time goes in
//! timesteps (TapFinger's 10 s scheduling interval). At the start of each, the tasks that
//! arrived join the queue of every cluster they can reach, and a scheduler decides
//! ([`Interval`]): it places tasks from the clusters' pending sets — the earliest-arrived
//! unplaced tasks a cluster can take, at most the setting's pending size — and, where it
//! re-allocates (Optimus, Tiresias), changes or withdraws the allocation of the tasks bound to a
//! cluster. A placed task stays bound to its cluster until it completes (TapFinger eq. 3). Then
//! every running task progresses at its speed for the timestep, less the switching overhead
//! when its allocation changed after it had made progress, times the noise of the timestep.
//!
//! The objective is the total completion time, Σ (finish − arrival), which is the sum over
//! timesteps of the tasks alive (TapFinger §IV-A): each cluster's reward is minus its share of
//! it, the tasks bound to it or waiting in its queue ([`MlRun::associated`]).

use super::task::Alloc;
use super::workload::{MlSetting, MlTaskSpec, draw_tasks};
use continuum_core::rng::{Purpose, stream_rng};
use rand::Rng;

/// Where a task is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TaskState {
    /// Not arrived yet.
    Future,
    /// Arrived, in the queues of the clusters it can reach, not placed.
    Queued,
    /// Bound to a cluster, holding `alloc` (`None`: withdrawn, waiting there to resume).
    Bound {
        /// Its cluster.
        cluster: u32,
        /// What it holds this timestep.
        alloc: Option<Alloc>,
    },
    /// Completed at this time (timesteps, fractional).
    Done(f64),
}

/// A task of a run: its spec and where it stands.
#[derive(Debug, Clone)]
pub struct TaskRun {
    /// The task as drawn.
    pub spec: MlTaskSpec,
    /// Where it is.
    pub state: TaskState,
    /// Work left.
    pub remaining: f64,
    /// The allocation it ran at in the last timestep (`None`: it did not run).
    pub held: Option<Alloc>,
    /// The timestep it was first placed at.
    pub start: Option<u64>,
    /// The allocation it was first placed at.
    pub first: Option<Alloc>,
    /// GPUs × timesteps it has run (Tiresias's attained service).
    pub service: f64,
}

impl TaskRun {
    /// Timesteps since it was first placed (0 before).
    pub fn elapsed(&self, now: u64) -> u64 {
        self.start.map_or(0, |s| now.saturating_sub(s))
    }
}

/// Why an action was refused (a scheduler's bug, never the run's).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ActionError {
    /// The task is not queued (not arrived, placed already, or done).
    #[error("task {0} is not waiting in a queue")]
    NotQueued(u32),
    /// The cluster is not one the task can reach.
    #[error("task {0} cannot reach cluster {1}")]
    Unreachable(u32, u32),
    /// The allocation is outside the task's range.
    #[error("task {0}: {1:?} is not a valid allocation")]
    Invalid(u32, Alloc),
    /// The allocation does not fit in the cluster's free resources.
    #[error("task {0}: {1:?} does not fit in cluster {2}'s free {3:?}")]
    NoRoom(u32, Alloc, u32, Alloc),
    /// The task is not bound to a cluster.
    #[error("task {0} is not bound to a cluster")]
    NotBound(u32),
}

/// A run in progress.
#[derive(Debug, Clone)]
pub struct MlRun {
    setting: MlSetting,
    seed: u64,
    tasks: Vec<TaskRun>,
    free: Vec<Alloc>,
    now: u64,
    arrived: usize,
    done: usize,
}

impl MlRun {
    /// A run of `setting`'s tasks for `seed` (the setting must be valid).
    pub fn new(setting: MlSetting, seed: u64) -> Self {
        let tasks = draw_tasks(&setting, seed);
        Self::of_tasks(setting, tasks, seed)
    }

    /// A run of the given tasks (sorted by arrival, ids their indices) in `setting`'s clusters;
    /// `seed` draws the progress noise.
    pub fn of_tasks(setting: MlSetting, tasks: Vec<MlTaskSpec>, seed: u64) -> Self {
        debug_assert!(tasks.windows(2).all(|w| w[0].arrival <= w[1].arrival));
        debug_assert!(tasks.iter().enumerate().all(|(i, t)| t.id as usize == i));
        let tasks = tasks
            .into_iter()
            .map(|spec| TaskRun {
                remaining: spec.task.work(),
                spec,
                state: TaskState::Future,
                held: None,
                start: None,
                first: None,
                service: 0.0,
            })
            .collect();
        Self {
            free: setting.clusters.clone(),
            setting,
            seed,
            tasks,
            now: 0,
            arrived: 0,
            done: 0,
        }
    }

    /// The setting.
    pub fn setting(&self) -> &MlSetting {
        &self.setting
    }

    /// The current timestep.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Whether every task has completed or the step limit is reached.
    pub fn finished(&self) -> bool {
        self.done == self.tasks.len() || self.now >= self.setting.max_steps
    }

    /// Every task, by id.
    pub fn tasks(&self) -> &[TaskRun] {
        &self.tasks
    }

    /// Number of clusters.
    pub fn clusters(&self) -> usize {
        self.free.len()
    }

    /// Cluster `n`'s capacity.
    pub fn capacity(&self, n: u32) -> Alloc {
        self.setting.clusters[n as usize]
    }

    /// Cluster `n`'s free cores and GPUs now.
    pub fn free(&self, n: u32) -> Alloc {
        self.free[n as usize]
    }

    /// The queued tasks cluster `n` can take, by arrival.
    pub fn queue(&self, n: u32) -> impl Iterator<Item = &TaskRun> + '_ {
        self.tasks[..self.arrived]
            .iter()
            .filter(move |t| t.state == TaskState::Queued && t.spec.eligible.contains(&n))
    }

    /// Cluster `n`'s pending set: the first tasks of its queue, at most the pending size.
    pub fn pending(&self, n: u32) -> Vec<u32> {
        self.queue(n)
            .take(self.setting.pending)
            .map(|t| t.spec.id)
            .collect()
    }

    /// Tasks in cluster `n`'s queue beyond its pending set (TapFinger's q_n).
    pub fn queued_beyond(&self, n: u32) -> usize {
        self.queue(n).count().saturating_sub(self.setting.pending)
    }

    /// The tasks bound to cluster `n` (running or withdrawn), by id.
    pub fn bound(&self, n: u32) -> Vec<u32> {
        self.tasks[..self.arrived]
            .iter()
            .filter(|t| matches!(t.state, TaskState::Bound { cluster, .. } if cluster == n))
            .map(|t| t.spec.id)
            .collect()
    }

    /// Tasks associated with cluster `n`: bound to it or in its queue (TapFinger's R_{n,t}).
    pub fn associated(&self, n: u32) -> usize {
        self.bound(n).len() + self.queue(n).count()
    }

    /// Tasks alive now: arrived and not completed (TapFinger's R_t).
    pub fn alive(&self) -> usize {
        self.arrived - self.done
    }

    /// The decisions of the current timestep, on this run.
    pub fn interval(&mut self) -> Interval<'_> {
        Interval { run: self }
    }

    /// Admits the tasks arriving at the current timestep (call before the interval).
    pub fn admit(&mut self) {
        while self.arrived < self.tasks.len() && self.tasks[self.arrived].spec.arrival <= self.now {
            self.tasks[self.arrived].state = TaskState::Queued;
            self.arrived += 1;
        }
    }

    /// Runs the current timestep: every task holding an allocation progresses, the timestep
    /// ends. Returns the tasks completed in it.
    pub fn advance(&mut self) -> Vec<u32> {
        let now = self.now;
        let mut completed = Vec::new();
        for i in 0..self.arrived {
            let t = &mut self.tasks[i];
            let TaskState::Bound { cluster, alloc } = t.state else {
                continue;
            };
            let Some(a) = alloc else {
                t.held = None;
                continue;
            };
            let started = t.remaining < t.spec.task.work();
            let lost = if started && t.held != Some(a) {
                self.setting.overhead
            } else {
                0.0
            };
            let noise = if self.setting.noise > 0.0 {
                let mut r = stream_rng(self.seed, Purpose::Other, 0x6d6c_7275 ^ i as u64, now);
                1.0 + r.random_range(-self.setting.noise..=self.setting.noise)
            } else {
                1.0
            };
            let rate = t.spec.task.speed(a.cpu, a.gpu) * noise;
            let useful = 1.0 - lost;
            t.held = Some(a);
            if rate * useful >= t.remaining {
                let used = lost + t.remaining / rate;
                t.service += f64::from(a.gpu) * used;
                t.remaining = 0.0;
                t.state = TaskState::Done(now as f64 + used);
                let f = &mut self.free[cluster as usize];
                *f = Alloc::new(f.cpu + a.cpu, f.gpu + a.gpu);
                self.done += 1;
                completed.push(t.spec.id);
            } else {
                t.service += f64::from(a.gpu);
                t.remaining -= rate * useful;
            }
        }
        self.now += 1;
        completed
    }
}

/// One timestep's decisions: what a scheduler reads and does between [`MlRun::admit`] and
/// [`MlRun::advance`].
pub struct Interval<'a> {
    run: &'a mut MlRun,
}

impl Interval<'_> {
    /// The run, to read.
    pub fn run(&self) -> &MlRun {
        self.run
    }

    /// Places queued task `id` on cluster `n` at `alloc` (it is bound there until it completes).
    pub fn place(&mut self, id: u32, n: u32, alloc: Alloc) -> Result<(), ActionError> {
        let r = &mut *self.run;
        let t = r.tasks.get(id as usize).ok_or(ActionError::NotQueued(id))?;
        if t.state != TaskState::Queued {
            return Err(ActionError::NotQueued(id));
        }
        if !t.spec.eligible.contains(&n) {
            return Err(ActionError::Unreachable(id, n));
        }
        take(r, id, n, alloc)?;
        let t = &mut r.tasks[id as usize];
        t.state = TaskState::Bound {
            cluster: n,
            alloc: Some(alloc),
        };
        t.start = Some(r.now);
        t.first = Some(alloc);
        Ok(())
    }

    /// Sets what bound task `id` holds from this timestep (`None`: withdraws it; it waits bound
    /// to its cluster). A task that has made progress and changes its allocation loses the
    /// setting's overhead when it next runs.
    pub fn set_alloc(&mut self, id: u32, alloc: Option<Alloc>) -> Result<(), ActionError> {
        let r = &mut *self.run;
        let t = r.tasks.get(id as usize).ok_or(ActionError::NotBound(id))?;
        let TaskState::Bound {
            cluster,
            alloc: old,
        } = t.state
        else {
            return Err(ActionError::NotBound(id));
        };
        if let Some(o) = old {
            let f = &mut r.free[cluster as usize];
            *f = Alloc::new(f.cpu + o.cpu, f.gpu + o.gpu);
        }
        if let Some(a) = alloc
            && let Err(e) = take(r, id, cluster, a)
        {
            if let Some(o) = old {
                let f = &mut r.free[cluster as usize];
                *f = Alloc::new(f.cpu - o.cpu, f.gpu - o.gpu);
            }
            return Err(e);
        }
        r.tasks[id as usize].state = TaskState::Bound { cluster, alloc };
        if alloc.is_some() && r.tasks[id as usize].start.is_none() {
            r.tasks[id as usize].start = Some(r.now);
        }
        Ok(())
    }
}

/// Takes `alloc` for task `id` out of cluster `n`'s free resources, if valid and room.
fn take(r: &mut MlRun, id: u32, n: u32, alloc: Alloc) -> Result<(), ActionError> {
    if !r.tasks[id as usize].spec.task.valid(alloc.cpu, alloc.gpu) {
        return Err(ActionError::Invalid(id, alloc));
    }
    let f = &mut r.free[n as usize];
    if !alloc.fits_in(*f) {
        return Err(ActionError::NoRoom(id, alloc, n, *f));
    }
    *f = Alloc::new(f.cpu - alloc.cpu, f.gpu - alloc.gpu);
    Ok(())
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
