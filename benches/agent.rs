//! Decision time of the meta-policy per scheduler per window: encoding the window's
//! observation into every scheduler's state, the branching Q-network's plain-Rust forward per
//! scheduler and the per-class conservative choice — `Agent::observe` then `Agent::decide` —
//! on full-edge (16 schedulers, 81 workers) with the default hyper-parameters and one head per
//! application class of the default workload. The figure per scheduler is the measured time
//! divided by 16.
//!
//! `agent/universal-…`: the topology-free network (`config/universal.yaml`, docs/model.md
//! §9.9) on a generated topology of 257 clusters (185 antennas, every worker reachable), every
//! scheduler with queries in every bucket (the network evaluated for all 12 of them): the
//! decision time per window for the whole network.

use continuum_core::load::WorkerLoad;
use continuum_core::observe::WindowObservation;
use continuum_core::policy::StreamClasses;
use continuum_infer::agent::{
    Agent, Checkpoint, CheckpointMeta, DqnConfig, Fallback, NetShape, StateEncoder,
    topology_fingerprint,
};
use continuum_learn::agent::{build, weights_of};
use continuum_sim::Scenario;
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
    let enc = StateEncoder::new(&sc.topology, &sc.fleet, &cfg);
    let classes = StreamClasses::from_workload(&sc.workload, &cfg.buckets);
    let shape = NetShape {
        features: enc.features(),
        history: enc.history(),
        conv_channels: cfg.conv_channels,
        conv_kernel: cfg.conv_kernel,
        hidden: cfg.hidden,
        actions: cfg.actions.len(),
        classes: classes.len(),
    };
    let (vars, _net) = build(shape, 1).expect("network");
    let names = sc.profiles.variant_names();
    let ck = Checkpoint {
        meta: CheckpointMeta {
            actions: cfg.actions.clone(),
            fallback: Fallback::single(vec![0; classes.len()]),
            classes,
            topology: sc.topology.name.clone(),
            fingerprint: topology_fingerprint(&sc.topology, &names),
            shape,
            config: cfg.clone(),
            margin: 0.05,
        },
        weights: weights_of(&vars).expect("weights"),
    };
    let mut agent =
        Agent::new(&ck, Path::new("bench"), &sc.topology, &sc.fleet, &names).expect("agent");
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
    c.bench_function(&format!("agent/decide-all-{n}-schedulers"), |b| {
        b.iter(|| {
            agent.observe(black_box(&obs));
            let d = agent.decide();
            black_box(d.iter().flatten().sum::<usize>())
        })
    });
}

fn universal(c: &mut Criterion) {
    use continuum_core::config::Source;
    use continuum_core::profiles::Profiles;
    use continuum_core::topology::Topology;
    use continuum_core::workload::Workload;
    use continuum_topogen::generate::{GenerateOptions, generate};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let profiles = Profiles::load(&root.join("profiles/object-detection.yaml")).expect("profiles");
    let workload =
        Workload::load(&root.join("workloads/default.yaml"), &profiles).expect("workload");
    let text = generate(&GenerateOptions {
        antennas: 185,
        ..GenerateOptions::default()
    });
    let t = Topology::from_source(&Source::inline("generated.yaml", &text), &profiles)
        .expect("generated topology");
    let sc = Scenario::new(profiles, t, workload);
    let cfg = DqnConfig::load(&root.join("config/universal.yaml")).expect("config");
    let meta = continuum_learn::universal::meta_for(&cfg, "bench".into());
    let (vars, _net) = build(meta.shape, 1).expect("network");
    let ck = Checkpoint {
        meta,
        weights: weights_of(&vars).expect("weights"),
    };
    let names = sc.profiles.variant_names();
    let mut agent =
        Agent::new(&ck, Path::new("bench"), &sc.topology, &sc.fleet, &names).expect("agent");
    let n = sc.topology.schedulers.len();
    let obs = WindowObservation {
        loads: (0..sc.fleet.workers.len())
            .map(|i| WorkerLoad {
                load_qps: (i % 50) as f64,
                streams: i as u32 % 7,
                throughput_qps: (i % 50) as f64 * 0.9,
            })
            .collect(),
        incoming_qps: (0..n * cfg.buckets.len())
            .map(|i| 1.0 + (i % 13) as f64 * 10.0)
            .collect(),
        buckets: cfg.buckets.len(),
    };
    let clusters = sc.topology.clusters.len();
    c.bench_function(&format!("agent/universal-{clusters}-clusters"), |b| {
        b.iter(|| {
            agent.observe(black_box(&obs));
            let d = agent.decide();
            black_box(d.iter().flatten().sum::<usize>())
        })
    });
}

criterion_group!(benches, decision, universal);
criterion_main!(benches);
