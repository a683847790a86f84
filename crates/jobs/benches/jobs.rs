//! Batch-jobs simulator speed on a 100-node cluster (16 cores, 4 GPUs, 64 GB each): task
//! attempts simulated per wall second (criterion's element throughput), for a task-level and a
//! job-level placement. The jobs are night.yaml's DAG batch kind alone, at a rate that offers
//! 85 % of the cluster's cores (25.6 jobs/min; see the file's "Rates"), for 10 simulated minutes
//! and until every job is done.

use continuum_jobs::workload::Arrivals;
use continuum_jobs::{JobsWorkload, Mitigation, Node, Nodes, Placement, Res, SimSettings, run};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::path::Path;
use std::time::Duration;

fn jobs(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut w = JobsWorkload::load(&root.join("workloads/jobs/night.yaml")).expect("shipped");
    w.kinds.retain(|k| k.name == "dag-batch");
    w.arrivals = Arrivals::Constant { per_min: 25.6 };
    let node = Node {
        cluster: None,
        capacity: Res::new(16.0, 4.0, 64.0),
        speed: 1.0,
    };
    let nodes = Nodes::new(vec![node; 100]).expect("valid");
    let settings = SimSettings {
        seed: 7,
        duration_s: 600.0,
        ..SimSettings::default()
    };
    let mut group = c.benchmark_group("jobs/100-nodes-dag-600s");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    for name in ["LRP", "GANG_DRF_BINPACK"] {
        let p = Placement::by_name(name).expect("named");
        let m = Mitigation::Restart { ratio: 0.8 };
        let placed = run(&nodes, &w, &p, m, &settings)
            .expect("runs")
            .tasks
            .placed;
        group.throughput(Throughput::Elements(placed));
        group.bench_function(name, |b| {
            b.iter(|| {
                run(&nodes, &w, &p, m, &settings)
                    .expect("runs")
                    .tasks
                    .placed
            })
        });
    }
    group.finish();
}

criterion_group!(benches, jobs);
criterion_main!(benches);
