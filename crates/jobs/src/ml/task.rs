//! TapFinger's synthetic ML tasks (docs/jobs.md §10; Li et al., "TapFinger: Task Placement and
//! Fine-Grained Resource Allocation for Edge Machine Learning", §V-A "Synthetic ML Tasks"). A
//! task asks for whole CPU cores and whole GPUs, runs at a *speed* (work units per timestep) that
//! depends on its kind and its allocation, and pays a fixed switching overhead when a scheduler
//! changes the allocation of a task that has already made progress.

/// Fewest CPU cores a synthetic task runs on: "The minimum resource requirements of both
/// synthetic and test-bed ML tasks are 2 CPU cores and 1 GPU" (TapFinger §V-B).
pub const MIN_CPU: u32 = 2;
/// Fewest GPUs a synthetic task runs on (TapFinger §V-B, as [`MIN_CPU`]).
pub const MIN_GPU: u32 = 1;
/// CPU cores of an edge cluster in the synthetic evaluation, and so the most one task can hold:
/// "each edge cluster has 16 CPU cores and 16 GPUs" (TapFinger §V-B1), and an allocation is at
/// most the cluster's capacity (TapFinger eq. 8).
pub const CLUSTER_CPU: u32 = 16;
/// GPUs of an edge cluster in the synthetic evaluation (TapFinger §V-B1, as [`CLUSTER_CPU`]).
pub const CLUSTER_GPU: u32 = 16;
/// Timesteps a resource-insensitive task takes at any valid allocation: "accomplished in 4
/// timesteps as long as the minimum resource requirement is met" (TapFinger §V-A).
pub const INSENSITIVE_STEPS: f64 = 4.0;
/// Fewest timesteps a resource-sensitive task takes, at the largest allocation: "accomplished
/// from 2 to 17 timesteps under different resource allocations" (TapFinger §V-A).
pub const SENSITIVE_MIN_STEPS: f64 = 2.0;
/// Most timesteps a resource-sensitive task takes, at its minimum (TapFinger §V-A, as
/// [`SENSITIVE_MIN_STEPS`]).
pub const SENSITIVE_MAX_STEPS: f64 = 17.0;
/// Timesteps lost when a running task's allocation changes (checkpoint, re-allocate, resume): "we
/// fix the switching overhead to 0.5 timestep" (TapFinger §V-A, "Baselines"; §V-B: 5 s pausing
/// and resuming, a timestep being a 10 s scheduling interval).
pub const SWITCH_OVERHEAD_STEPS: f64 = 0.5;
/// A synthetic task's work: its progress from 0 to 1. Assumption: TapFinger speaks of
/// "normalized progress gains" (§V-B) without printing the total; a task done at progress 1
/// makes the insensitive task's gain 1/4 per timestep.
pub const SYNTHETIC_WORK: f64 = 1.0;
/// Scale κ of the sensitive speed's tanh(n/κ) terms. Assumption: TapFinger names the
/// hyperbolic tangent (§V-A) but prints no constants; κ = 8, half the cluster's 16 units of
/// each resource, makes each term saturate at the cluster's size (tanh 2 = 0.964).
pub const TANH_SCALE: f64 = 8.0;

/// A CPU and GPU allocation in whole units: one core, one GPU (TapFinger §III-A's smallest
/// units δ_r; eq. 8 keeps allocations integer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Alloc {
    /// CPU cores.
    pub cpu: u32,
    /// GPUs.
    pub gpu: u32,
}

impl Alloc {
    /// An allocation of `cpu` cores and `gpu` GPUs.
    pub const fn new(cpu: u32, gpu: u32) -> Self {
        Alloc { cpu, gpu }
    }

    /// Whether this allocation fits in `free` (every resource at most the free amount).
    pub fn fits_in(self, free: Alloc) -> bool {
        self.cpu <= free.cpu && self.gpu <= free.gpu
    }
}

/// The smallest synthetic allocation, where the sensitive task takes 17 timesteps.
pub const SYNTHETIC_MIN: Alloc = Alloc::new(MIN_CPU, MIN_GPU);
/// The largest synthetic allocation, where the sensitive task takes 2 timesteps.
pub const SYNTHETIC_MAX: Alloc = Alloc::new(CLUSTER_CPU, CLUSTER_GPU);

/// TapFinger's two synthetic task types (§V-A, "Synthetic ML Tasks").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MlTaskKind {
    /// Its progress gain is fixed: done in [`INSENSITIVE_STEPS`] at any valid allocation.
    Insensitive,
    /// Its speed grows sub-linearly with cores and GPUs, a hyperbolic tangent
    /// ([`MlTask::speed`]): done in 2 to 17 timesteps.
    Sensitive,
}

/// One ML task: its kind, the allocations it may run at and its work.
#[derive(Debug, Clone, PartialEq)]
pub struct MlTask {
    kind: MlTaskKind,
    min: Alloc,
    max: Alloc,
    work: f64,
}

/// φ(c, g) = tanh(c/κ) · tanh(g/κ): each factor concave and saturating, as Amdahl's law is
/// (TapFinger §V-A); their product lets the scarcer resource bound the speed (TapFinger Fig. 2:
/// few cores hold back many GPUs).
fn phi(cpu: u32, gpu: u32) -> f64 {
    (f64::from(cpu) / TANH_SCALE).tanh() * (f64::from(gpu) / TANH_SCALE).tanh()
}

impl MlTask {
    /// A task of `kind` that runs at allocations from `min` to `max` (both included, each
    /// resource on its own) and carries `work` units.
    ///
    /// # Panics
    /// When `min` has no core or no GPU (every TapFinger task needs both), when `min` exceeds
    /// `max` in a resource, or when `work` is not finite and positive.
    pub fn new(kind: MlTaskKind, min: Alloc, max: Alloc, work: f64) -> Self {
        assert!(
            min.cpu >= 1 && min.gpu >= 1,
            "an ML task needs at least one core and one GPU, got minimum {min:?}"
        );
        assert!(
            min.fits_in(max),
            "an ML task's minimum {min:?} exceeds its maximum {max:?}"
        );
        assert!(
            work.is_finite() && work > 0.0,
            "an ML task's work must be finite and positive, got {work}"
        );
        MlTask {
            kind,
            min,
            max,
            work,
        }
    }

    /// A synthetic task of TapFinger's evaluation: minimum (2, 1), maximum (16, 16), work 1.
    pub fn synthetic(kind: MlTaskKind) -> Self {
        MlTask::new(kind, SYNTHETIC_MIN, SYNTHETIC_MAX, SYNTHETIC_WORK)
    }

    /// The task's kind.
    pub fn kind(&self) -> MlTaskKind {
        self.kind
    }

    /// The smallest allocation it runs at.
    pub fn min(&self) -> Alloc {
        self.min
    }

    /// The largest allocation it may hold.
    pub fn max(&self) -> Alloc {
        self.max
    }

    /// Its work, in work units.
    pub fn work(&self) -> f64 {
        self.work
    }

    /// Whether (`cpu`, `gpu`) is an allocation the task runs at: each resource a whole number
    /// from the task's minimum to its maximum (TapFinger eq. 8, and §IV-C's mask: "either exceed
    /// the resource capacity or are less than the minimum required amount" are invalid). Eq. 8's
    /// 0 means "not placed" and is not an allocation to run at.
    pub fn valid(&self, cpu: u32, gpu: u32) -> bool {
        (self.min.cpu..=self.max.cpu).contains(&cpu) && (self.min.gpu..=self.max.gpu).contains(&gpu)
    }

    /// Every valid allocation, cores outer, GPUs inner.
    pub fn allocations(&self) -> impl Iterator<Item = Alloc> + '_ {
        (self.min.cpu..=self.max.cpu)
            .flat_map(move |cpu| (self.min.gpu..=self.max.gpu).map(move |gpu| Alloc::new(cpu, gpu)))
    }

    /// Work units done per timestep at (`cpu`, `gpu`); 0 at an invalid allocation (a task below
    /// its minimum makes no progress, TapFinger §V-A).
    ///
    /// - Insensitive: work / 4.
    /// - Sensitive: work · r(c, g), r = 1/17 + (1/2 − 1/17) · (φ(c, g) − φ(2, 1)) / (φ(16, 16) −
    ///   φ(2, 1)), φ(c, g) = tanh(c/8) · tanh(g/8). TapFinger names the tanh and the 2-to-17
    ///   range only (§V-A); the affine map is the assumption that pins that range exactly: r is
    ///   1/17 at (2, 1) and 1/2 at (16, 16), increasing and concave in each resource between.
    ///   The anchors are the kind's, not the task's, so a task held on a larger cluster can go
    ///   faster (1.87 timesteps at (32, 32)).
    pub fn speed(&self, cpu: u32, gpu: u32) -> f64 {
        if !self.valid(cpu, gpu) {
            return 0.0;
        }
        match self.kind {
            MlTaskKind::Insensitive => self.work / INSENSITIVE_STEPS,
            MlTaskKind::Sensitive => {
                let (lo, hi) = (1.0 / SENSITIVE_MAX_STEPS, 1.0 / SENSITIVE_MIN_STEPS);
                let (p_lo, p_hi) = (
                    phi(SYNTHETIC_MIN.cpu, SYNTHETIC_MIN.gpu),
                    phi(SYNTHETIC_MAX.cpu, SYNTHETIC_MAX.gpu),
                );
                let u = (phi(cpu, gpu) - p_lo) / (p_hi - p_lo);
                self.work * (lo + (hi - lo) * u)
            }
        }
    }

    /// Timesteps to do the whole work at (`cpu`, `gpu`): work / speed; infinite at an invalid
    /// allocation.
    pub fn steps_at(&self, cpu: u32, gpu: u32) -> f64 {
        let v = self.speed(cpu, gpu);
        if v > 0.0 {
            self.work / v
        } else {
            f64::INFINITY
        }
    }

    /// Timesteps left for `remaining_work` when the task runs at `next` from now on, having held
    /// `previous` in the last timestep (`None`: it held nothing, new or preempted). The
    /// switching overhead ([`SWITCH_OVERHEAD_STEPS`]) is paid when the task has made progress
    /// (remaining work below its work: it has a checkpoint to resume from) and `next` differs
    /// from `previous`, a preempted task resuming included (TapFinger §V-A: "saving checkpoints,
    /// reallocating resources and resuming"); a task's first start pays nothing. Infinite when
    /// `next` is invalid.
    ///
    /// # Panics
    /// When `remaining_work` is not in (0, work].
    pub fn remaining_steps(
        &self,
        remaining_work: f64,
        previous: Option<Alloc>,
        next: Alloc,
    ) -> f64 {
        assert!(
            remaining_work > 0.0 && remaining_work <= self.work,
            "remaining work {remaining_work} outside (0, {}]",
            self.work
        );
        let v = self.speed(next.cpu, next.gpu);
        if v <= 0.0 {
            return f64::INFINITY;
        }
        let started = remaining_work < self.work;
        let overhead = if started && previous != Some(next) {
            SWITCH_OVERHEAD_STEPS
        } else {
            0.0
        };
        overhead + remaining_work / v
    }
}

#[cfg(test)]
#[path = "task_tests.rs"]
mod tests;
