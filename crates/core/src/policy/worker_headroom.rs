//! `worker-headroom`: the feasible worker whose free capacity holds the stream's demand the
//! most times over, the greatest (C − L) / demand (docs/model.md §6).

use super::{Policy, pick_max};
use crate::feasibility::Candidate;
use crate::rng::SimRng;

/// Free capacity in units of the stream's demand on this worker; a stream that brings no load
/// fits infinitely often.
fn room(c: &Candidate) -> f64 {
    let free = (c.capacity_qps - c.load_qps).max(0.0);
    if c.demand_qps > 0.0 {
        free / c.demand_qps
    } else {
        f64::INFINITY
    }
}

/// Binds to the worker with the most room for the stream.
pub(super) struct WorkerHeadroom;

impl Policy for WorkerHeadroom {
    fn name(&self) -> &'static str {
        "worker-headroom"
    }
    fn choose(&self, c: &[Candidate], _: &mut SimRng) -> usize {
        pick_max(c, room)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn the_most_copies_of_the_demand_wins_not_the_most_free_share() {
        // Rooms: 0: (100 − 20)/10 = 8; 1: (400 − 200)/20 = 10 ← best, though only half free
        // (worker 0 is 80 % free); 2: (50 − 0)/10 = 5.
        let c = [
            cand(0, 20.0, 100.0, 10.0),
            cand(1, 200.0, 400.0, 20.0),
            cand(2, 0.0, 50.0, 10.0),
        ];
        assert_eq!(
            WorkerHeadroom.choose(
                &c,
                &mut crate::rng::stream_rng(1, crate::rng::Purpose::Other, 0, 0)
            ),
            1
        );
        assert_eq!(room(&c[1]), 10.0);
        assert_eq!(room(&cand(3, 0.0, 50.0, 0.0)), f64::INFINITY);
    }
}
