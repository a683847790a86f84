//! A worker's admission (docs/model.md §7.3): which queue bound it keeps, and when a query
//! arriving at it would start its batch, shared by the simulator's queue bound and the live
//! worker's admission so both follow one rule.
//!
//! A worker is R replicas serving one FIFO queue in batches of up to B. A query that finds `n`
//! queries waiting has `k = ⌊n / B⌋` full batches ahead of it. Each replica takes the next
//! waiting batch as soon as it frees, so replica `i` starts batches at `free_i`, `free_i + b`,
//! `free_i + 2b`, … (b: the time of one batch); the waiting batches take those slots in time
//! order, and the query's own batch is the `k`-th (from 0). The estimate follows the replica
//! that will actually take that batch — not the earliest free one.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// When a query reaching a worker is dropped (counted as rejected) instead of queued
/// (docs/model.md §7.3). Written `deadline`, `unbounded` or a number of queries, on the command
/// line (`--queue-bound`) and in a training configuration (`queue_bound`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "BoundRepr", into = "BoundRepr")]
pub enum QueueBound {
    /// Drop it when the work already queued cannot finish in time for its deadline (default).
    #[default]
    Deadline,
    /// Drop it when this many queries are already waiting.
    MaxQueries(u32),
    /// Never drop: every admitted query is served, and a late answer is a failure.
    Unbounded,
}

impl FromStr for QueueBound {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "deadline" => Ok(Self::Deadline),
            "unbounded" => Ok(Self::Unbounded),
            n => n.parse::<u32>().map(Self::MaxQueries).map_err(|_| {
                format!("expected `deadline`, `unbounded` or a number of queries, got `{s}`")
            }),
        }
    }
}

impl fmt::Display for QueueBound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Deadline => f.write_str("deadline"),
            Self::Unbounded => f.write_str("unbounded"),
            Self::MaxQueries(n) => write!(f, "{n}"),
        }
    }
}

/// How a [`QueueBound`] is written in a file: a name or a number.
#[derive(Serialize, Deserialize)]
#[serde(
    untagged,
    expecting = "expected a number of queries or a queue bound's name"
)]
enum BoundRepr {
    Queries(u32),
    Named(String),
}

impl TryFrom<BoundRepr> for QueueBound {
    type Error = String;

    fn try_from(r: BoundRepr) -> Result<Self, String> {
        match r {
            BoundRepr::Queries(n) => Ok(Self::MaxQueries(n)),
            BoundRepr::Named(s) => s.parse(),
        }
    }
}

impl From<QueueBound> for BoundRepr {
    fn from(b: QueueBound) -> Self {
        match b {
            QueueBound::MaxQueries(n) => Self::Queries(n),
            other => Self::Named(other.to_string()),
        }
    }
}

/// Start time of the `k`-th waiting batch (from 0, FIFO order) on a worker whose replicas
/// become free at `free` (one entry per replica; an idle replica is free now), when every batch
/// takes `batch_ms`. `free` is used as scratch (sorted). `free` must not be empty.
pub fn batch_start(free: &mut [f64], k: usize, batch_ms: f64) -> f64 {
    assert!(!free.is_empty(), "a worker has at least one replica");
    free.sort_unstable_by(f64::total_cmp);
    match slot_without_rounds(free, k, batch_ms) {
        Some(at) => at,
        None => by_rounds(free, k, batch_ms),
    }
}

/// [`batch_start`] for free times already sorted in ascending order, which it leaves as they
/// are: `scratch` holds a copy in the rare case that needs one. A simulator keeps its
/// replicas' free times sorted and so never sorts per query.
pub fn batch_start_sorted(free: &[f64], k: usize, batch_ms: f64, scratch: &mut Vec<f64>) -> f64 {
    assert!(!free.is_empty(), "a worker has at least one replica");
    debug_assert!(free.is_sorted_by(|a, b| a.total_cmp(b).is_le()));
    match slot_without_rounds(free, k, batch_ms) {
        Some(at) => at,
        None => {
            scratch.clear();
            scratch.extend_from_slice(free);
            by_rounds(scratch, k, batch_ms)
        }
    }
}

/// The answer when it needs no replaying of rounds (`free` sorted ascending): batches that
/// take no time keep every replica at its slot; and when every replica frees within one batch
/// time of the earliest, the slots repeat with period b in this order — slot k is replica
/// k mod R in round k / R.
#[inline]
fn slot_without_rounds(free: &[f64], k: usize, batch_ms: f64) -> Option<f64> {
    let r = free.len();
    if batch_ms.is_nan() || batch_ms <= 0.0 {
        return Some(free[k.min(r - 1)]);
    }
    (free[r - 1] - free[0] < batch_ms).then(|| free[k % r] + (k / r) as f64 * batch_ms)
}

/// Hands batches to the earliest free replica until the free times are within one batch time
/// of each other (`free` sorted ascending, `batch_ms` > 0; reordered).
fn by_rounds(free: &mut [f64], mut k: usize, batch_ms: f64) -> f64 {
    let r = free.len();
    loop {
        if free[r - 1] - free[0] < batch_ms {
            return free[k % r] + (k / r) as f64 * batch_ms;
        }
        if k == 0 {
            return free[0];
        }
        // The earliest replica takes one batch and frees again b later; keep `free` sorted.
        k -= 1;
        let next = free[0] + batch_ms;
        let at = free.partition_point(|x| *x <= next);
        free[..at].rotate_left(1);
        free[at - 1] = next;
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn queue_bounds_read_and_write_both_ways() {
        for (text, b) in [
            ("deadline", QueueBound::Deadline),
            ("unbounded", QueueBound::Unbounded),
            ("12", QueueBound::MaxQueries(12)),
        ] {
            assert_eq!(text.parse::<QueueBound>(), Ok(b));
            assert_eq!(b.to_string(), text);
            let json = serde_json::to_string(&b).unwrap();
            assert_eq!(serde_json::from_str::<QueueBound>(&json).unwrap(), b);
        }
        assert!("late".parse::<QueueBound>().unwrap_err().contains("`late`"));
        assert!(serde_json::from_str::<QueueBound>("\"late\"").is_err());
    }

    use super::*;

    /// The same answer by brute force: hand every batch to the replica that frees first.
    fn by_simulation(free: &[f64], k: usize, b: f64) -> f64 {
        let mut f = free.to_vec();
        for _ in 0..k {
            let i = (0..f.len()).fold(0, |m, i| if f[i] < f[m] { i } else { m });
            f[i] += b;
        }
        f.iter().copied().fold(f64::INFINITY, f64::min)
    }

    #[test]
    fn two_replicas_follow_the_one_that_takes_the_batch() {
        // Replicas free at 12 and 20, batches of 10 ms. Batch 0 goes to replica 0 at 12; batch
        // 1 to replica 1 at 20 (replica 0 is busy until 22); batch 2 to replica 0 at 22.
        let mut f = [20.0, 12.0];
        assert_eq!(batch_start(&mut f, 0, 10.0), 12.0);
        assert_eq!(batch_start(&mut [20.0, 12.0], 1, 10.0), 20.0);
        assert_eq!(batch_start(&mut [20.0, 12.0], 2, 10.0), 22.0);
        assert_eq!(batch_start(&mut [20.0, 12.0], 3, 10.0), 30.0);
        // A replica free long after the other: the early one takes several batches first.
        assert_eq!(batch_start(&mut [0.0, 35.0], 3, 10.0), 30.0);
        assert_eq!(batch_start(&mut [0.0, 35.0], 4, 10.0), 35.0);
    }

    #[test]
    fn matches_brute_force_on_many_cases() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(9);
        for _ in 0..2000 {
            let r = rng.random_range(1..6);
            let free: Vec<f64> = (0..r)
                .map(|_| f64::from(rng.random_range(0..60u32)))
                .collect();
            let b = f64::from(rng.random_range(1..25u32));
            let k = rng.random_range(0..20);
            let mut scratch = free.clone();
            assert_eq!(
                batch_start(&mut scratch, k, b),
                by_simulation(&free, k, b),
                "free {free:?} k {k} b {b}"
            );
        }
    }

    #[test]
    fn sorted_variant_agrees_and_leaves_its_input() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(11);
        let mut scratch = Vec::new();
        for _ in 0..2000 {
            let r = rng.random_range(1..6);
            let mut free: Vec<f64> = (0..r).map(|_| rng.random::<f64>() * 60.0).collect();
            free.sort_unstable_by(f64::total_cmp);
            let b = [0.0, rng.random::<f64>() * 25.0][rng.random_range(0..2)];
            let k = rng.random_range(0..20);
            let before = free.clone();
            let want = batch_start(&mut free.clone(), k, b);
            assert_eq!(batch_start_sorted(&free, k, b, &mut scratch), want);
            assert_eq!(free, before);
        }
    }

    #[test]
    fn zero_time_batches_use_the_kth_replica() {
        assert_eq!(batch_start(&mut [5.0, 1.0, 3.0], 1, 0.0), 3.0);
        assert_eq!(batch_start(&mut [5.0, 1.0, 3.0], 9, 0.0), 5.0);
    }
}
