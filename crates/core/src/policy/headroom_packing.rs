//! `headroom-packing`: the bin-packing twin of `headroom` — the feasible cluster with the least
//! room for the stream (fewest copies of its demand, at least one), then the least-e2e binding
//! in it (docs/model.md §6).

use super::headroom::with_cluster_room;
use super::{Policy, pick_min2};
use crate::feasibility::Candidate;
use crate::rng::SimRng;

/// Binds in the fullest cluster that still fits the stream, at its least-e2e worker.
pub(super) struct HeadroomPacking;

impl Policy for HeadroomPacking {
    fn name(&self) -> &'static str {
        "headroom-packing"
    }
    fn choose(&self, c: &[Candidate], _: &mut SimRng) -> usize {
        with_cluster_room(c, |room| pick_min2(c, room, |i| c[i].e2e_ms))
    }
}

#[cfg(test)]
mod tests {
    use crate::feasibility::Candidate;
    use crate::policy::by_name;
    use crate::rng::{Purpose, stream_rng};

    fn cand(worker: u32, cluster: u32, e2e: f64, load: f64, cap: f64) -> Candidate {
        Candidate {
            worker,
            cluster,
            variant: 0,
            net_ms: 1.0,
            e2e_ms: e2e,
            load_qps: load,
            capacity_qps: cap,
            demand_qps: 10.0,
            cluster_shares: [0.0; 2],
        }
    }

    #[test]
    fn the_cluster_with_least_room_wins_then_its_least_e2e_worker() {
        // Demand 10: cluster 0 holds 3 + 1 = 4 copies, cluster 1 holds 2 + 1 = 3 (the least),
        // cluster 2 holds 8.
        let c = [
            cand(0, 0, 10.0, 70.0, 100.0),
            cand(1, 0, 11.0, 90.0, 100.0),
            cand(2, 1, 30.0, 80.0, 100.0),
            cand(3, 1, 25.0, 95.0, 100.0),
            cand(4, 2, 5.0, 20.0, 100.0),
        ];
        let p = by_name("headroom-packing").expect("registered");
        assert_eq!(p.choose(&c, &mut stream_rng(1, Purpose::Other, 0, 0)), 3);
        assert_eq!(
            by_name("headroom")
                .unwrap()
                .choose(&c, &mut stream_rng(1, Purpose::Other, 0, 0)),
            4
        );
    }
}
