//! Decision time per binding: feasibility over every reachable worker plus the policy's choice,
//! with 10, 100 and 1000 candidate (variant, cluster) pairs.

use continuum::feasibility::{Demand, Fleet, WorkerInfo, feasible};
use continuum::load::LoadView;
use continuum::policy::REGISTRY;
use continuum::rng::{Purpose, stream_rng};
use continuum::topology::Reach;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use rand::Rng;
use std::hint::black_box;

/// `n` workers at rising distance, all feasible for the demand below, with random loads.
fn setup(n: usize) -> (Fleet, Vec<Reach>, LoadView) {
    let mut rng = stream_rng(1, Purpose::Other, n as u64, 0);
    let workers = (0..n)
        .map(|i| WorkerInfo {
            task: 0,
            accuracy: 0.3 + 0.3 * (i % 3) as f64,
            base_ms: 5.0 + (i % 7) as f64,
            per_kb_ms: 0.04,
            ref_kb: 50.0,
            capacity_qps: 100.0 + (i % 5) as f64 * 50.0,
            batch: 1 + (i % 4) as u32,
            replicas: 1,
            cluster: (i / 4) as u32,
            variant: (i % 4) as u32,
        })
        .collect();
    let reach = (0..n)
        .map(|i| Reach {
            worker: i as u32,
            cluster: (i / 4) as u32,
            variant: (i % 4) as u32,
            d_ms: i as f64 * 0.01,
            sigma_ms: 0.1,
        })
        .collect();
    let mut view = LoadView::idle(n);
    for w in &mut view.workers {
        w.load_qps = rng.random::<f64>() * 60.0;
    }
    (Fleet { workers }, reach, view)
}

fn decision(c: &mut Criterion) {
    let demand = Demand {
        task: 0,
        rate_qps: 15.0,
        size_kb: 40.0,
        tx_ms: 3.0,
        access_ms: 5.0,
        max_delay_ms: 200.0,
        min_accuracy: 0.2,
        items: 1,
    };
    for &n in &[10usize, 100, 1000] {
        let (fleet, reach, view) = setup(n);
        let mut group = c.benchmark_group(format!("decision/{n}"));
        for p in REGISTRY {
            let mut rng = stream_rng(2, Purpose::Policy, 0, 0);
            let mut out = Vec::with_capacity(n);
            group.bench_function(BenchmarkId::from_parameter(p.name()), |b| {
                b.iter(|| {
                    feasible(black_box(&demand), &reach, &fleet, &view, &mut out);
                    black_box(p.choose(&out, &mut rng))
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, decision);
criterion_main!(benches);
