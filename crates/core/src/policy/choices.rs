//! `two-choices` and `choices:<d>`: the power of d choices (Mitzenmacher, "The Power of Two
//! Choices in Randomized Load Balancing", IEEE TPDS 12(10), 2001) — d uniform draws, with
//! replacement, among the feasible candidates, then the drawn one with the lowest seen load
//! share L / C (docs/model.md §6).

use super::{Policy, rank::tie_break};
use crate::feasibility::Candidate;
use crate::rng::SimRng;
use rand::Rng;
use std::cmp::Ordering;

/// The largest d that `choices:<d>` accepts.
pub const MAX_D: usize = 16;

/// The power of `d` choices.
pub struct Choices {
    d: usize,
    name: &'static str,
}

/// `choices:1` … `choices:16`; d = 2 is named `two-choices` (the registered rule).
pub static FAMILY: [Choices; MAX_D] = {
    const NAMES: [&str; MAX_D] = [
        "choices:1",
        "two-choices",
        "choices:3",
        "choices:4",
        "choices:5",
        "choices:6",
        "choices:7",
        "choices:8",
        "choices:9",
        "choices:10",
        "choices:11",
        "choices:12",
        "choices:13",
        "choices:14",
        "choices:15",
        "choices:16",
    ];
    let mut out = [const { Choices { d: 0, name: "" } }; MAX_D];
    let mut i = 0;
    while i < MAX_D {
        out[i] = Choices {
            d: i + 1,
            name: NAMES[i],
        };
        i += 1;
    }
    out
};

/// The member of [`FAMILY`] named `name` (`two-choices` or `choices:<d>`, 1 ≤ d ≤ 16).
pub fn by_name(name: &str) -> Option<&'static Choices> {
    if name == "two-choices" {
        return Some(&FAMILY[1]);
    }
    let d: usize = name.strip_prefix("choices:")?.parse().ok()?;
    // `choices:2` is spelled `two-choices`: one name per rule.
    ((1..=MAX_D).contains(&d) && d != 2).then(|| &FAMILY[d - 1])
}

/// Seen load share; a worker with no capacity counts as full.
fn share(c: &Candidate) -> f64 {
    if c.capacity_qps > 0.0 {
        c.load_qps / c.capacity_qps
    } else {
        f64::INFINITY
    }
}

impl Policy for Choices {
    fn name(&self) -> &'static str {
        self.name
    }
    fn choose(&self, c: &[Candidate], rng: &mut SimRng) -> usize {
        let mut best = rng.random_range(0..c.len());
        for _ in 1..self.d {
            let i = rng.random_range(0..c.len());
            if share(&c[i])
                .total_cmp(&share(&c[best]))
                .then_with(|| tie_break(&c[i], &c[best]))
                == Ordering::Less
            {
                best = i;
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Purpose, stream_rng};

    fn cand(worker: u32, load: f64, cap: f64) -> Candidate {
        Candidate {
            worker,
            cluster: worker,
            variant: 0,
            net_ms: 1.0,
            e2e_ms: 10.0,
            load_qps: load,
            capacity_qps: cap,
            demand_qps: 1.0,
            cluster_shares: [0.0; 2],
        }
    }

    #[test]
    fn names_and_the_family() {
        assert_eq!(by_name("two-choices").unwrap().d, 2);
        assert_eq!(by_name("choices:5").unwrap().name(), "choices:5");
        assert!(by_name("choices:2").is_none());
        assert!(by_name("choices:0").is_none());
        assert!(by_name("choices:17").is_none());
        assert!(by_name("choices:x").is_none());
    }

    #[test]
    fn two_draws_pick_the_lower_share_with_the_known_frequencies() {
        // Shares 0.1 < 0.5 < 0.9. With two uniform draws from three (9 equal pairs), the
        // lowest share of the pair wins: worker 0 unless neither draw is 0 (5/9), worker 1 when
        // the draws are {1, 1}, {1, 2} or {2, 1} (3/9), worker 2 only for {2, 2} (1/9).
        let c = [
            cand(0, 10.0, 100.0),
            cand(1, 50.0, 100.0),
            cand(2, 90.0, 100.0),
        ];
        let p = by_name("two-choices").unwrap();
        let mut rng = stream_rng(9, Purpose::Other, 0, 0);
        let n = 180_000;
        let mut k = [0usize; 3];
        for _ in 0..n {
            k[p.choose(&c, &mut rng)] += 1;
        }
        let want = [5.0 / 9.0, 3.0 / 9.0, 1.0 / 9.0];
        for (got, w) in k.iter().zip(want) {
            assert!((*got as f64 / n as f64 - w).abs() < 0.01, "{k:?}");
        }
        // d = 1 is uniform; a large d almost always finds the least loaded.
        let mut one = [0usize; 3];
        let mut many = [0usize; 3];
        let (p1, p16) = (
            by_name("choices:1").unwrap(),
            by_name("choices:16").unwrap(),
        );
        for _ in 0..30_000 {
            one[p1.choose(&c, &mut rng)] += 1;
            many[p16.choose(&c, &mut rng)] += 1;
        }
        assert!(
            one.iter()
                .all(|x| (*x as f64 / 30_000.0 - 1.0 / 3.0).abs() < 0.02),
            "{one:?}"
        );
        assert!(many[0] as f64 / 30_000.0 > 0.99, "{many:?}");
    }
}
