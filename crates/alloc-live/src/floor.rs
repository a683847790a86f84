//! The allocator's floor: however little demand a slot saw, each worker keeps a few variants
//! of each task it serves loaded, so the slice still answers the next stream.

/// Raises `want` (one flag per served variant, listed as `(worker, task, loaded)` in
/// `served`) so that each (worker, task) group has at least `floor` variants wanted, or all
/// it has. A group short of its floor keeps first the variants already loaded (no reload),
/// then the first ones listed.
pub(crate) fn keep<T: PartialEq + Copy>(
    served: &[(usize, T, bool)],
    want: &mut [bool],
    floor: usize,
) {
    let mut groups: Vec<(usize, T)> = Vec::new();
    for &(w, t, _) in served {
        if !groups.contains(&(w, t)) {
            groups.push((w, t));
        }
    }
    for g in groups {
        let members: Vec<usize> = (0..served.len())
            .filter(|&i| (served[i].0, served[i].1) == g)
            .collect();
        let mut count = members.iter().filter(|&&i| want[i]).count();
        let loaded_first = members
            .iter()
            .filter(|&&i| served[i].2)
            .chain(members.iter().filter(|&&i| !served[i].2));
        for &i in loaded_first {
            if count >= floor {
                break;
            }
            if !want[i] {
                want[i] = true;
                count += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::keep;

    #[test]
    fn each_worker_keeps_a_loaded_variant_of_each_task() {
        // Worker 0 serves task 0 twice (the second loaded) and task 1 once; worker 1 serves
        // task 0 once, unloaded. Nothing is wanted.
        let served = [(0, 0, false), (0, 0, true), (0, 1, false), (1, 0, false)];
        let mut want = [false; 4];
        keep(&served, &mut want, 1);
        assert_eq!(
            want,
            [false, true, true, true],
            "loaded first, then the first listed"
        );
    }

    #[test]
    fn wanted_variants_count_towards_the_floor_and_zero_keeps_nothing() {
        let served = [(0, 0, true), (0, 0, false), (0, 0, false)];
        let mut want = [false, false, true];
        keep(&served, &mut want, 1);
        assert_eq!(want, [false, false, true], "already at the floor");
        keep(&served, &mut want, 2);
        assert_eq!(want, [true, false, true]);
        keep(&served, &mut want, 9);
        assert_eq!(want, [true, true, true], "all it has");
        let mut none = [false; 3];
        keep(&served, &mut none, 0);
        assert_eq!(none, [false; 3]);
    }
}
