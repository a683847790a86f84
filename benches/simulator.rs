//! Simulator speed on full-edge at λ = 60 on one core: simulated queries per wall second
//! (criterion reports it as element throughput); divide by the offered rate (~16 000 qps) for
//! the ratio to real time.

use continuum_core::policy::by_name;
use continuum_sim::{Scenario, SimConfig, Simulation};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

fn simulator(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sc = Scenario::load(
        &root.join("topologies/full-edge.yaml"),
        &root.join("profiles/object-detection.yaml"),
        &root.join("workloads/default.yaml"),
    )
    .expect("shipped inputs are valid")
    .with_lambda(60.0);
    let sc = Arc::new(sc);
    let cfg = SimConfig {
        duration_s: 120.0,
        seed: 7,
        ..SimConfig::default()
    };
    let mut group = c.benchmark_group("simulator/full-edge-lambda60-120s");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    for name in ["least-impedance", "random-proportional-load"] {
        let policy = by_name(name).expect("registered");
        let queries = {
            let mut sim = Simulation::new(sc.clone(), cfg, policy);
            sim.finish();
            sim.stats().queries
        };
        group.throughput(Throughput::Elements(queries));
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut sim = Simulation::new(sc.clone(), cfg, policy);
                sim.finish();
                sim.stats().queries
            })
        });
    }
    group.finish();
}

criterion_group!(benches, simulator);
criterion_main!(benches);
