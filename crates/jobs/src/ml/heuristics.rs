//! TapFinger's two heuristic baselines (TapFinger §V-A, "Random/Minimum (Min) allocation"): a
//! task chosen at random from the pending set gets "a random/minimum but valid amount of
//! resource". The allocation of the chosen task is here; choosing the task is the simulator's
//! (docs/jobs.md §10).

use super::task::{Alloc, MlTask};
use continuum_core::rng::SimRng;
use rand::Rng;

/// The task's minimum allocation when it fits in `free`, else `None` (the task waits).
pub fn min_allocation(task: &MlTask, free: Alloc) -> Option<Alloc> {
    let min = task.min();
    min.fits_in(free).then_some(min)
}

/// An allocation drawn uniformly from the task's valid allocations that fit in `free` (cores
/// and GPUs each uniform from the minimum to the smaller of the task's maximum and the free
/// amount: the valid set is that rectangle); `None` when the minimum does not fit.
pub fn random_allocation(task: &MlTask, free: Alloc, rng: &mut SimRng) -> Option<Alloc> {
    let (min, max) = (task.min(), task.max());
    if !min.fits_in(free) {
        return None;
    }
    let cpu = rng.random_range(min.cpu..=max.cpu.min(free.cpu));
    let gpu = rng.random_range(min.gpu..=max.gpu.min(free.gpu));
    Some(Alloc::new(cpu, gpu))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ml::task::{MlTaskKind, SYNTHETIC_MAX, SYNTHETIC_MIN};
    use continuum_core::rng::{Purpose, stream_rng};
    use std::collections::BTreeMap;

    #[test]
    fn min_is_the_minimum_or_nothing() {
        let t = MlTask::synthetic(MlTaskKind::Sensitive);
        assert_eq!(min_allocation(&t, SYNTHETIC_MAX), Some(SYNTHETIC_MIN));
        assert_eq!(min_allocation(&t, Alloc::new(2, 1)), Some(SYNTHETIC_MIN));
        assert_eq!(min_allocation(&t, Alloc::new(1, 16)), None);
        assert_eq!(min_allocation(&t, Alloc::new(16, 0)), None);
    }

    #[test]
    fn random_draws_every_valid_fitting_allocation_and_nothing_else() {
        // Free (4, 2): cores 2..=4, GPUs 1..=2, six allocations, each about 1/6 of 6,000 draws.
        let t = MlTask::synthetic(MlTaskKind::Sensitive);
        let free = Alloc::new(4, 2);
        let mut rng = stream_rng(1, Purpose::Other, 0x4d4c, 0);
        let mut seen: BTreeMap<(u32, u32), u32> = BTreeMap::new();
        for _ in 0..6000 {
            let a = random_allocation(&t, free, &mut rng).expect("the minimum fits");
            assert!(t.valid(a.cpu, a.gpu) && a.fits_in(free), "{a:?}");
            *seen.entry((a.cpu, a.gpu)).or_insert(0) += 1;
        }
        assert_eq!(seen.len(), 6, "{seen:?}");
        assert!(seen.values().all(|&n| (850..1150).contains(&n)), "{seen:?}");
    }

    #[test]
    fn random_is_capped_by_the_task_maximum_and_seeded() {
        let t = MlTask::synthetic(MlTaskKind::Insensitive);
        let big = Alloc::new(64, 64);
        let draw = |seed| {
            let mut rng = stream_rng(seed, Purpose::Other, 0x4d4c, 1);
            (0..200)
                .map(|_| random_allocation(&t, big, &mut rng).expect("fits"))
                .collect::<Vec<_>>()
        };
        let a = draw(7);
        assert!(
            a.iter()
                .all(|x| x.fits_in(SYNTHETIC_MAX) && t.valid(x.cpu, x.gpu))
        );
        assert_eq!(a, draw(7));
        assert_ne!(a, draw(8));
        let mut rng = stream_rng(7, Purpose::Other, 0x4d4c, 2);
        assert_eq!(random_allocation(&t, Alloc::new(1, 8), &mut rng), None);
    }
}
