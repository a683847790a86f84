//! Dispatch: the binding step shared by the simulator and the gateway (docs/model.md §5–6) —
//! feasibility first, then the policy's pick among the feasible candidates. It lives above both
//! [`crate::feasibility`] and [`crate::policy`], which know nothing of each other's callers.

use crate::feasibility::{Candidate, Demand, Fleet, Shortfall, feasible};
use crate::load::{LoadView, OwnLoad};
use crate::policy::Policy;
use crate::rng::SimRng;
use crate::topology::Reach;

/// Where a stream goes: the candidate a policy picked and its entry of the reach list it was
/// picked from (d_n^s, σ_n^s), handed to the simulator and the gateway as one value so that
/// neither searches the reach list again.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placement {
    /// The chosen (variant, cluster) binding and the figures it was ranked by.
    pub candidate: Candidate,
    /// Its entry of the reach list it was chosen from (the worker's network figures).
    pub reach: Reach,
}

impl Placement {
    /// The placement of `candidate`, one of the candidates [`feasible`] found on `reach`.
    ///
    /// # Panics
    /// If `candidate`'s worker is not in `reach`.
    pub fn of(candidate: Candidate, reach: &[Reach]) -> Self {
        let reach = *reach
            .iter()
            .find(|r| r.worker == candidate.worker)
            .expect("candidate comes from reach");
        Self { candidate, reach }
    }
}

/// The binding step of docs/model.md §5–6, shared by the simulator and the gateway: the feasible
/// candidates (left in `scratch`, reusable across calls) on `view` plus the scheduler's own
/// recent bindings (`own`, docs/model.md §8), then `policy`'s pick among them, recorded in
/// `own` at `now_ms`, with its reach entry ([`Placement`]). `Err` says how the workers fell
/// short when none is feasible.
#[allow(clippy::too_many_arguments)]
pub fn bind(
    d: &Demand,
    reach: &[Reach],
    fleet: &Fleet,
    view: &LoadView,
    own: &mut OwnLoad,
    now_ms: f64,
    policy: &dyn Policy,
    rng: &mut SimRng,
    scratch: &mut Vec<Candidate>,
) -> Result<Placement, Shortfall> {
    let short = feasible_seen(d, reach, fleet, view, own, scratch);
    if scratch.is_empty() {
        return Err(short);
    }
    if policy.uses_cluster_shares() {
        cluster_shares(fleet, view, own, scratch);
    }
    let c = scratch[policy.choose(scratch, rng)];
    own.record(c.worker, c.demand_qps, now_ms);
    Ok(Placement::of(c, reach))
}

/// Fills each candidate's [`Candidate::cluster_shares`]: its cluster's busy (cpu, memory)
/// shares on `view` plus `own` bindings, with the stream's demand placed on the candidate.
fn cluster_shares(fleet: &Fleet, view: &LoadView, own: &OwnLoad, out: &mut [Candidate]) {
    for c in out.iter_mut() {
        let mut shares = [0.0; 2];
        for &w in &fleet.cluster_workers[c.cluster as usize] {
            let load = view.workers[w as usize].load_qps + own.extra(w, view);
            let per = fleet.workers[w as usize].busy_share_per_qps;
            shares[0] += load * per[0];
            shares[1] += load * per[1];
        }
        let per = fleet.workers[c.worker as usize].busy_share_per_qps;
        c.cluster_shares = [
            shares[0] + c.demand_qps * per[0],
            shares[1] + c.demand_qps * per[1],
        ];
    }
}

/// [`feasible`] on `view` plus the scheduler's own recent bindings: each candidate's seen load
/// gains [`OwnLoad::extra`], and one that no longer fits the load constraint of §5 leaves the
/// list (counted as failing it). `own` is first settled against `view`.
pub fn feasible_seen(
    d: &Demand,
    reach: &[Reach],
    fleet: &Fleet,
    view: &LoadView,
    own: &mut OwnLoad,
    out: &mut Vec<Candidate>,
) -> Shortfall {
    let mut short = feasible(d, reach, fleet, view, out);
    own.settle(view);
    if !own.is_empty() {
        let before = out.len();
        out.retain_mut(|c| {
            c.load_qps += own.extra(c.worker, view);
            c.load_qps + c.demand_qps <= c.capacity_qps
        });
        short.load += (before - out.len()) as u32;
    }
    short
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::OwnBindings;
    use crate::policy::by_name;
    use crate::rng::{Purpose, stream_rng};

    #[test]
    fn own_bindings_spread_a_burst_that_one_view_would_herd() {
        // The tiny topology seen from antenna a0: the cloud (big-b4 ×2, 180 qps), the central
        // office (small-b1 ×2, 200 qps) and a0 itself (small-b1, 100 qps), all idle in the view.
        // Three streams of 70 qps on one view: `load-balancing` herds them onto the cloud (the
        // tie-break's lowest cluster index) when it does not count its own bindings, and
        // spreads them cloud, central office, antenna when it does.
        let sc = crate::fixtures::scenario(
            crate::fixtures::TOPOLOGY,
            &crate::fixtures::workload(1.0, "periodic", 1000.0, 0.0),
        );
        let reach = &sc.topology.schedulers[0].reach;
        let w = |c, v| crate::fixtures::worker(&sc, c, v) as u32;
        let (cloud, co, a0) = (
            w("cloud", "big-b4"),
            w("co", "small-b1"),
            w("a0", "small-b1"),
        );
        let d = Demand {
            task: sc.profiles.task_id("detect").expect("task"),
            rate_qps: 70.0,
            frame_kb: 10.0,
            tx_ms: 0.0,
            access_ms: 2.0,
            max_delay_ms: 1000.0,
            min_accuracy: 0.0,
            items: 1,
        };
        let view = LoadView::idle(sc.fleet.workers.len());
        let lb = by_name("load-balancing").unwrap();
        let mut rng = stream_rng(1, Purpose::Other, 0, 0);
        let mut scratch = Vec::new();
        let mut off = OwnLoad::new(OwnBindings::Off, 1000.0);
        let mut publ = OwnLoad::new(OwnBindings::Publication, 1000.0);
        let (mut herd, mut spread) = (Vec::new(), Vec::new());
        for k in 0..3 {
            let t = k as f64;
            let fleet = &sc.fleet;
            herd.push(
                bind(
                    &d,
                    reach,
                    fleet,
                    &view,
                    &mut off,
                    t,
                    lb,
                    &mut rng,
                    &mut scratch,
                )
                .unwrap()
                .candidate
                .worker,
            );
            spread.push(
                bind(
                    &d,
                    reach,
                    fleet,
                    &view,
                    &mut publ,
                    t,
                    lb,
                    &mut rng,
                    &mut scratch,
                )
                .unwrap()
                .candidate
                .worker,
            );
        }
        assert_eq!(herd, [cloud, cloud, cloud]);
        assert_eq!(spread, [cloud, co, a0]);
        // Two more go to the cloud (140 of 180 qps) and the central office (140 of 200); a
        // sixth fits nowhere once its own bindings count, where the view alone accepts it.
        for _ in 0..2 {
            bind(
                &d,
                reach,
                &sc.fleet,
                &view,
                &mut publ,
                3.0,
                lb,
                &mut rng,
                &mut scratch,
            )
            .unwrap();
        }
        let short = bind(
            &d,
            reach,
            &sc.fleet,
            &view,
            &mut publ,
            4.0,
            lb,
            &mut rng,
            &mut scratch,
        )
        .expect_err("every worker is full by its own count");
        assert_eq!(short.load, 3);
        // The next publication shows the loads itself: the accounting forgets them.
        let mut later = view.clone();
        later.published_ms = 100.0;
        assert!(
            bind(
                &d,
                reach,
                &sc.fleet,
                &later,
                &mut publ,
                100.0,
                lb,
                &mut rng,
                &mut scratch
            )
            .is_ok()
        );
    }
}
