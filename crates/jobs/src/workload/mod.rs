//! A jobs workload (docs/jobs.md, "Jobs and tasks"): when jobs arrive, what kinds there are and
//! what each kind's tasks ask for, as validated from a YAML file (`schema.rs`); drawing the jobs
//! of a run (`sample.rs`) and their arrival times (`arrivals.rs`).

pub(crate) mod arrivals;
pub(crate) mod sample;
mod schema;

pub use sample::{JobSpec, StageSpec};

use crate::error::JobsError;
use crate::nodes::NodeSplit;
use continuum_core::config::{ConfigError, Dist, Source};
use std::path::Path;

/// Jobs per minute over the day: one level, or EdgeTuner's Daytime and Night levels.
#[derive(Debug, Clone, PartialEq)]
pub enum Arrivals {
    /// A Poisson process of this many jobs per minute.
    Constant {
        /// Jobs per minute.
        per_min: f64,
    },
    /// A Poisson process whose rate is `night_per_min` from hour `night_from_h` to hour
    /// `night_to_h` of each day (wrapping past midnight when `night_from_h > night_to_h`) and
    /// `day_per_min` otherwise; the run starts at hour `start_h`.
    Diurnal {
        /// Jobs per minute in the daytime.
        day_per_min: f64,
        /// Jobs per minute at night.
        night_per_min: f64,
        /// Hour (0–24) the night starts.
        night_from_h: f64,
        /// Hour (0–24) the night ends.
        night_to_h: f64,
        /// Hour of the day at the run's time 0.
        start_h: f64,
    },
}

/// How a DAG job's stages depend on each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DagShape {
    /// Stage k depends on stage k − 1.
    Chain,
    /// Stage k > 0 depends on one earlier stage drawn uniformly: a random tree rooted at stage 0.
    Tree,
}

/// The stages of a DAG job kind: how many, and how they depend on each other.
#[derive(Debug, Clone)]
pub struct DagSpec {
    /// Stages per job (rounded, at least 1, at most the job's tasks).
    pub stages: Dist,
    /// Their dependencies.
    pub shape: DagShape,
}

/// How much work a task carries.
#[derive(Debug, Clone)]
pub enum Work {
    /// CPU-seconds: the task runs work / (allocated cores × node speed) seconds.
    CpuSeconds(Dist),
    /// Seconds at the task's allocated cores on a node of speed 1 (work = duration × cores):
    /// the form traces report.
    DurationS(Dist),
}

/// A kind of job: its share of arrivals and what its tasks ask for.
#[derive(Debug, Clone)]
pub struct JobKind {
    /// Its name.
    pub name: String,
    /// Its relative share of arrivals (≥ 0; the shares need not sum to 1).
    pub share: f64,
    /// Tasks per job (rounded, at least 1, at most [`MAX_TASKS_PER_JOB`]).
    pub tasks: Dist,
    /// Stages with dependencies (`None`: independent tasks, an AI job).
    pub dag: Option<DagSpec>,
    /// CPU cores each task requests (drawn once per stage: a stage's tasks run the same code).
    pub cpu_request: Dist,
    /// CPU cores each task may use (its allocation when given; raised to the request if drawn
    /// below it).
    pub cpu_limit: Option<Dist>,
    /// Memory each task requests, GB.
    pub mem_request_gb: Dist,
    /// Memory limit, GB (raised to the request if drawn below it).
    pub mem_limit_gb: Option<Dist>,
    /// GPUs each task requests (0 when absent).
    pub gpu: Option<Dist>,
    /// Each task's work.
    pub work: Work,
    /// Whether the work is drawn per task (the trace measures each task) or once per stage,
    /// shared by its tasks (the trace measures whole jobs, whose tasks run together).
    pub work_per_stage: bool,
    /// Factor on each attempt's run time (drawn per attempt; 1 when absent): a straggler.
    pub slowdown: Option<Dist>,
    /// Volcano SLA waiting time of each job, s (drawn per job; absent: the placement's own).
    pub sla_waiting_s: Option<Dist>,
}

/// The most tasks a job may have; a larger draw is cut to it (docs/jobs.md).
pub const MAX_TASKS_PER_JOB: usize = 10_000;

/// A validated jobs workload file.
#[derive(Debug, Clone)]
pub struct JobsWorkload {
    /// Job arrivals.
    pub arrivals: Arrivals,
    /// The job kinds, at least one with a share > 0.
    pub kinds: Vec<JobKind>,
    /// How the topology's clusters become nodes.
    pub nodes: NodeSplit,
}

impl JobsWorkload {
    /// Reads and validates a jobs workload file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        Self::from_source(&Source::read(path)?)
    }

    /// Validates a jobs workload from YAML text; every error says `file:line:col: field`.
    pub fn from_source(src: &Source) -> Result<Self, ConfigError> {
        schema::build(src)
    }

    /// The mean jobs per minute over a day.
    pub fn mean_per_min(&self) -> f64 {
        arrivals::mean_per_min(&self.arrivals)
    }

    /// The workload with kind `name`'s arrivals alone (EdgeTuner runs its DAG batch and AI
    /// workloads apart): the other kinds' shares set to 0 and every rate scaled by the kind's
    /// part of the shares, so the kind arrives as often as in the whole workload.
    pub fn only_kind(&self, name: &str) -> Result<Self, JobsError> {
        let names: Vec<&str> = self.kinds.iter().map(|k| k.name.as_str()).collect();
        let Some(i) = names.iter().position(|n| *n == name) else {
            return Err(JobsError::Name(format!(
                "kind `{name}` is not in the workload; its kinds: {}",
                names.join(", ")
            )));
        };
        let total: f64 = self.kinds.iter().map(|k| k.share).sum();
        let part = self.kinds[i].share / total;
        if part <= 0.0 {
            return Err(JobsError::Name(format!(
                "kind `{name}` has share 0: it never arrives"
            )));
        }
        let mut w = self.clone();
        for (k, kind) in w.kinds.iter_mut().enumerate() {
            if k != i {
                kind.share = 0.0;
            }
        }
        Ok(w.scaled(part))
    }

    /// The workload with every arrival rate times `factor` (> 0): the same jobs, more or
    /// less often (a load sweep).
    pub fn scaled(&self, factor: f64) -> Self {
        let mut w = self.clone();
        w.arrivals = match w.arrivals {
            Arrivals::Constant { per_min } => Arrivals::Constant {
                per_min: per_min * factor,
            },
            Arrivals::Diurnal {
                day_per_min,
                night_per_min,
                night_from_h,
                night_to_h,
                start_h,
            } => Arrivals::Diurnal {
                day_per_min: day_per_min * factor,
                night_per_min: night_per_min * factor,
                night_from_h,
                night_to_h,
                start_h,
            },
        };
        w
    }
}
