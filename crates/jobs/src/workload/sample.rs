//! Drawing the jobs of a run: arrival times from the workload's arrival process, then each job
//! from a random stream of its own (seed, job index), so that a job's kind, stages and tasks do
//! not depend on the other jobs, on the placement or on the mitigation: every configuration
//! sees the same jobs.

use super::{DagShape, JobKind, JobsWorkload, MAX_TASKS_PER_JOB, Work, arrivals};
use crate::error::JobsError;
use crate::resources::Res;
use continuum_core::config::Dist;
use continuum_core::rng::{Purpose, SimRng, stream_rng};
use rand::Rng;

/// Tag of the arrival stream among [`Purpose::Arrivals`] streams.
const ARRIVALS_TAG: u64 = 0x4a4f_4253_4152_5256;
/// The least CPU request a drawn task gets, cores (one millicore).
const MIN_CPU: f64 = 0.001;
/// Tag of the per-job streams among [`Purpose::Other`] streams.
pub(crate) const JOB_TAG: u64 = 0x4a4f_4253_4a4f_4221;

/// One stage of a job: tasks that run the same code, so share their requests and limits, and
/// differ in their work. A job without dependencies has one stage.
#[derive(Debug, Clone, PartialEq)]
pub struct StageSpec {
    /// Indices of the stages that must finish before this one's tasks enter the queue; each
    /// below this stage's own index.
    pub parents: Vec<usize>,
    /// What each task requests (the filter's and the scores' amount).
    pub request: Res,
    /// Each task's limits; 0 in a resource means no limit. A task runs at its CPU limit when it
    /// has one, at its CPU request otherwise.
    pub limit: Res,
    /// Each task's work, CPU-seconds: one entry per task.
    pub work_cpu_s: Vec<f64>,
}

impl StageSpec {
    /// The cores a task of this stage runs at: its limit if it has one, else its request.
    pub fn allocated_cpu(&self) -> f64 {
        if self.limit.cpu > 0.0 {
            self.limit.cpu
        } else {
            self.request.cpu
        }
    }
}

/// One job of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    /// When it arrives, s from the run's start.
    pub arrival_s: f64,
    /// Index of its kind in the workload.
    pub kind: usize,
    /// Its stages, parents first.
    pub stages: Vec<StageSpec>,
    /// Its own Volcano SLA waiting time, s (`None`: the placement's, if any).
    pub sla_waiting_s: Option<f64>,
}

impl JobSpec {
    /// How many tasks it has.
    pub fn tasks(&self) -> usize {
        self.stages.iter().map(|s| s.work_cpu_s.len()).sum()
    }

    /// Whether some stage waits for another (a DAG job: never discarded, docs/jobs.md).
    pub fn has_dependencies(&self) -> bool {
        self.stages.iter().any(|s| !s.parents.is_empty())
    }

    /// Checks a job built by hand: stages present and non-empty, parents earlier than their
    /// child, amounts finite and ≥ 0, work finite and > 0, some CPU to run at.
    pub(crate) fn check(&self, job: usize) -> Result<(), JobsError> {
        let bad = |message: String| Err(JobsError::Job { job, message });
        if !(self.arrival_s.is_finite() && self.arrival_s >= 0.0) {
            return bad(format!("arrival_s must be >= 0, got {}", self.arrival_s));
        }
        if self.stages.is_empty() || self.stages.len() > usize::from(u16::MAX) {
            return bad(format!("a job needs 1 to {} stages", u16::MAX));
        }
        for (k, s) in self.stages.iter().enumerate() {
            if s.work_cpu_s.is_empty() {
                return bad(format!("stage {k} has no task"));
            }
            if s.parents.iter().any(|p| *p >= k) {
                return bad(format!(
                    "stage {k} names a parent that is not an earlier stage"
                ));
            }
            let amounts = s.request.arr().into_iter().chain(s.limit.arr());
            if amounts.into_iter().any(|x| !(x.is_finite() && x >= 0.0)) {
                return bad(format!(
                    "stage {k}: requests and limits must be finite and >= 0"
                ));
            }
            if s.allocated_cpu() <= 0.0 {
                return bad(format!("stage {k}: a task needs some CPU to run at"));
            }
            if s.work_cpu_s.iter().any(|w| !(w.is_finite() && *w > 0.0)) {
                return bad(format!("stage {k}: work must be finite and > 0"));
            }
        }
        Ok(())
    }
}

impl JobsWorkload {
    /// The jobs arriving in `[0, duration_s)` for `seed`, in arrival order.
    pub fn sample_jobs(&self, seed: u64, duration_s: f64) -> Vec<JobSpec> {
        let mut rng = stream_rng(seed, Purpose::Arrivals, ARRIVALS_TAG, 0);
        let times = arrivals::times(&self.arrivals, duration_s, &mut rng);
        let total: f64 = self.kinds.iter().map(|k| k.share).sum();
        times
            .into_iter()
            .enumerate()
            .map(|(i, t)| {
                let mut rng = stream_rng(seed, Purpose::Other, JOB_TAG, i as u64);
                let u = rng.random::<f64>() * total;
                let mut acc = 0.0;
                let kind = self
                    .kinds
                    .iter()
                    .position(|k| {
                        acc += k.share;
                        k.share > 0.0 && u < acc
                    })
                    .unwrap_or_else(|| last_with_share(&self.kinds));
                draw_job(&self.kinds[kind], kind, t, &mut rng)
            })
            .collect()
    }
}

/// The last kind with a share > 0 (where a draw at the top of the range lands).
fn last_with_share(kinds: &[JobKind]) -> usize {
    kinds.iter().rposition(|k| k.share > 0.0).unwrap_or(0)
}

/// A count from a distribution: rounded, at least `min`, at most `max`.
fn count(d: &Dist, rng: &mut SimRng, min: usize, max: usize) -> usize {
    let x = d.sample(rng).round();
    if x.is_finite() && x > 0.0 {
        (x as usize).clamp(min, max)
    } else {
        min
    }
}

/// One job of kind `k` arriving at `t`.
fn draw_job(k: &JobKind, kind: usize, t: f64, rng: &mut SimRng) -> JobSpec {
    let n = count(&k.tasks, rng, 1, MAX_TASKS_PER_JOB);
    let (s, shape) = match &k.dag {
        Some(d) => (count(&d.stages, rng, 1, n), d.shape),
        None => (1, DagShape::Chain),
    };
    let sla_waiting_s = k.sla_waiting_s.as_ref().map(|d| d.sample(rng));
    let stages = (0..s)
        .map(|j| {
            let parents = match (j, shape) {
                (0, _) => Vec::new(),
                (_, DagShape::Chain) => vec![j - 1],
                (_, DagShape::Tree) => vec![rng.random_range(0..j)],
            };
            let size = n / s + usize::from(j < n % s);
            draw_stage(k, parents, size, rng)
        })
        .collect();
    JobSpec {
        arrival_s: t,
        kind,
        stages,
        sla_waiting_s,
    }
}

/// A stage of `size` tasks: requests and limits drawn once, work per task or once for all.
fn draw_stage(k: &JobKind, parents: Vec<usize>, size: usize, rng: &mut SimRng) -> StageSpec {
    // At least one millicore, Kubernetes's smallest CPU amount: a task must run at some speed.
    let cpu = k.cpu_request.sample(rng).max(MIN_CPU);
    let mem = k.mem_request_gb.sample(rng);
    let gpu = k.gpu.as_ref().map_or(0.0, |d| d.sample(rng));
    let cpu_limit = k.cpu_limit.as_ref().map_or(0.0, |d| d.sample(rng).max(cpu));
    let mem_limit = k
        .mem_limit_gb
        .as_ref()
        .map_or(0.0, |d| d.sample(rng).max(mem));
    let mut stage = StageSpec {
        parents,
        request: Res::new(cpu, gpu, mem),
        // Kubernetes requires a GPU limit equal to the request: the GPU "limit" is the request.
        limit: Res::new(cpu_limit, gpu, mem_limit),
        work_cpu_s: Vec::with_capacity(size),
    };
    let cores = stage.allocated_cpu();
    let mut draw = || match &k.work {
        Work::CpuSeconds(d) => d.sample(rng),
        Work::DurationS(d) => d.sample(rng) * cores,
    };
    // A continuous draw of exactly 0 (or a rounding to it) would be a task of no work.
    if k.work_per_stage {
        let w = draw().max(1e-9);
        stage.work_cpu_s.resize(size, w);
    } else {
        stage.work_cpu_s.extend((0..size).map(|_| draw().max(1e-9)));
    }
    stage
}
