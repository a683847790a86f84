//! Hand-worked placements on two or three nodes, where the right node is known by reasoning:
//! one case per scoring plugin, the tie rule, the filter, gang and the job orders.

use super::volcano::{JobView, Need};
use super::*;

fn slot(cap: (f64, f64, f64), used: (f64, f64, f64)) -> Slot {
    Slot {
        cap: Res::new(cap.0, cap.1, cap.2),
        used: Res::new(used.0, used.1, used.2),
    }
}

fn one(plugin: Plugin) -> Placement {
    Placement::new("t", vec![(plugin, 1.0)], Level::Task, JobOrder::Fifo, false).expect("valid")
}

const REQ: Res = Res::new(2.0, 0.0, 4.0);

#[test]
fn least_allocated_prefers_the_emptier_node() {
    // A: cpu 6/8 → 25, mem 20/32 → 37.5, score 31.25. B (empty): cpu 2/8 → 75, mem 4/32 →
    // 87.5, score 81.25. B wins.
    let slots = [
        slot((8., 0., 32.), (4., 0., 16.)),
        slot((8., 0., 32.), (0., 0., 0.)),
    ];
    let p = one(Plugin::LeastAllocated);
    assert!((p.score(&slots[0], &REQ, &Res::ZERO) - 31.25).abs() < 1e-12);
    assert!((p.score(&slots[1], &REQ, &Res::ZERO) - 81.25).abs() < 1e-12);
    assert_eq!(p.choose(&slots, &REQ, &Res::ZERO), Some(1));
    assert_eq!(
        Placement::by_name("LRP")
            .unwrap()
            .choose(&slots, &REQ, &Res::ZERO),
        Some(1)
    );
}

#[test]
fn most_allocated_prefers_the_fuller_node() {
    // Same nodes: A scores (75 + 62.5) / 2 = 68.75, B (25 + 12.5) / 2 = 18.75. A wins.
    let slots = [
        slot((8., 0., 32.), (4., 0., 16.)),
        slot((8., 0., 32.), (0., 0., 0.)),
    ];
    let p = Placement::by_name("MRP").unwrap();
    assert!((p.score(&slots[0], &REQ, &Res::ZERO) - 68.75).abs() < 1e-12);
    assert_eq!(p.choose(&slots, &REQ, &Res::ZERO), Some(0));
}

#[test]
fn balanced_allocation_prefers_equal_fractions_where_least_allocated_does_not() {
    // A empty: fractions cpu 0.25, mem 0.125 → std 0.0625 → 93.75. B (4 cores, 20 GB used):
    // 0.75 and 0.75 → std 0 → 100. BRA picks B; LRP picks A (81.25 against 25).
    let slots = [
        slot((8., 0., 32.), (0., 0., 0.)),
        slot((8., 0., 32.), (4., 0., 20.)),
    ];
    let bra = Placement::by_name("BRA").unwrap();
    assert!((bra.score(&slots[0], &REQ, &Res::ZERO) - 93.75).abs() < 1e-12);
    assert!((bra.score(&slots[1], &REQ, &Res::ZERO) - 100.0).abs() < 1e-12);
    assert_eq!(bra.choose(&slots, &REQ, &Res::ZERO), Some(1));
    assert_eq!(
        Placement::by_name("LRP")
            .unwrap()
            .choose(&slots, &REQ, &Res::ZERO),
        Some(0)
    );
}

#[test]
fn equal_priority_and_every_tie_go_to_the_lowest_index() {
    // Every node scores 1 under EP: the fuller node 0 wins the tie.
    let slots = [
        slot((8., 0., 32.), (6., 0., 0.)),
        slot((8., 0., 32.), (0., 0., 0.)),
    ];
    assert_eq!(
        Placement::by_name("EP")
            .unwrap()
            .choose(&slots, &REQ, &Res::ZERO),
        Some(0)
    );
    // Nodes 1 and 2 tie for the best LRP score above node 0: node 1.
    let slots = [
        slot((8., 0., 32.), (4., 0., 0.)),
        slot((8., 0., 32.), (0., 0., 0.)),
        slot((8., 0., 32.), (0., 0., 0.)),
    ];
    assert_eq!(
        Placement::by_name("LRP")
            .unwrap()
            .choose(&slots, &REQ, &Res::ZERO),
        Some(1)
    );
}

#[test]
fn resource_limits_scores_the_node_that_holds_the_limit() {
    // A CPU limit of 12 cores: node 0 (8 cores) scores 0, node 1 (16 cores) scores 1.
    let slots = [
        slot((8., 0., 32.), (0., 0., 0.)),
        slot((16., 0., 32.), (0., 0., 0.)),
    ];
    let rlp = Placement::by_name("RLP").unwrap();
    let limit = Res::new(12.0, 0.0, 0.0);
    assert_eq!(rlp.score(&slots[0], &REQ, &limit), 0.0);
    assert_eq!(rlp.score(&slots[1], &REQ, &limit), 1.0);
    assert_eq!(rlp.choose(&slots, &REQ, &limit), Some(1));
    // Without limits every node scores 0: the tie goes to node 0.
    assert_eq!(rlp.choose(&slots, &REQ, &Res::ZERO), Some(0));
    // A memory limit that fits is enough.
    assert_eq!(rlp.score(&slots[0], &REQ, &Res::new(12.0, 0.0, 8.0)), 1.0);
}

#[test]
fn requested_to_capacity_ratio_follows_its_shape() {
    let slots = [
        slot((8., 0., 32.), (4., 0., 16.)),
        slot((8., 0., 32.), (0., 0., 0.)),
    ];
    // The packing shape (0 → 0, 100 → 10) scores like MostAllocated: 68.75 and 18.75.
    let pack = Placement::by_name("RTCR").unwrap();
    assert!((pack.score(&slots[0], &REQ, &Res::ZERO) - 68.75).abs() < 1e-12);
    assert_eq!(pack.choose(&slots, &REQ, &Res::ZERO), Some(0));
    // The spreading shape (0 → 10, 100 → 0) picks the empty node.
    let spread = one(Plugin::RequestedToCapacityRatio(vec![
        (0.0, 10.0),
        (100.0, 0.0),
    ]));
    assert_eq!(spread.choose(&slots, &REQ, &Res::ZERO), Some(1));
    // A resource scoring 0 leaves the average: a task with no memory on a node with none used
    // scores its CPU alone, 75 (not (75 + 0) / 2).
    let cpu_only = Res::new(2.0, 0.0, 0.0);
    let s = slot((8., 0., 32.), (4., 0., 0.));
    assert!((pack.score(&s, &cpu_only, &Res::ZERO) - 75.0).abs() < 1e-12);
}

#[test]
fn binpack_counts_only_what_the_task_requests() {
    // A task of 2 cores and no memory. Node 0: 4 of 8 cores and 30 of 32 GB used; node 1: 5
    // cores, no memory. Binpack looks at cores only: 6/8 → 75 against 7/8 → 87.5, node 1.
    // MostAllocated also weighs memory: node 0 (75 + 93.75) / 2 = 84.4 beats node 1 (43.75).
    let slots = [
        slot((8., 0., 32.), (4., 0., 30.)),
        slot((8., 0., 32.), (5., 0., 0.)),
    ];
    let req = Res::new(2.0, 0.0, 0.0);
    let bp = one(Plugin::Binpack);
    assert!((bp.score(&slots[0], &req, &Res::ZERO) - 75.0).abs() < 1e-12);
    assert!((bp.score(&slots[1], &req, &Res::ZERO) - 87.5).abs() < 1e-12);
    assert_eq!(bp.choose(&slots, &req, &Res::ZERO), Some(1));
    assert_eq!(
        Placement::by_name("MRP")
            .unwrap()
            .choose(&slots, &req, &Res::ZERO),
        Some(0)
    );
}

#[test]
fn the_filter_skips_nodes_that_lack_room() {
    // The empty node 0 has 2 cores: a 3-core task goes to the half-used node 1. A GPU task
    // goes to the only node with a GPU; a task larger than every node finds none.
    let slots = [
        slot((2., 0., 32.), (0., 0., 0.)),
        slot((8., 1., 32.), (4., 0., 0.)),
    ];
    let lrp = Placement::by_name("LRP").unwrap();
    assert_eq!(
        lrp.choose(&slots, &Res::new(3.0, 0.0, 1.0), &Res::ZERO),
        Some(1)
    );
    assert_eq!(
        lrp.choose(&slots, &Res::new(1.0, 1.0, 1.0), &Res::ZERO),
        Some(1)
    );
    assert_eq!(
        lrp.choose(&slots, &Res::new(9.0, 0.0, 1.0), &Res::ZERO),
        None
    );
}

#[test]
fn gang_places_all_of_a_job_or_none() {
    // Three tasks of 2 cores, two nodes of 3 cores: only two fit. Gang places none and leaves
    // the nodes as they were; without gang two are placed, one per node (LRP spreads).
    let needs = [Need {
        request: Res::new(2.0, 0.0, 0.0),
        limit: Res::ZERO,
    }; 3];
    let start = [
        slot((3., 0., 0.), (0., 0., 0.)),
        slot((3., 0., 0.), (0., 0., 0.)),
    ];
    let mut out = Vec::new();
    let mut slots = start;
    let gang = Placement::by_name("GANG_LRP").unwrap();
    assert_eq!(gang.place_job(&mut slots, &needs, &mut out), 0);
    assert_eq!(slots, start);
    assert_eq!(out, vec![None, None, None]);
    let free = Placement::new(
        "free",
        vec![(Plugin::LeastAllocated, 1.0)],
        Level::Job,
        JobOrder::Fifo,
        false,
    )
    .unwrap();
    assert_eq!(free.place_job(&mut slots, &needs, &mut out), 2);
    assert_eq!(out, vec![Some(0), Some(1), None]);
    // Two tasks fit: gang places both.
    let mut slots = start;
    assert_eq!(gang.place_job(&mut slots, &needs[..2], &mut out), 2);
}

#[test]
fn drf_visits_the_lowest_dominant_share_first() {
    // Cluster 16 cores, 32 GB. Job 0: 4 cores (dominant 0.25). Job 1: 1 core and 16 GB
    // (dominant 0.5). Job 2: nothing yet (0). Job 3: nothing, arrived before job 2.
    let total = Res::new(16.0, 0.0, 32.0);
    let view = |id, arrival_s, allocated| JobView {
        id,
        arrival_s,
        allocated,
        sla_waiting_s: None,
    };
    let mut jobs = [
        view(0, 0.0, Res::new(4.0, 0.0, 0.0)),
        view(1, 1.0, Res::new(1.0, 0.0, 16.0)),
        view(2, 3.0, Res::ZERO),
        view(3, 2.0, Res::ZERO),
    ];
    JobOrder::Drf.sort(&total, &mut jobs);
    let ids: Vec<u32> = jobs.iter().map(|j| j.id).collect();
    assert_eq!(ids, vec![3, 2, 0, 1]);
    JobOrder::Fifo.sort(&total, &mut jobs);
    let ids: Vec<u32> = jobs.iter().map(|j| j.id).collect();
    assert_eq!(ids, vec![0, 1, 3, 2]);
}

#[test]
fn sla_visits_the_earliest_deadline_first() {
    // Deadlines: job 0 at 0 + 100, job 1 at 10 + 50 = 60, job 2 none of its own (global 200:
    // 5 + 200 = 205); without a global waiting time job 2 goes last.
    let total = Res::new(1.0, 0.0, 1.0);
    let view = |id, arrival_s, w| JobView {
        id,
        arrival_s,
        allocated: Res::ZERO,
        sla_waiting_s: w,
    };
    let mut jobs = [
        view(0, 0.0, Some(100.0)),
        view(2, 5.0, None),
        view(1, 10.0, Some(50.0)),
    ];
    JobOrder::Sla {
        waiting_s: Some(200.0),
    }
    .sort(&total, &mut jobs);
    assert_eq!(jobs.iter().map(|j| j.id).collect::<Vec<_>>(), vec![1, 0, 2]);
    let mut jobs = [view(2, 5.0, None), view(0, 0.0, Some(100.0))];
    JobOrder::Sla { waiting_s: None }.sort(&total, &mut jobs);
    assert_eq!(jobs.iter().map(|j| j.id).collect::<Vec<_>>(), vec![0, 2]);
}

#[test]
fn names_build_their_configurations() {
    let all = Placement::all();
    assert_eq!(all.len(), KUBERNETES.len() + VOLCANO.len());
    let g = Placement::by_name("gang_drf_binpack").unwrap();
    assert_eq!(g.name(), "GANG_DRF_BINPACK");
    assert_eq!(
        (g.level(), g.order(), g.gang()),
        (Level::Job, JobOrder::Drf, true)
    );
    assert_eq!(g.plugins(), &[(Plugin::Binpack, 1.0)]);
    let s = Placement::by_name("SLA_MRP").unwrap();
    assert_eq!(s.order(), JobOrder::Sla { waiting_s: None });
    assert!(!s.gang());
    let k = Placement::by_name("BRA").unwrap();
    assert_eq!((k.level(), k.gang()), (Level::Task, false));
    let e = Placement::by_name("TTP").unwrap_err().to_string();
    assert!(e.contains("not modelled") && e.contains("taints"), "{e}");
    let e = Placement::by_name("GANG_LPR").unwrap_err().to_string();
    assert!(e.contains("did you mean `GANG_LRP`"), "{e}");
    assert!(Placement::new("x", vec![], Level::Task, JobOrder::Fifo, false).is_err());
    assert!(
        Placement::new(
            "x",
            vec![(Plugin::EqualPriority, 1.0)],
            Level::Task,
            JobOrder::Drf,
            false
        )
        .is_err()
    );
    let bad_shape = Plugin::RequestedToCapacityRatio(vec![(50.0, 1.0), (50.0, 2.0)]);
    assert!(
        Placement::new(
            "x",
            vec![(bad_shape, 1.0)],
            Level::Task,
            JobOrder::Fifo,
            false
        )
        .is_err()
    );
    let gpu = Placement::by_name("LRP")
        .unwrap()
        .with_resource_weights(Res::new(1.0, 1.0, 1.0));
    assert_eq!(gpu.unwrap().resource_weights(), Res::new(1.0, 1.0, 1.0));
}
