use super::*;
use crate::config::Source;
use crate::fixtures;
use crate::load::LoadView;
use crate::topology::Topology;

fn setup() -> (Topology, Fleet) {
    let p = fixtures::profiles();
    let t = Topology::from_source(&Source::inline("t.yaml", fixtures::TOPOLOGY), &p).unwrap();
    let f = Fleet::new(&t, &p);
    (t, f)
}

fn demand(max_delay_ms: f64, min_accuracy: f64) -> Demand {
    Demand {
        task: 0,
        rate_qps: 10.0,
        frame_kb: 10.0,
        tx_ms: 1.0,
        access_ms: 2.0,
        max_delay_ms,
        min_accuracy,
        items: 1,
    }
}

/// Scheduler a0 reaches: its own small-b1 (net 0), co's small-b1 ×2 (net 1) and the cloud's
/// big-b4 ×2 (d 21, σ 5: net 31). Latency bounds for ζ = 10 KB, δ = 2, t = 1:
/// a0: 2·2 + 1 + 10 = 15; co: 2·(2+1) + 1 + 10 = 17; cloud: 2·(2+31) + 1 + 45 = 112.
#[test]
fn latency_constraint_at_its_boundary() {
    let (t, f) = setup();
    let reach = &t.schedulers[0].reach;
    let view = LoadView::idle(f.workers.len());
    let mut out = Vec::new();
    let count = |d: Demand, out: &mut Vec<Candidate>| {
        feasible(&d, reach, &f, &view, out);
        out.len()
    };
    assert_eq!(count(demand(15.0, 0.0), &mut out), 1);
    assert_eq!(count(demand(14.999, 0.0), &mut out), 0);
    assert_eq!(count(demand(17.0, 0.0), &mut out), 2);
    assert_eq!(count(demand(112.0, 0.0), &mut out), 3);
    assert_eq!(count(demand(111.999, 0.0), &mut out), 2);
    let short = feasible(&demand(111.999, 0.0), reach, &f, &view, &mut out);
    assert_eq!(short.latency, 1);
    assert!((out[1].e2e_ms - 12.0).abs() < 1e-12);
}

#[test]
fn accuracy_and_task_constraints() {
    let (t, f) = setup();
    let reach = &t.schedulers[0].reach;
    let view = LoadView::idle(f.workers.len());
    let mut out = Vec::new();
    // Only big (0.6) qualifies at 0.6; nothing at 0.61.
    feasible(&demand(1000.0, 0.6), reach, &f, &view, &mut out);
    assert_eq!(out.len(), 1);
    let short = feasible(&demand(1000.0, 0.61), reach, &f, &view, &mut out);
    assert!(out.is_empty());
    assert_eq!(
        (short.accuracy, short.binding_constraint()),
        (3, "accuracy")
    );
    let mut other = demand(1000.0, 0.0);
    other.task = 1;
    let short = feasible(&other, reach, &f, &view, &mut out);
    assert_eq!(
        (out.len(), short.task, short.binding_constraint()),
        (0, 3, "task")
    );
}

#[test]
fn load_constraint_at_its_boundary() {
    let (t, f) = setup();
    let reach = &t.schedulers[0].reach;
    let mut view = LoadView::idle(f.workers.len());
    let mut out = Vec::new();
    let own = reach[0].worker as usize; // a0's small-b1: capacity 100, η = 10/10 = 1
    view.workers[own].load_qps = 90.0; // 90 + 1·10 = 100 ≤ 100: feasible
    feasible(&demand(15.0, 0.0), reach, &f, &view, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].load_qps, 90.0);
    view.workers[own].load_qps = 90.001;
    let short = feasible(&demand(15.0, 0.0), reach, &f, &view, &mut out);
    assert_eq!((out.len(), short.binding_constraint()), (0, "load"));
}

/// A query of more items than a variant's batch size cannot go to it, and its load counts
/// items × rate: of a0's reach only the cloud's big-b4 (B = 4) holds 2 items.
#[test]
fn batch_items_rule_out_small_batches_and_scale_the_load() {
    let (t, f) = setup();
    let reach = &t.schedulers[0].reach;
    let view = LoadView::idle(f.workers.len());
    let mut out = Vec::new();
    let mut d = demand(1000.0, 0.0);
    feasible(&d, reach, &f, &view, &mut out);
    assert_eq!(out.len(), 3);
    d.items = 2;
    let short = feasible(&d, reach, &f, &view, &mut out);
    assert_eq!((out.len(), short.batch), (1, 2));
    assert_eq!(short.binding_constraint(), "batch");
    let w = f.workers[out[0].worker as usize];
    assert!(w.batch >= 2);
    // Demand is items × rate: a rate that fits at 2 items per query does not at 4.
    d.rate_qps = w.capacity_qps / (3.0 * d.frame_kb / w.ref_kb);
    assert_eq!(feasible(&d, reach, &f, &view, &mut out).load, 0);
    d.items = 4;
    assert_eq!(feasible(&d, reach, &f, &view, &mut out).load, 1);
    assert!(out.is_empty());
}

/// Workers too far for the deadline on the network alone are skipped in one step: the
/// candidates are exactly those a check of every worker finds, and the skipped ones count as
/// failing the latency constraint.
#[test]
fn the_far_tail_is_skipped_without_changing_the_candidates() {
    let (t, f) = setup();
    let view = LoadView::idle(f.workers.len());
    let mut out = Vec::new();
    for s in &t.schedulers {
        for max_delay in [
            1.0, 9.0, 14.999, 15.0, 17.0, 60.0, 67.0, 111.999, 112.0, 1000.0,
        ] {
            let d = demand(max_delay, 0.0);
            let short = feasible(&d, &s.reach, &f, &view, &mut out);
            let want: Vec<u32> = s
                .reach
                .iter()
                .filter(|r| {
                    let w = &f.workers[r.worker as usize];
                    latency_bound_ms(&d, r, w.base_ms + w.per_kb_ms * d.frame_kb) <= max_delay
                })
                .map(|r| r.worker)
                .collect();
            let got: Vec<u32> = out.iter().map(|c| c.worker).collect();
            assert_eq!(got, want, "deadline {max_delay}");
            assert_eq!(short.latency as usize, s.reach.len() - want.len());
        }
    }
    let short = feasible(
        &demand(1.0, 0.0),
        &t.schedulers[0].reach,
        &f,
        &view,
        &mut out,
    );
    assert_eq!((short.latency, short.binding_constraint()), (3, "latency"));
}
