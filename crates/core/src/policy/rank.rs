//! Shared ranking helpers: arg-min / arg-max with the deterministic tie-break of docs/model.md §6
//! (lower load, then lower cluster index, then lower variant index), and weighted draws.

use crate::feasibility::Candidate;
use crate::rng::SimRng;
use rand::Rng;
use std::cmp::Ordering;

pub(crate) fn tie_break(a: &Candidate, b: &Candidate) -> Ordering {
    a.load_qps
        .total_cmp(&b.load_qps)
        .then(a.cluster.cmp(&b.cluster))
        .then(a.variant.cmp(&b.variant))
}

/// Index of the candidate with the least `key`, ties broken deterministically.
pub fn pick_min(c: &[Candidate], key: impl Fn(&Candidate) -> f64) -> usize {
    let mut best = 0;
    for i in 1..c.len() {
        if key(&c[i])
            .total_cmp(&key(&c[best]))
            .then_with(|| tie_break(&c[i], &c[best]))
            == Ordering::Less
        {
            best = i;
        }
    }
    best
}

/// Index of the candidate with the greatest `key`, ties broken deterministically (the same
/// tie-break as [`pick_min`]: lower load, cluster, variant).
pub fn pick_max(c: &[Candidate], key: impl Fn(&Candidate) -> f64) -> usize {
    pick_min(c, |x| -key(x))
}

/// Index drawn at random with probability proportional to `weight` (finite, ≥ 0). If every
/// weight is zero, the draw is uniform.
pub fn pick_weighted(
    c: &[Candidate],
    rng: &mut SimRng,
    weight: impl Fn(&Candidate) -> f64,
) -> usize {
    let total: f64 = c.iter().map(&weight).sum();
    if !(total > 0.0 && total.is_finite()) {
        return rng.random_range(0..c.len());
    }
    let mut u = rng.random::<f64>() * total;
    for (i, x) in c.iter().enumerate() {
        u -= weight(x);
        if u < 0.0 {
            return i;
        }
    }
    // Rounding can leave u at a hair above 0: the last positive-weight candidate.
    c.iter()
        .rposition(|x| weight(x) > 0.0)
        .unwrap_or(c.len() - 1)
}

/// Index of the candidate with the least `first(i)`, then the least `second(i)` (both by
/// index into `c`), ties broken deterministically as in [`pick_min`].
pub fn pick_min2(
    c: &[Candidate],
    first: impl Fn(usize) -> f64,
    second: impl Fn(usize) -> f64,
) -> usize {
    let mut best = 0;
    for i in 1..c.len() {
        if first(i)
            .total_cmp(&first(best))
            .then_with(|| second(i).total_cmp(&second(best)))
            .then_with(|| tie_break(&c[i], &c[best]))
            == Ordering::Less
        {
            best = i;
        }
    }
    best
}
