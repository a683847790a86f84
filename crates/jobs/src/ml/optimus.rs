//! Optimus (Peng et al., "Optimus: An Efficient Dynamic Resource Scheduler for Deep Learning
//! Clusters", EuroSys 2018) as TapFinger compares with it (TapFinger §V-A, "Baselines"): every
//! task starts at its minimum ("it allocates 1 parameter server and 1 worker for each task"),
//! then one unit at a time goes to "the allocation decision with the largest marginal gain ...
//! until all the resource is used up or the marginal gains of all the tasks become
//! non-positive", with CPU and GPU as the two resources. docs/jobs.md §10.
//!
//! - **Marginal gain** is Optimus's: the reduction of a task's estimated remaining completion
//!   time (remaining work / speed) that one more unit brings, per unit of resource, a unit
//!   counted as its share of the cluster's capacity of that resource (Optimus normalises a gain
//!   by the dominant resource of what it adds; one core is 1/C_cpu of the cores). On TapFinger's
//!   16-core, 16-GPU clusters the two shares are equal.
//! - **The speed curve** is the task's own [`MlTask::speed`]: TapFinger fits Optimus's speed
//!   function "directly from the environments" (§V-A); the fit of a noise-free model is taken to
//!   be the model (assumption).
//! - **Admission** (assumption: TapFinger does not say what Optimus does when the minimums do not
//!   all fit): tasks are admitted in the order given while their minimum fits in what is left;
//!   a task whose minimum does not fit gets nothing and waits.
//! - **Ties** go to the earlier task, then to CPU before GPU.

use super::task::{Alloc, MlTask};

/// A task offered to Optimus: the task and the work it has left.
#[derive(Debug, Clone, Copy)]
pub struct OptimusTask<'a> {
    /// The task (its allocation range and speed curve).
    pub task: &'a MlTask,
    /// Work left, in (0, the task's work].
    pub remaining_work: f64,
}

/// One unit more of a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Cpu,
    Gpu,
}

impl Unit {
    fn add(self, a: Alloc) -> Alloc {
        match self {
            Unit::Cpu => Alloc::new(a.cpu + 1, a.gpu),
            Unit::Gpu => Alloc::new(a.cpu, a.gpu + 1),
        }
    }

    fn available(self, left: Alloc) -> bool {
        match self {
            Unit::Cpu => left.cpu >= 1,
            Unit::Gpu => left.gpu >= 1,
        }
    }

    /// Units of this resource in the cluster: 1 / (one unit's share).
    fn per_share(self, capacity: Alloc) -> f64 {
        match self {
            Unit::Cpu => f64::from(capacity.cpu),
            Unit::Gpu => f64::from(capacity.gpu),
        }
    }
}

/// The marginal gain of one more `unit` for `t` at `at`: the remaining time saved, divided by
/// the unit's share of `capacity`. `None` when the step leaves the task's valid range.
fn gain(t: &OptimusTask<'_>, at: Alloc, unit: Unit, capacity: Alloc) -> Option<f64> {
    let next = unit.add(at);
    if !t.task.valid(next.cpu, next.gpu) {
        return None;
    }
    let before = t.remaining_work / t.task.speed(at.cpu, at.gpu);
    let after = t.remaining_work / t.task.speed(next.cpu, next.gpu);
    Some((before - after) * unit.per_share(capacity))
}

/// Optimus's allocation of `free` cores and GPUs to `tasks` (the waiting and running tasks it
/// re-allocates) on a cluster of `capacity`: one entry per task, in order, `None` for a task
/// whose minimum did not fit.
///
/// # Panics
/// When `capacity` has no core or no GPU, or a task's remaining work is not in (0, its work].
pub fn optimus(capacity: Alloc, free: Alloc, tasks: &[OptimusTask<'_>]) -> Vec<Option<Alloc>> {
    assert!(
        capacity.cpu >= 1 && capacity.gpu >= 1,
        "Optimus needs a cluster with cores and GPUs, got capacity {capacity:?}"
    );
    for t in tasks {
        assert!(
            t.remaining_work > 0.0 && t.remaining_work <= t.task.work(),
            "remaining work {} outside (0, {}]",
            t.remaining_work,
            t.task.work()
        );
    }
    let mut left = free;
    let mut alloc: Vec<Option<Alloc>> = tasks
        .iter()
        .map(|t| {
            let min = t.task.min();
            min.fits_in(left).then(|| {
                left = Alloc::new(left.cpu - min.cpu, left.gpu - min.gpu);
                min
            })
        })
        .collect();
    loop {
        let mut best: Option<(f64, usize, Unit)> = None;
        for (i, (t, a)) in tasks.iter().zip(&alloc).enumerate() {
            let Some(at) = *a else { continue };
            for unit in [Unit::Cpu, Unit::Gpu] {
                if !unit.available(left) {
                    continue;
                }
                if let Some(g) = gain(t, at, unit, capacity)
                    && g > 0.0
                    && best.is_none_or(|(b, _, _)| g > b)
                {
                    best = Some((g, i, unit));
                }
            }
        }
        let Some((_, i, unit)) = best else { break };
        if let Some(at) = alloc[i] {
            alloc[i] = Some(unit.add(at));
            left = match unit {
                Unit::Cpu => Alloc::new(left.cpu - 1, left.gpu),
                Unit::Gpu => Alloc::new(left.cpu, left.gpu - 1),
            };
        }
    }
    alloc
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ml::task::{MlTaskKind, SYNTHETIC_MAX, SYNTHETIC_MIN};

    const CLUSTER: Alloc = SYNTHETIC_MAX;

    fn offer(task: &MlTask, remaining_work: f64) -> OptimusTask<'_> {
        OptimusTask {
            task,
            remaining_work,
        }
    }

    #[test]
    fn insensitive_task_keeps_its_minimum_and_the_sensitive_one_takes_the_rest() {
        // Free (6, 3); both minimums (2, 1) leave (2, 1). The insensitive task gains nothing
        // from more (its time is 4 steps whatever it holds), the sensitive one gains from
        // every unit, so it takes all of them: (2+2, 1+1) = (4, 2).
        let (ins, sen) = (
            MlTask::synthetic(MlTaskKind::Insensitive),
            MlTask::synthetic(MlTaskKind::Sensitive),
        );
        let got = optimus(
            CLUSTER,
            Alloc::new(6, 3),
            &[offer(&ins, 1.0), offer(&sen, 1.0)],
        );
        assert_eq!(got, vec![Some(SYNTHETIC_MIN), Some(Alloc::new(4, 2))]);
    }

    #[test]
    fn the_unit_goes_to_the_task_with_more_work_left() {
        // Two sensitive tasks at (2, 1), one spare GPU. Both would go from 17 to 13.6395 steps
        // per unit of work (φ(2, 2) = 0.24491866² = 0.05998515, r = 0.07331625); the time saved
        // is remaining work × (17 − 13.6395), so the task with 0.9 left beats the one with 0.3,
        // whichever comes first.
        let (a, b) = (
            MlTask::synthetic(MlTaskKind::Sensitive),
            MlTask::synthetic(MlTaskKind::Sensitive),
        );
        let free = Alloc::new(4, 3);
        let got = optimus(CLUSTER, free, &[offer(&a, 0.3), offer(&b, 0.9)]);
        assert_eq!(got, vec![Some(SYNTHETIC_MIN), Some(Alloc::new(2, 2))]);
        let got = optimus(CLUSTER, free, &[offer(&b, 0.9), offer(&a, 0.3)]);
        assert_eq!(got, vec![Some(Alloc::new(2, 2)), Some(SYNTHETIC_MIN)]);
    }

    #[test]
    fn marginal_gains_by_hand() {
        // From (2, 1), 17 steps per unit of work. One GPU more: φ(2, 2) = 0.24491866² =
        // 0.05998515, 13.63954086 steps; one core more: φ(3, 1) = 0.35835740 × 0.12435300 =
        // 0.04456282, 15.20982596 steps. On 16 × 16 each unit is 1/16 of its resource, so the
        // gains are 16 × 3.36045914 = 53.77 (GPU) and 16 × 1.79017404 = 28.64 (core).
        let t = MlTask::synthetic(MlTaskKind::Sensitive);
        let o = offer(&t, 1.0);
        let g_gpu = gain(&o, SYNTHETIC_MIN, Unit::Gpu, CLUSTER).unwrap();
        let g_cpu = gain(&o, SYNTHETIC_MIN, Unit::Cpu, CLUSTER).unwrap();
        assert!(
            (g_gpu - 16.0 * (17.0 - 13.639_540_86)).abs() < 1e-6,
            "{g_gpu}"
        );
        assert!(
            (g_cpu - 16.0 * (17.0 - 15.209_825_96)).abs() < 1e-6,
            "{g_cpu}"
        );
        // Half the work left, half the time saved.
        let half = gain(&offer(&t, 0.5), SYNTHETIC_MIN, Unit::Gpu, CLUSTER).unwrap();
        assert!((half - g_gpu / 2.0).abs() < 1e-9);
        // Past the task's maximum there is no step to take; the insensitive task saves nothing.
        assert!(gain(&o, SYNTHETIC_MAX, Unit::Cpu, CLUSTER).is_none());
        let ins = MlTask::synthetic(MlTaskKind::Insensitive);
        assert_eq!(
            gain(&offer(&ins, 1.0), SYNTHETIC_MIN, Unit::Gpu, CLUSTER),
            Some(0.0)
        );
    }

    #[test]
    fn a_task_whose_minimum_does_not_fit_waits() {
        let t = MlTask::synthetic(MlTaskKind::Sensitive);
        let got = optimus(CLUSTER, Alloc::new(3, 1), &[offer(&t, 1.0), offer(&t, 1.0)]);
        assert_eq!(got, vec![Some(Alloc::new(3, 1)), None]);
    }

    #[test]
    fn growth_stops_at_the_task_maximum() {
        let t = MlTask::synthetic(MlTaskKind::Sensitive);
        let got = optimus(Alloc::new(32, 32), Alloc::new(32, 32), &[offer(&t, 1.0)]);
        assert_eq!(got, vec![Some(SYNTHETIC_MAX)]);
    }

    #[test]
    fn a_scarcer_resource_needs_a_larger_saving() {
        // 32 cores and 8 GPUs: a GPU is 1/8 of the GPUs, a core 1/32 of the cores, so from
        // (2, 1) the GPU's gain is 8 × 3.36045914 = 26.88 and the core's 32 × 1.79017404 =
        // 57.29: the core now comes first. Two tasks, A with all its work left and B with half,
        // free (5, 3): the minimums leave (1, 1). The best step is A's core (57.29, against
        // B's 28.64); then only a GPU is left, worth more to A at (3, 1) than to B at (2, 1)
        // (φ(3, 2) = 0.35835740 × 0.24491866 = 0.08776841, 11.50056192 steps: 8 × 1.0 ×
        // (15.20982596 − 11.50056192) = 29.67 against 8 × 0.5 × 3.36045914 = 13.44).
        let t = MlTask::synthetic(MlTaskKind::Sensitive);
        let cap = Alloc::new(32, 8);
        let o = offer(&t, 1.0);
        let g_gpu = gain(&o, SYNTHETIC_MIN, Unit::Gpu, cap).unwrap();
        let g_cpu = gain(&o, SYNTHETIC_MIN, Unit::Cpu, cap).unwrap();
        assert!(
            (g_gpu - 8.0 * (17.0 - 13.639_540_86)).abs() < 1e-6,
            "{g_gpu}"
        );
        assert!(
            (g_cpu - 32.0 * (17.0 - 15.209_825_96)).abs() < 1e-6,
            "{g_cpu}"
        );
        let got = optimus(cap, Alloc::new(5, 3), &[offer(&t, 1.0), offer(&t, 0.5)]);
        assert_eq!(got, vec![Some(Alloc::new(3, 2)), Some(SYNTHETIC_MIN)]);
    }
}
