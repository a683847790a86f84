//! The streams of a run as the bound sees them: each one's queries per time slice and, for every
//! worker feasible for it at zero load (docs/model.md §5's constraints, the load one against an
//! idle view), the processing time one of its queries needs there.

use continuum_core::feasibility::feasible;
use continuum_core::load::LoadView;
use continuum_core::scenario::Scenario;
use continuum_core::workload::emission::ClientArrivals;

/// One stream of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundStream {
    /// Queries it emits.
    pub queries: u64,
    /// (slice, queries emitted in it), slices ascending, none empty.
    pub per_slice: Vec<(u32, u32)>,
    /// (worker, processing time one query needs there, ms) for every worker that can serve it.
    pub workers: Vec<(u32, f64)>,
    /// Its deadline D^i, ms: a query that succeeds is processed before its emission + this, so
    /// its work can spill at most this far past the end of the slice it was emitted in.
    pub deadline_ms: f64,
}

/// Every stream of a run of `sc` with `seed` over `horizon_ms`, scheduler by scheduler, with
/// the simulator's draws; emissions counted in slices of `slice_ms`. A query of size ζ on
/// worker w needs D_v(ζ) · slowdown_w / B_v of one replica's time: a batch takes D_v of its
/// largest query, at least the mean of its queries' D_v, and holds at most B_v queries, so no
/// schedule spends less per query.
pub fn bound_streams(
    sc: &Scenario,
    seed: u64,
    horizon_ms: f64,
    slice_ms: f64,
    slowdown: &[f64],
) -> Vec<BoundStream> {
    let idle = LoadView::idle(sc.fleet.workers.len());
    let jitter = sc.workload.jitter;
    let mut scratch = Vec::new();
    let mut out = Vec::new();
    for (s, sched) in sc.topology.schedulers.iter().enumerate() {
        for client in ClientArrivals::new(&sc.workload, seed, s as u64, horizon_ms) {
            let mut emission = client.emission(seed, s as u64, horizon_ms);
            let mut per_slice: Vec<(u32, u32)> = Vec::new();
            let mut queries = 0u64;
            while let Some(t) = emission.next(jitter) {
                queries += 1;
                let k = (t / slice_ms) as u32;
                match per_slice.last_mut() {
                    Some(last) if last.0 == k => last.1 += 1,
                    _ => per_slice.push((k, 1)),
                }
            }
            if queries == 0 {
                continue;
            }
            let p = &client.params;
            feasible(&p.demand, &sched.reach, &sc.fleet, &idle, &mut scratch);
            let workers = scratch
                .iter()
                .map(|c| {
                    let w = &sc.fleet.workers[c.worker as usize];
                    let slow = slowdown.get(c.worker as usize).copied().unwrap_or(1.0);
                    (
                        c.worker,
                        w.delay_ms(p.demand.frame_kb) * slow / f64::from(w.batch),
                    )
                })
                .collect();
            out.push(BoundStream {
                queries,
                per_slice,
                workers,
                deadline_ms: p.demand.max_delay_ms,
            });
        }
    }
    out
}
