//! Running a row under an allocator: every slot, the offered demand per (scheduler,
//! application) of the slot just ended goes to the allocator, and its deployment to the
//! simulator.

use crate::report::AllocationReport;
use anyhow::{Result, anyhow};
use continuum_alloc::placement::Placement;
use continuum_sim::Simulation;
use indicatif::ProgressBar;

/// The allocator names `compare --allocators` accepts: `static`, those of
/// [`continuum_alloc::alloc::NAMES`] and [`continuum_alloc::alloc::ABLATIONS`], and the
/// former names of [`continuum_alloc::alloc::RENAMED`] (read as today's, with a warning).
pub fn check_allocator(name: &str) -> Result<()> {
    use continuum_alloc::alloc::{ABLATIONS, NAMES, RENAMED};
    if name == "static"
        || RENAMED.iter().any(|(old, _)| *old == name)
        || NAMES.contains(&name)
        || ABLATIONS.contains(&name)
    {
        Ok(())
    } else {
        Err(anyhow!(
            "--allocators: unknown allocator `{name}`; known: static, {} (ablations: {})",
            NAMES.join(", "),
            ABLATIONS.join(", ")
        ))
    }
}

/// Offered queries per second of every (scheduler, app) with an emission time in
/// [`from_ms`, `to_ms`), counted by metrics window (windows starting in the interval).
fn offered_qps(sim: &Simulation, from_ms: f64, to_ms: f64) -> Vec<f64> {
    let m = sim.metrics();
    let sc = sim.scenario();
    let (ns, na) = (sc.topology.schedulers.len(), sc.workload.apps.len());
    let win = m.window_ms();
    let windows: Vec<usize> = (0..m.windows())
        .filter(|&w| {
            let t = w as f64 * win;
            t >= from_ms && t < to_ms
        })
        .collect();
    let span_s = windows.len() as f64 * win / 1000.0;
    let mut out = vec![0.0; ns * na];
    if span_s <= 0.0 {
        return out;
    }
    for s in 0..ns {
        for a in 0..na {
            let n: u64 = windows.iter().map(|&w| m.get(w, s, a).offered).sum();
            out[s * na + a] = n as f64 / span_s;
        }
    }
    out
}

/// Steps `sim` through its reporting windows, reallocating at every slot boundary (the
/// topology file's deployment until the first), then finishes it.
pub fn run(
    mut sim: Simulation,
    allocator: &str,
    slot_s: f64,
    model: continuum_alloc::placement::ModelOptions,
    window_s: f64,
    steps: u64,
    bar: &ProgressBar,
) -> Result<(Simulation, AllocationReport)> {
    check_allocator(allocator)?;
    let sc = sim.scenario().clone();
    let slots = (sim.horizon_ms() / (slot_s * 1000.0)).ceil() as u64;
    let mut placement = match allocator {
        "static" => None,
        name => Some(
            Placement::new(&sc, name, model, slots, None)
                .map_err(|m| anyhow!("--allocators: {m}"))?,
        ),
    };
    let slot_ms = slot_s * 1000.0;
    let mut next_slot = slot_ms;
    let mut changes = 0u64;
    let mut current: Vec<u32> = sc.fleet.workers.iter().map(|w| w.replicas).collect();
    for k in 1..=steps {
        let end = k as f64 * window_s * 1000.0;
        while let Some(p) = placement.as_mut().filter(|_| next_slot <= end) {
            if next_slot >= sim.horizon_ms() {
                break;
            }
            sim.run_until(next_slot);
            let demand = offered_qps(&sim, next_slot - slot_ms, next_slot);
            let want = p.step(&sc, &demand);
            changes += want
                .iter()
                .zip(&current)
                .map(|(a, b)| u64::from(a.abs_diff(*b)))
                .sum::<u64>();
            sim.set_deployment(&want);
            current = want;
            next_slot += slot_ms;
        }
        sim.run_until(end);
        bar.inc(1);
    }
    sim.finish();
    let mean_reward = placement
        .as_ref()
        .filter(|p| !p.rewards.is_empty())
        .map(|p| p.rewards.iter().sum::<f64>() / p.rewards.len() as f64);
    let report = AllocationReport {
        allocator: allocator.to_string(),
        slot_s,
        mean_reward,
        eta0: placement
            .as_ref()
            .filter(|p| p.allocator().starts_with("oga"))
            .map(|p| match p.step {
                continuum_alloc::alloc::StepSize::Geometric { eta0, .. }
                | continuum_alloc::alloc::StepSize::InvSqrt { eta0 } => eta0,
            }),
        replica_changes: changes,
        rebound: sim.stats().rebound,
    };
    Ok((sim, report))
}
