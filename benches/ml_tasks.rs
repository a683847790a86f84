//! Decision time of TapFinger's agents in its own problem (docs/tapfinger.md §1): one
//! timestep's logical rounds — each agent's graph, the shared network's plain-Rust forward,
//! eq. 11 and the placements — on TapFinger's synthetic setting with 3 and 6 clusters, from a
//! state with full pending sets (the tasks of the first timesteps queued, nothing placed). The
//! figure per placed task is the timestep's time over the tasks it placed (printed once per
//! size). The agents are the shipped checkpoint's (`models/tapfinger-ml-tasks.tapfinger`, the
//! TapFinger row of docs/tapfinger.md §1).

use continuum_core::rng::{Purpose, stream_rng};
use continuum_infer::tapfinger::Pick;
use continuum_jobs::ml::{MlRun, MlScheduler, MlSetting};
use continuum_learn::jobtap::JobAgents;
use criterion::{Criterion, criterion_group, criterion_main};
use std::path::Path;
use std::time::Instant;

/// A run of `n` clusters with its first arrivals queued: 5 timesteps admitted, nothing placed.
fn busy(n: usize) -> MlRun {
    let mut run = MlRun::new(MlSetting::synthetic(n, 4.0 * n as f64 / 3.0), 7);
    while run.now() < 5 {
        run.admit();
        run.advance();
    }
    run.admit();
    run
}

fn bench(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (net, v) = continuum_learn::jobtap::load(&root.join("models/tapfinger-ml-tasks.tapfinger"))
        .expect("the shipped checkpoint");
    for n in [3, 6] {
        let start = busy(n);
        // Once, outside criterion: the tasks one timestep places.
        let mut run = start.clone();
        let mut agents = JobAgents::new(net.clone(), v, Pick::Greedy, false);
        let mut rng = stream_rng(1, Purpose::Policy, 0, 0);
        let t = Instant::now();
        agents.schedule(&mut run.interval(), &mut rng);
        let dt = t.elapsed().as_secs_f64();
        let placed = start.tasks().len() - run.tasks().iter().filter(|x| x.start.is_none()).count();
        println!(
            "ml-tasks/{n} clusters: {placed} tasks placed in {} decisions, {:.1} µs per task (one run)",
            agents.decisions,
            1e6 * dt / placed.max(1) as f64
        );
        c.bench_function(&format!("ml-tasks/{n}-clusters/timestep"), |b| {
            b.iter_batched(
                || {
                    (
                        start.clone(),
                        JobAgents::new(net.clone(), v, Pick::Greedy, false),
                    )
                },
                |(mut run, mut agents)| {
                    let mut rng = stream_rng(1, Purpose::Policy, 0, 0);
                    agents.schedule(&mut run.interval(), &mut rng);
                    run
                },
                criterion::BatchSize::SmallInput,
            )
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
