//! Decision time per binding: feasibility over every reachable worker plus the policy's choice,
//! with 10, 100 and 1000 candidate (variant, cluster) pairs; and on generated ISP topologies of
//! 16 to 4 096 antennas (`decision/isp-*`), with the default workload's streams, every worker
//! reachable (`all`) or a regional routing scope (`scoped`, `max_reach_ms: 40`).

use continuum_core::feasibility::{Demand, Fleet, WorkerInfo, feasible};
use continuum_core::load::LoadView;
use continuum_core::policy::REGISTRY;
use continuum_core::rng::{Purpose, stream_rng};
use continuum_core::topology::Reach;
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
            busy_share_per_qps: [0.01, 0.005],
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
    let mut cluster_workers = vec![Vec::new(); n.div_ceil(4)];
    for i in 0..n {
        cluster_workers[i / 4].push(i as u32);
    }
    (
        Fleet {
            workers,
            cluster_workers,
        },
        reach,
        view,
    )
}

fn decision(c: &mut Criterion) {
    let demand = Demand {
        task: 0,
        rate_qps: 15.0,
        frame_kb: 40.0,
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

/// Streams of `workloads/default.yaml` bound at the first scheduler of generated topologies:
/// the cost of one binding as the country grows.
fn decision_at_scale(c: &mut Criterion) {
    use continuum_core::config::Source;
    use continuum_core::profiles::Profiles;
    use continuum_core::topology::Topology;
    use continuum_core::workload::Workload;
    use continuum_topogen::generate::{GenerateOptions, generate};
    use std::path::Path;
    let profiles = Profiles::load(Path::new("profiles/object-detection.yaml")).unwrap();
    let workload = Workload::load(Path::new("workloads/default.yaml"), &profiles).unwrap();
    let mut rng = stream_rng(3, Purpose::Arrivals, 0, 0);
    let demands: Vec<Demand> = (0..256)
        .map(|_| workload.sample_stream(&mut rng, 0.0).demand)
        .collect();
    let policy = REGISTRY
        .iter()
        .find(|p| p.name() == "least-impedance")
        .unwrap();
    for (scope, max_reach_ms) in [("all", None), ("scoped", Some(40.0))] {
        let mut group = c.benchmark_group(format!("decision/isp-{scope}"));
        for n in [16usize, 256, 1024, 4096] {
            if max_reach_ms.is_none() && n > 1024 {
                continue; // every pair reachable: 4 096 × 19 461 reach entries, 2.5 GB
            }
            let o = GenerateOptions {
                antennas: n,
                max_reach_ms,
                ..Default::default()
            };
            let text = generate(&o);
            let t = Topology::from_source(&Source::inline("isp.yaml", &text), &profiles).unwrap();
            let fleet = Fleet::new(&t, &profiles);
            let view = LoadView::idle(fleet.workers.len());
            let reach = &t.schedulers[0].reach;
            let mut out = Vec::new();
            let mut prng = stream_rng(2, Purpose::Policy, 0, 0);
            let mut i = 0;
            group.bench_function(BenchmarkId::from_parameter(n), |b| {
                b.iter(|| {
                    i = (i + 1) % demands.len();
                    feasible(black_box(&demands[i]), reach, &fleet, &view, &mut out);
                    black_box((!out.is_empty()).then(|| policy.choose(&out, &mut prng)))
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, decision, decision_at_scale);
criterion_main!(benches);
