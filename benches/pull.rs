//! Decision time of pull dispatch per stream binding (docs/model.md §15): one decision step —
//! every round's encoding, the shared network's plain-Rust forward for every agent, eq. 11 and
//! the bindings — over one pending stream per scheduler, on generated ISP topologies of 16
//! and 257 clusters (10 and 185 antennas) with the shipped profiles, on an idle view. The figure
//! per binding is the step's time divided by the streams it bound (printed once per size).
//! TapFinger's agents are the shipped checkpoint's; `greedy-pull` is the hand-written
//! reference.

use continuum_core::config::Source;
use continuum_core::feasibility::Fleet;
use continuum_core::load::LoadView;
use continuum_core::profiles::Profiles;
use continuum_core::pull::{GreedyPull, Pending, Puller, Resolution, step};
use continuum_core::rng::{Purpose, stream_rng};
use continuum_core::topology::Topology;
use continuum_core::workload::Workload;
use continuum_infer::tapfinger::{Pick, TapCheckpoint, TapFinger};
use continuum_topogen::generate::{GenerateOptions, generate};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::Path;

fn bench_size(c: &mut Criterion, antennas: usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let profiles = Profiles::load(&root.join("profiles/object-detection.yaml")).expect("profiles");
    let workload =
        Workload::load(&root.join("workloads/default.yaml"), &profiles).expect("workload");
    let text = generate(&GenerateOptions {
        antennas,
        ..GenerateOptions::default()
    });
    let t = Topology::from_source(&Source::inline("generated.yaml", &text), &profiles)
        .expect("generated topology");
    let fleet = Fleet::new(&t, &profiles);
    let view = LoadView::idle(fleet.workers.len());
    let mut rng = stream_rng(1, Purpose::Other, 0, 0);
    let pending: Vec<Pending> = t
        .schedulers
        .iter()
        .enumerate()
        .map(|(s, sched)| Pending {
            demand: workload.sample_stream(&mut rng, 0.0).demand,
            reach: &sched.reach,
            sched: s as u16,
            waited: 0,
        })
        .collect();
    let clusters = t.clusters.len();
    let path = root.join("models/full-edge-tapfinger.tapfinger");
    let ck = TapCheckpoint::load(&path).expect("the shipped checkpoint");
    let net = ck.network(&path).expect("its network");
    let mut tf = TapFinger::new(net, Pick::Greedy, true, Resolution::Bayes, clusters);
    let pullers: [(&str, &mut dyn Puller); 2] =
        [("tapfinger", &mut tf), ("greedy-pull", &mut GreedyPull)];
    for (name, puller) in pullers {
        let (bound, stats) = step(&pending, &fleet, &view, puller, &mut rng);
        assert!(
            !bound.is_empty(),
            "{name} bound nothing: the figure would mean nothing"
        );
        let n = bound.len();
        let start = std::time::Instant::now();
        let reps = 5;
        for _ in 0..reps {
            black_box(step(&pending, &fleet, &view, puller, &mut rng));
        }
        let per = start.elapsed().as_secs_f64() / f64::from(reps) / n as f64 * 1e6;
        eprintln!(
            "pull/{name}-{clusters}-clusters: {} pending, {n} bound in {} rounds; ≈ {per:.1} µs per binding",
            pending.len(),
            stats.rounds
        );
        c.bench_function(&format!("pull/{name}-step-{clusters}-clusters"), |b| {
            b.iter(|| black_box(step(&pending, &fleet, &view, puller, &mut rng)))
        });
    }
}

fn decision(c: &mut Criterion) {
    bench_size(c, 10);
    bench_size(c, 185);
}

criterion_group!(benches, decision);
criterion_main!(benches);
