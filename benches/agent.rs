//! Decision time of the meta-policy per scheduler per window: encoding the window's
//! observation into every scheduler's state and one batched forward pass of the Q-network,
//! on full-edge (16 schedulers, 81 workers) with the default hyper-parameters. The figure per
//! scheduler is the measured time divided by 16.

use candle_core::{Device, Tensor};
use continuum::agent::{DqnConfig, NetShape, StateEncoder, argmax, build};
use continuum::load::WorkerLoad;
use continuum::observe::WindowObservation;
use continuum::sim::Scenario;
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::Path;

fn decision(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sc = Scenario::load(
        &root.join("topologies/full-edge.yaml"),
        &root.join("profiles/object-detection.yaml"),
        &root.join("workloads/default.yaml"),
    )
    .expect("shipped inputs are valid");
    let cfg = DqnConfig::default();
    let mut enc = StateEncoder::new(&sc.topology, &sc.fleet, &cfg);
    let shape = NetShape {
        features: enc.features(),
        history: enc.history(),
        conv_channels: cfg.conv_channels,
        conv_kernel: cfg.conv_kernel,
        hidden: cfg.hidden,
        actions: cfg.actions.len(),
    };
    let (_vars, net) = build(shape, 1).expect("network");
    let n = enc.schedulers();
    let obs = WindowObservation {
        loads: (0..sc.fleet.workers.len())
            .map(|i| WorkerLoad {
                load_qps: i as f64,
                streams: i as u32 % 7,
                throughput_qps: i as f64 * 0.9,
            })
            .collect(),
        incoming_qps: (0..n * cfg.buckets.len())
            .map(|i| (i % 13) as f64 * 10.0)
            .collect(),
        buckets: cfg.buckets.len(),
    };
    let mut batch = Vec::new();
    let mut state = Vec::new();
    c.bench_function(&format!("agent/decide-all-{n}-schedulers"), |b| {
        b.iter(|| {
            enc.push(black_box(&obs));
            batch.clear();
            for s in 0..n {
                enc.state_into(s, &mut state);
                batch.extend_from_slice(&state);
            }
            let x = Tensor::from_slice(&batch, (n, shape.features, shape.history), &Device::Cpu)
                .unwrap();
            let q = net.forward(&x).unwrap().to_vec2::<f32>().unwrap();
            black_box(q.iter().map(|r| argmax(r)).sum::<usize>())
        })
    });
}

criterion_group!(benches, decision);
criterion_main!(benches);
