//! Which (variant, cluster) bindings can serve a stream (docs/model.md §5), as a list of candidates
//! with the figures the dispatch policies rank them by.

mod fleet;

pub use fleet::{BALANCED_RESOURCES, Fleet, WorkerInfo};

use crate::load::LoadView;
use crate::profiles::TaskId;
use crate::topology::Reach;

/// What a new stream asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Demand {
    /// Task.
    pub task: TaskId,
    /// Frame rate ρ_i, qps.
    pub rate_qps: f64,
    /// Query size ζ_i, KB.
    pub frame_kb: f64,
    /// Transmission time t_i, ms.
    pub tx_ms: f64,
    /// One-way access delay δ_i, ms.
    pub access_ms: f64,
    /// Max end-to-end delay D^i, ms.
    pub max_delay_ms: f64,
    /// Min accuracy A^i.
    pub min_accuracy: f64,
    /// Items per query (1 for the simulator's frames): a variant whose batch size B_v is
    /// smaller cannot serve it, and the load it brings is items × ρ_i.
    pub items: u32,
}

/// A feasible binding and the figures policies rank it by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    /// Worker index.
    pub worker: u32,
    /// Cluster index.
    pub cluster: u32,
    /// Variant index.
    pub variant: u32,
    /// d_n^s + 2σ_n^s, ms.
    pub net_ms: f64,
    /// e2e(v, n) = 2(d_n^s + 2σ_n^s) + D_v(ζ_i), ms.
    pub e2e_ms: f64,
    /// L_vn(t) as seen, normalised qps.
    pub load_qps: f64,
    /// Capacity C of the worker, normalised qps.
    pub capacity_qps: f64,
    /// The load the stream would bring to this worker, η_v^i · ρ_i · items, normalised qps
    /// (the term of the load constraint; it differs between workers through ζ_ref(v)).
    pub demand_qps: f64,
    /// Its cluster's busy (cpu, memory) shares once the stream is placed here (docs/model.md
    /// §6, `balanced-allocation`): filled by [`crate::dispatch::bind`] only for a policy that
    /// reads them ([`crate::policy::Policy::uses_cluster_shares`]), else 0.
    pub cluster_shares: [f64; 2],
}

impl Candidate {
    /// Copies of the stream's demand that this worker's free capacity holds,
    /// ⌊(C − L) / demand⌋, at least 1 (the worker is feasible, so one copy fits); 1 for a stream
    /// that brings no load. The `headroom` rule's cluster score and TapFinger's prior Pr(n)
    /// (docs/model.md §6, §15) both count them.
    #[inline]
    pub fn copies(&self) -> f64 {
        if self.demand_qps > 0.0 {
            ((self.capacity_qps - self.load_qps).max(0.0) / self.demand_qps)
                .floor()
                .max(1.0)
        } else {
            1.0
        }
    }
}

/// How many reachable workers failed each constraint (the first one failed counts), so an
/// empty result can name what no candidate met.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shortfall {
    /// Workers that serve another task.
    pub task: u32,
    /// Workers whose model is not accurate enough.
    pub accuracy: u32,
    /// Workers too far or too slow for the deadline.
    pub latency: u32,
    /// Workers without spare capacity.
    pub load: u32,
    /// Workers whose batch size is below the query's items.
    pub batch: u32,
}

impl Shortfall {
    /// The constraint that ruled out the candidates that got furthest (checked in the order
    /// task, accuracy, batch, latency, load), for messages.
    pub fn binding_constraint(&self) -> &'static str {
        if self.load > 0 {
            "load"
        } else if self.batch > 0 {
            "batch"
        } else if self.latency > 0 {
            "latency"
        } else if self.accuracy > 0 {
            "accuracy"
        } else if self.task > 0 {
            "task"
        } else {
            "no reachable worker"
        }
    }
}

/// The latency bound of constraint 3, for a worker `net` away that takes `proc_ms`:
/// 2(δ_i + d + 2σ) + t_i + D_v(ζ_i).
#[inline]
pub fn latency_bound_ms(d: &Demand, reach: &Reach, proc_ms: f64) -> f64 {
    2.0 * (d.access_ms + reach.net_ms()) + d.tx_ms + proc_ms
}

/// Fills `out` with every feasible binding for `d` among the workers in `reach` (kept in the
/// order of `reach`) and returns how the others fell short. `out` is cleared first; reuse it
/// across calls to avoid allocation.
///
/// `reach` is ordered by net distance, nearest first (as [`crate::topology::Scheduler::reach`]
/// and the gateway's live list are), so the workers too far for the deadline even with no
/// processing time form a tail that is skipped in one step: a binding costs the candidates
/// within reach of the stream's deadline, not the size of the topology. They count as
/// failing the latency constraint.
pub fn feasible(
    d: &Demand,
    reach: &[Reach],
    fleet: &Fleet,
    view: &LoadView,
    out: &mut Vec<Candidate>,
) -> Shortfall {
    out.clear();
    let mut short = Shortfall::default();
    debug_assert!(
        reach.is_sorted_by(|a, b| a.net_ms() <= b.net_ms()),
        "reach lists are ordered by net distance"
    );
    // Processing takes no negative time, so where the network alone breaks the bound, every
    // farther worker does too (the same arithmetic as `latency_bound_ms`, monotone in net).
    let near = reach.partition_point(|r| latency_bound_ms(d, r, 0.0) <= d.max_delay_ms);
    short.latency = (reach.len() - near) as u32;
    for r in &reach[..near] {
        let w = &fleet.workers[r.worker as usize];
        if w.task != d.task {
            short.task += 1;
            continue;
        }
        if w.accuracy < d.min_accuracy {
            short.accuracy += 1;
            continue;
        }
        if d.items > w.batch {
            short.batch += 1;
            continue;
        }
        let proc_ms = w.base_ms + w.per_kb_ms * d.frame_kb;
        if latency_bound_ms(d, r, proc_ms) > d.max_delay_ms {
            short.latency += 1;
            continue;
        }
        let load = view.workers[r.worker as usize].load_qps;
        let demand = d.frame_kb / w.ref_kb * d.rate_qps * f64::from(d.items);
        if load + demand > w.capacity_qps {
            short.load += 1;
            continue;
        }
        out.push(Candidate {
            worker: r.worker,
            cluster: r.cluster,
            variant: r.variant,
            net_ms: r.net_ms(),
            e2e_ms: 2.0 * r.net_ms() + proc_ms,
            load_qps: load,
            capacity_qps: w.capacity_qps,
            demand_qps: demand,
            cluster_shares: [0.0; 2],
        });
    }
    short
}

#[cfg(test)]
mod tests;
