//! `most-allocated`: Kubernetes' MostAllocated node score (EdgeTuner's MostRequestedPriority,
//! MRP) with a worker as the node — bin packing: the smallest free share left once the stream
//! is placed, (C − L − demand) / C, among the workers it still fits (every feasible one;
//! docs/model.md §6).

use super::least_allocated::free_share_after;
use super::{Policy, pick_min};
use crate::feasibility::Candidate;
use crate::rng::SimRng;

/// Packs: binds to the worker left with the smallest free share.
pub(super) struct MostAllocated;

impl Policy for MostAllocated {
    fn name(&self) -> &'static str {
        "most-allocated"
    }
    fn choose(&self, c: &[Candidate], _: &mut SimRng) -> usize {
        pick_min(c, free_share_after)
    }
}

#[cfg(test)]
mod tests {
    use crate::feasibility::Candidate;
    use crate::policy::by_name;
    use crate::rng::{Purpose, stream_rng};

    fn cand(worker: u32, load: f64, cap: f64, demand: f64) -> Candidate {
        Candidate {
            worker,
            cluster: worker,
            variant: 0,
            net_ms: 1.0,
            e2e_ms: 10.0,
            load_qps: load,
            capacity_qps: cap,
            demand_qps: demand,
            cluster_shares: [0.0; 2],
        }
    }

    #[test]
    fn least_and_most_allocated_score_the_free_share_after_the_stream() {
        // Free shares after the stream: 0: (100 − 50 − 10)/100 = 0.40; 1: (400 − 100 − 20)/400
        // = 0.70; 2: (50 − 30 − 10)/50 = 0.20. Most free: 1; least free (packing): 2.
        // Before the stream, 2 (0.4 free) and 0 (0.5) would tie-break differently from after:
        // 3: (60 − 20 − 30)/60 ≈ 0.167 is the fullest only once its demand (30) counts.
        let c = [
            cand(0, 50.0, 100.0, 10.0),
            cand(1, 100.0, 400.0, 20.0),
            cand(2, 30.0, 50.0, 10.0),
            cand(3, 20.0, 60.0, 30.0),
        ];
        let pick = |n: &str, c: &[Candidate]| {
            by_name(n)
                .unwrap()
                .choose(c, &mut stream_rng(1, Purpose::Other, 0, 0))
        };
        assert_eq!(pick("least-allocated", &c), 1);
        assert_eq!(pick("most-allocated", &c), 3);
        assert_eq!(pick("most-allocated", &c[..3]), 2);
    }
}
