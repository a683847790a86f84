//! `tetris`: Tetris-style packing (Grandl et al., SIGCOMM 2014; a baseline of DeepRM, Mao et
//! al., HotNets 2016) — the binding whose free resources best align with the stream's demand
//! (docs/model.md §6).

use super::{Policy, pick_max};
use crate::feasibility::Candidate;
use crate::rng::SimRng;

/// Binds to the candidate of greatest alignment score: the dot product of the stream's demand
/// vector and the worker's free-resource vector, both normalised by the worker's capacity.
///
/// The resource vector has one dimension, the worker's throughput in normalised qps: it is the
/// only resource a binding consumes in the model. Demand is the load the stream would bring,
/// η_v^i · ρ_i · items ([`Candidate::demand_qps`]); free is the headroom C − L_w(t), with C =
/// R · C_v and L_w(t) the seen load. So
///
/// score = (demand / C) · ((C − L_w(t)) / C),
///
/// which, with a single dimension, is the normalised headroom times the normalised demand. The
/// cluster resources of docs/model.md §2.1 (cores, GPUs, memory) are not a second dimension
/// because replicas hold them from deployment on (§2.4, §13), and binding a stream takes none
/// of them; links have no bandwidth capacity in the model.
///
/// Unlike `load-balancing` or most free headroom, it favours the worker on which the stream
/// takes the largest share of the capacity, among those with room: a small worker with
/// room rather than a large, nearly idle one, which keeps the large ones for the streams that
/// only they can hold. Ties go to the lower seen load, then cluster, then variant (§6).
pub(super) struct Tetris;

/// The alignment score of one candidate: (demand / C) · (free / C). A worker without capacity
/// (no replica, docs/model.md §13) scores 0 rather than dividing by zero.
fn alignment(c: &Candidate) -> f64 {
    if c.capacity_qps <= 0.0 {
        return 0.0;
    }
    let free = (c.capacity_qps - c.load_qps).max(0.0);
    (c.demand_qps / c.capacity_qps) * (free / c.capacity_qps)
}

impl Policy for Tetris {
    fn name(&self) -> &'static str {
        "tetris"
    }
    fn choose(&self, c: &[Candidate], _: &mut SimRng) -> usize {
        pick_max(c, alignment)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{by_name, pick_min};
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

    fn pick(c: &[Candidate]) -> usize {
        Tetris.choose(c, &mut stream_rng(1, Purpose::Other, 0, 0))
    }

    #[test]
    fn registered_under_its_name() {
        assert_eq!(by_name("tetris").expect("registered").name(), "tetris");
    }

    #[test]
    fn picks_the_greatest_normalised_demand_times_headroom() {
        // Same demand (10 qps) everywhere. Scores (10/C)·((C − L)/C):
        //   0: C 100, L 90  → 0.1 · 0.1  = 0.010
        //   1: C 100, L 40  → 0.1 · 0.6  = 0.060
        //   2: C 200, L 20  → 0.05 · 0.9 = 0.045
        //   3: C 50,  L 35  → 0.2 · 0.3  = 0.060, tied with 1
        //   4: C 50,  L 30  → 0.2 · 0.4  = 0.080  ← best
        let c = [
            cand(0, 90.0, 100.0, 10.0),
            cand(1, 40.0, 100.0, 10.0),
            cand(2, 20.0, 200.0, 10.0),
            cand(3, 35.0, 50.0, 10.0),
            cand(4, 30.0, 50.0, 10.0),
        ];
        let want = [0.010, 0.060, 0.045, 0.060, 0.080];
        for (x, w) in c.iter().zip(want) {
            assert!((alignment(x) - w).abs() < 1e-12, "{x:?}: {}", alignment(x));
        }
        assert_eq!(pick(&c), 4);
        // Without 4: 1 and 3 tie on the score; the lower seen load wins (3: 35 against 40).
        assert_eq!(pick(&c[..4]), 3);
    }

    #[test]
    fn alignment_beats_plain_most_free() {
        // A small worker half used, and a large one nearly idle; the stream brings 10 qps.
        //   0: C 100,  L 50 → (10/100)·(50/100)    = 0.05
        //   1: C 1000, L 40 → (10/1000)·(960/1000) = 0.0096
        // Most free (absolute 960 vs 50, or relative 0.96 vs 0.5) and least loaded all take
        // the large worker; Tetris packs the stream where it fills more of the capacity.
        let c = [cand(0, 50.0, 100.0, 10.0), cand(1, 40.0, 1000.0, 10.0)];
        assert_eq!(pick_max(&c, |x| x.capacity_qps - x.load_qps), 1);
        assert_eq!(pick_max(&c, |x| 1.0 - x.load_qps / x.capacity_qps), 1);
        assert_eq!(pick_min(&c, |x| x.load_qps), 1);
        assert_eq!(pick(&c), 0);
    }

    #[test]
    fn the_demand_on_each_worker_counts() {
        // Same capacity and load; the stream weighs twice as much on worker 1 (a smaller
        // reference size ζ_ref): its demand vector is longer there, so it aligns better.
        let c = [cand(0, 20.0, 100.0, 5.0), cand(1, 20.0, 100.0, 10.0)];
        assert_eq!(pick(&c), 1);
    }

    #[test]
    fn zero_capacity_or_demand_scores_zero_and_ties_break_as_in_section_6() {
        let mut idle = cand(0, 0.0, 0.0, 0.0);
        assert_eq!(alignment(&idle), 0.0);
        idle.capacity_qps = 100.0;
        assert_eq!(alignment(&idle), 0.0);
        // All score 0: the lower seen load, then the lower cluster, then the lower index.
        let c = [
            cand(0, 5.0, 100.0, 0.0),
            cand(1, 3.0, 100.0, 0.0),
            cand(2, 3.0, 100.0, 0.0),
        ];
        assert_eq!(pick(&c), 1);
        let same = [cand(7, 3.0, 100.0, 2.0), cand(7, 3.0, 100.0, 2.0)];
        assert_eq!(pick(&same), 0);
    }
}
