//! A map over a slice split across the machine's cores in contiguous runs, results in input
//! order. Each item's result must depend on the item alone (and the shared inputs the closure
//! borrows), so the output does not depend on the number of cores. Scoped threads, started per
//! call: only worth it where a call's work is milliseconds (a large round of pull agents), so a
//! call with fewer than `per_thread` items per core stays on the calling thread.

/// `f` over `items` in order, each run of items with its own scratch from `init`.
pub(crate) fn map<T: Sync, S, R: Send>(
    items: &[T],
    per_thread: usize,
    init: impl Fn() -> S + Sync,
    f: impl Fn(&T, &mut S) -> R + Sync,
) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(items.len() / per_thread.max(1))
        .max(1);
    map_on(items, threads, init, f)
}

/// [`map`] on exactly `threads` runs (at least 1).
fn map_on<T: Sync, S, R: Send>(
    items: &[T],
    threads: usize,
    init: impl Fn() -> S + Sync,
    f: impl Fn(&T, &mut S) -> R + Sync,
) -> Vec<R> {
    if threads <= 1 || items.len() < 2 {
        let mut s = init();
        return items.iter().map(|x| f(x, &mut s)).collect();
    }
    let run = items.len().div_ceil(threads);
    let (init, f) = (&init, &f);
    std::thread::scope(|scope| {
        let parts: Vec<_> = items
            .chunks(run)
            .map(|part| {
                scope.spawn(move || {
                    let mut s = init();
                    part.iter().map(|x| f(x, &mut s)).collect::<Vec<_>>()
                })
            })
            .collect();
        parts
            .into_iter()
            .flat_map(|h| match h.join() {
                Ok(v) => v,
                Err(e) => std::panic::resume_unwind(e),
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same results in the same order on 1, 2, 3 and 7 threads, with each run's scratch
    /// its own.
    #[test]
    fn the_result_does_not_depend_on_the_threads() {
        let items: Vec<u64> = (0..101).collect();
        let f = |x: &u64, seen: &mut u64| {
            *seen += 1;
            x * x + 1
        };
        let one = map_on(&items, 1, || 0, f);
        assert_eq!(one, items.iter().map(|x| x * x + 1).collect::<Vec<_>>());
        for t in [2, 3, 7] {
            assert_eq!(map_on(&items, t, || 0, f), one, "{t} threads");
        }
        assert_eq!(map(&items, 1000, || 0, f), one);
        assert!(map_on(&[] as &[u64], 3, || 0, f).is_empty());
    }
}
