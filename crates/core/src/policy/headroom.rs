//! `headroom`: the cluster whose feasible workers hold the most copies of the stream's demand,
//! then the least-e2e binding in it (docs/model.md §6). The cluster score is the prior Pr(n) of
//! TapFinger's conflict resolution (docs/model.md §15, eq. 11), used here as a push rule.

use super::{Policy, pick_min2};
use crate::feasibility::Candidate;
use crate::rng::SimRng;
use std::cell::RefCell;

thread_local! {
    /// (cluster, copies summed over its candidates) of the current choice: no allocation per
    /// binding once warm.
    static ROOM: RefCell<Vec<(u32, f64)>> = const { RefCell::new(Vec::new()) };
}

/// Calls `f` with the room of each candidate's cluster: the sum of [`Candidate::copies`] over the
/// candidates of that cluster, one entry per candidate, in order. Candidates of one cluster
/// need not be adjacent.
pub(crate) fn with_cluster_room<R>(
    c: &[Candidate],
    f: impl FnOnce(&dyn Fn(usize) -> f64) -> R,
) -> R {
    ROOM.with(|room| {
        let mut room = room.borrow_mut();
        room.clear();
        for x in c {
            // Candidates come in reach order, so a cluster's workers are usually adjacent: look
            // from the end.
            match room.iter_mut().rev().find(|(n, _)| *n == x.cluster) {
                Some(e) => e.1 += x.copies(),
                None => room.push((x.cluster, x.copies())),
            }
        }
        let of = |i: usize| -> f64 {
            room.iter()
                .rev()
                .find(|(n, _)| *n == c[i].cluster)
                .map_or(0.0, |e| e.1)
        };
        f(&of)
    })
}

/// Binds in the cluster with the most room for the stream, at its least-e2e worker.
pub struct Headroom;

impl Policy for Headroom {
    fn name(&self) -> &'static str {
        "headroom"
    }
    fn choose(&self, c: &[Candidate], _: &mut SimRng) -> usize {
        with_cluster_room(c, |room| pick_min2(c, |i| -room(i), |i| c[i].e2e_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::by_name;
    use crate::rng::{Purpose, stream_rng};

    /// A candidate of `cluster` with e2e `e2e`, load `load`, capacity `cap`, demand `d`.
    pub(crate) fn cand(
        worker: u32,
        cluster: u32,
        e2e: f64,
        load: f64,
        cap: f64,
        d: f64,
    ) -> Candidate {
        Candidate {
            worker,
            cluster,
            variant: worker,
            net_ms: e2e / 4.0,
            e2e_ms: e2e,
            load_qps: load,
            capacity_qps: cap,
            demand_qps: d,
            cluster_shares: [0.0; 2],
        }
    }

    fn pick(name: &str, c: &[Candidate]) -> usize {
        by_name(name)
            .expect("registered")
            .choose(c, &mut stream_rng(1, Purpose::Other, 0, 0))
    }

    #[test]
    fn copies_floor_the_free_capacity_over_the_demand_and_count_at_least_one() {
        assert_eq!(cand(0, 0, 10.0, 40.0, 100.0, 15.0).copies(), 4.0); // 60 / 15
        assert_eq!(cand(0, 0, 10.0, 40.0, 100.0, 25.0).copies(), 2.0); // 2.4
        assert_eq!(cand(0, 0, 10.0, 95.0, 100.0, 5.0).copies(), 1.0); // exactly 1
        assert_eq!(cand(0, 0, 10.0, 99.0, 100.0, 5.0).copies(), 1.0); // 0.2, at least 1
        assert_eq!(cand(0, 0, 10.0, 0.0, 100.0, 0.0).copies(), 1.0); // no demand
    }

    #[test]
    fn the_cluster_with_most_copies_wins_then_its_least_e2e_worker() {
        // Demand 10 qps everywhere.
        //   cluster 5 (near): workers 0 (free 30 → 3) and 1 (free 25 → 2): room 5
        //   cluster 7 (far):  worker 2 (free 60 → 6): room 6            ← the most room
        //   cluster 9:        workers 3 (free 20 → 2) and 4 (free 35 → 3): room 5
        let c = [
            cand(0, 5, 20.0, 70.0, 100.0, 10.0),
            cand(1, 5, 12.0, 75.0, 100.0, 10.0),
            cand(2, 7, 60.0, 40.0, 100.0, 10.0),
            cand(3, 9, 30.0, 80.0, 100.0, 10.0),
            cand(4, 9, 25.0, 65.0, 100.0, 10.0),
        ];
        assert_eq!(pick("headroom", &c), 2);
        // Without cluster 7, clusters 5 and 9 tie on room 5: the least e2e among them (worker 1,
        // 12 ms) decides, so cluster 5 and worker 1.
        let c2 = [c[0], c[1], c[3], c[4]];
        assert_eq!(pick("headroom", &c2), 1);
        // A cluster's room is the sum over its workers even when they are not adjacent:
        // worker 0 and 1 of cluster 5 around worker 2 of cluster 7 (3 + 2 = 5 < 6).
        let c3 = [c[0], c[2], c[1]];
        assert_eq!(pick("headroom", &c3), 1);
    }
}
