//! TapFinger's evaluation setting (docs/jobs.md §11; TapFinger §V-A "Task Arrivals", §V-B1,
//! §V-C): N edge clusters of CPU cores and GPUs, a finite workload of 64 tasks per cluster
//! arriving as a Poisson process, each task connectable to a random subset of the clusters, and
//! the two synthetic task types. Every draw comes from the seed, so every method of a comparison
//! meets the same tasks.

use super::task::{Alloc, CLUSTER_CPU, CLUSTER_GPU, MlTask, MlTaskKind};
use continuum_core::rng::{Purpose, SimRng, stream_rng};
use rand::Rng;
use rand_distr::{Distribution, Poisson};

/// Tasks per cluster in a workload: "We set the number of tasks in the ML workloads to be 64
/// times the number of agents in the environment" (TapFinger §V-A).
pub const TASKS_PER_CLUSTER: usize = 64;
/// Size of each cluster's pending set: "By default, we set the size of the pending task set as
/// 10" (TapFinger §V-A).
pub const PENDING_SET: usize = 10;
/// Probability that a task can reach a given cluster: the bandwidth of each device–cluster
/// connection is uniform on [0, 10] Mbps and a cluster is connectable at 5 Mbps or more
/// (TapFinger §V-A), so one half.
pub const ELIGIBLE_P: f64 = 0.5;
/// Share of resource-sensitive tasks. Assumption: TapFinger defines the two types without their
/// mix; one half each.
pub const SENSITIVE_SHARE: f64 = 0.5;
/// Relative noise on each timestep's progress: "We add ±0.1 randomness to the normalized
/// progress gains" (TapFinger §V-B). Assumption: a multiplicative factor uniform on [0.9, 1.1].
pub const PROGRESS_NOISE: f64 = 0.1;
/// Capacities of the heterogeneous 6-cluster setting (TapFinger §V-C): (4, 4) … (32, 32).
pub const HETEROGENEOUS: [(u32, u32); 6] = [(4, 4), (8, 8), (12, 12), (16, 16), (24, 24), (32, 32)];

/// One setting of the ML-task problem.
#[derive(Debug, Clone, PartialEq)]
pub struct MlSetting {
    /// Each cluster's CPU cores and GPUs.
    pub clusters: Vec<Alloc>,
    /// Tasks in the workload.
    pub tasks: usize,
    /// Mean arrivals per timestep (the Poisson rate λ).
    pub rate: f64,
    /// Pending-set size per cluster.
    pub pending: usize,
    /// Probability that a task can reach a cluster.
    pub eligible_p: f64,
    /// Share of resource-sensitive tasks.
    pub sensitive_share: f64,
    /// Relative noise on progress per timestep.
    pub noise: f64,
    /// Timesteps lost when a started task's allocation changes (0: none, as TapFinger grants
    /// Optimus and Tiresias in §V-C).
    pub overhead: f64,
    /// Timesteps after which a run stops with its unfinished tasks counted as such.
    pub max_steps: u64,
}

impl MlSetting {
    /// TapFinger's synthetic setting with `n` clusters of 16 cores and 16 GPUs at rate `rate`:
    /// 64·n tasks, pending sets of 10, half the clusters reachable per task, the 0.5-timestep
    /// switching overhead.
    pub fn synthetic(n: usize, rate: f64) -> Self {
        Self {
            clusters: vec![Alloc::new(CLUSTER_CPU, CLUSTER_GPU); n],
            tasks: TASKS_PER_CLUSTER * n,
            rate,
            pending: PENDING_SET,
            eligible_p: ELIGIBLE_P,
            sensitive_share: SENSITIVE_SHARE,
            noise: PROGRESS_NOISE,
            overhead: super::task::SWITCH_OVERHEAD_STEPS,
            max_steps: 100_000,
        }
    }

    /// The heterogeneous 6-cluster setting of TapFinger §V-C at rate `rate`.
    pub fn heterogeneous(rate: f64) -> Self {
        Self {
            clusters: HETEROGENEOUS
                .iter()
                .map(|&(c, g)| Alloc::new(c, g))
                .collect(),
            ..Self::synthetic(HETEROGENEOUS.len(), rate)
        }
    }

    /// Checks the setting; the error names the field and what was expected.
    pub fn validate(&self) -> Result<(), String> {
        if self.clusters.is_empty() {
            return Err("clusters: expected at least one cluster".into());
        }
        if let Some((i, c)) = self
            .clusters
            .iter()
            .enumerate()
            .find(|(_, c)| !super::task::SYNTHETIC_MIN.fits_in(**c))
        {
            return Err(format!(
                "clusters[{i}]: {c:?} cannot hold a task's minimum of 2 cores and 1 GPU"
            ));
        }
        if self.tasks == 0 {
            return Err("tasks: expected at least 1".into());
        }
        if !(self.rate > 0.0 && self.rate.is_finite()) {
            return Err(format!("rate: expected a number > 0, got {}", self.rate));
        }
        if self.pending == 0 {
            return Err("pending: expected at least 1".into());
        }
        for (name, p) in [
            ("eligible_p", self.eligible_p),
            ("sensitive_share", self.sensitive_share),
            ("noise", self.noise),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("{name}: expected a number in [0, 1], got {p}"));
            }
        }
        if !(self.overhead >= 0.0 && self.overhead < 1.0) {
            return Err(format!("overhead: expected [0, 1), got {}", self.overhead));
        }
        if self.max_steps == 0 {
            return Err("max_steps: expected at least 1".into());
        }
        Ok(())
    }
}

/// One task of a workload.
#[derive(Debug, Clone, PartialEq)]
pub struct MlTaskSpec {
    /// Its index in the workload (arrival order).
    pub id: u32,
    /// The timestep it arrives at.
    pub arrival: u64,
    /// The task.
    pub task: MlTask,
    /// The clusters it can reach, ascending (at least one).
    pub eligible: Vec<u32>,
}

/// The tasks of `setting` for `seed`: arrivals per timestep Poisson(λ), each task's type and
/// reachable clusters drawn independently (a task that reaches none is given one cluster drawn
/// uniformly: every task is served somewhere, none is lost).
pub fn draw_tasks(setting: &MlSetting, seed: u64) -> Vec<MlTaskSpec> {
    let mut rng = stream_rng(seed, Purpose::Arrivals, 0x6d6c, 0);
    let poisson = Poisson::new(setting.rate).expect("a validated rate is positive and finite");
    let n = setting.clusters.len();
    let mut out = Vec::with_capacity(setting.tasks);
    let mut t = 0u64;
    while out.len() < setting.tasks {
        let k = poisson.sample(&mut rng) as usize;
        for _ in 0..k.min(setting.tasks - out.len()) {
            out.push(draw_one(setting, out.len() as u32, t, n, &mut rng));
        }
        t += 1;
    }
    out
}

fn draw_one(setting: &MlSetting, id: u32, arrival: u64, n: usize, rng: &mut SimRng) -> MlTaskSpec {
    let kind = if rng.random::<f64>() < setting.sensitive_share {
        MlTaskKind::Sensitive
    } else {
        MlTaskKind::Insensitive
    };
    let mut eligible: Vec<u32> = (0..n as u32)
        .filter(|_| rng.random::<f64>() < setting.eligible_p)
        .collect();
    if eligible.is_empty() {
        eligible.push(rng.random_range(0..n as u32));
    }
    MlTaskSpec {
        id,
        arrival,
        task: MlTask::synthetic(kind),
        eligible,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workload_has_the_papers_size_rate_and_reach() {
        let s = MlSetting::synthetic(3, 2.0);
        let tasks = draw_tasks(&s, 7);
        assert_eq!(tasks.len(), 192);
        assert!(tasks.windows(2).all(|w| w[0].arrival <= w[1].arrival));
        // 192 tasks at 2 per timestep: the last arrives near timestep 96.
        let last = tasks.last().unwrap().arrival as f64;
        assert!((70.0..130.0).contains(&last), "last arrival {last}");
        let reach: f64 =
            tasks.iter().map(|t| t.eligible.len() as f64).sum::<f64>() / tasks.len() as f64;
        // Each of 3 clusters with probability 1/2, an empty set given one: 1.5 + 1/8.
        assert!((1.4..1.85).contains(&reach), "mean reach {reach}");
        assert!(tasks.iter().all(|t| !t.eligible.is_empty()));
        assert_eq!(draw_tasks(&s, 7), tasks);
        assert_ne!(draw_tasks(&s, 8), tasks);
    }

    #[test]
    fn bad_settings_name_their_field() {
        let mut s = MlSetting::synthetic(2, 2.0);
        s.clusters[1] = Alloc::new(1, 4);
        assert!(s.validate().unwrap_err().starts_with("clusters[1]"));
        let mut s = MlSetting::synthetic(2, 2.0);
        s.rate = 0.0;
        assert!(s.validate().unwrap_err().starts_with("rate"));
        let mut s = MlSetting::synthetic(2, 2.0);
        s.overhead = 1.0;
        assert!(s.validate().unwrap_err().starts_with("overhead"));
        assert!(MlSetting::heterogeneous(6.0).validate().is_ok());
    }
}
