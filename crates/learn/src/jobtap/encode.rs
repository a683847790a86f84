//! An agent's graph in TapFinger's own problem (TapFinger §IV-B; docs/tapfinger.md §1): for
//! cluster n, its node e_n (free resources) and q_n (queue beyond the pending set), the
//! shortcut node, its running tasks O_n (allocation, type, elapsed time), its pending tasks
//! P_n (minimum requirement, type) that fit in what it has free, per pending task the
//! allocations it may give (the allocation head's choices, masked by the feasible range) and
//! the other clusters the task can reach (its competitors, with their share of eq. 11's prior).
//! Features are ratios to the paper's 16-unit cluster, so one network serves any number of
//! clusters.

use continuum_infer::tapfinger::features::{
    AgentObs, CLUSTER_FEATURES, EDGE_FEATURES, PENDING_FEATURES, RUNNING_FEATURES, WORKER_FEATURES,
};
use continuum_jobs::ml::claims::{copies, fitting};
use continuum_jobs::ml::task::{Alloc, MlTaskKind};
use continuum_jobs::ml::{MlRun, TaskState};

/// Units a feature is divided by: the synthetic cluster's 16 cores and 16 GPUs (TapFinger
/// §V-B1).
const UNIT: f32 = 16.0;
/// The CPU amounts the allocation head offers. Assumption: powers of two rather than all
/// 15 × 16 whole-unit pairs, so that a graph stays small enough to train on two cores; the
/// speed is concave, so the gaps at the large end cost the least, and the choice "everything
/// free" is always added (see [`choices`]).
const CPU_GRID: [u32; 4] = [2, 4, 8, 16];
/// The GPU amounts the allocation head offers (as [`CPU_GRID`]).
const GPU_GRID: [u32; 5] = [1, 2, 4, 8, 16];

/// One agent's graph and what its indices mean.
#[derive(Debug, Clone)]
pub struct JobsObs {
    /// The graph, as the network reads it.
    pub obs: AgentObs,
    /// Per pending node, the task.
    pub tasks: Vec<u32>,
    /// Per pending node, its allocation choices.
    pub allocs: Vec<Vec<Alloc>>,
}

/// The allocations task `j` may get on cluster `n` now: the grid's pairs within the task's
/// range and the free resources, and the largest valid allocation that fits ("everything
/// free", capped at the task's maximum); ascending, without repeats.
pub fn choices(run: &MlRun, n: u32, j: u32) -> Vec<Alloc> {
    let task = &run.tasks()[j as usize].spec.task;
    let free = run.free(n);
    let mut out: Vec<Alloc> = CPU_GRID
        .iter()
        .flat_map(|&c| GPU_GRID.iter().map(move |&g| Alloc::new(c, g)))
        .filter(|a| task.valid(a.cpu, a.gpu) && a.fits_in(free))
        .collect();
    let all = Alloc::new(free.cpu.min(task.max().cpu), free.gpu.min(task.max().gpu));
    if task.valid(all.cpu, all.gpu) && !out.contains(&all) {
        out.push(all);
    }
    out.sort_by_key(|a| (a.cpu, a.gpu));
    out
}

/// Cluster `n`'s node: free CPU share, free GPU share, CPU and GPU capacity over 16, the queue
/// beyond the pending set as ln(1 + q)/4.
fn cluster_node(run: &MlRun, n: u32) -> [f32; CLUSTER_FEATURES] {
    let (cap, free) = (run.capacity(n), run.free(n));
    [
        free.cpu as f32 / cap.cpu as f32,
        free.gpu as f32 / cap.gpu as f32,
        cap.cpu as f32 / UNIT,
        cap.gpu as f32 / UNIT,
        ((1.0 + run.queued_beyond(n) as f32).ln() / 4.0).min(2.0),
    ]
}

fn kind_bits(k: MlTaskKind) -> [f32; 2] {
    match k {
        MlTaskKind::Insensitive => [1.0, 0.0],
        MlTaskKind::Sensitive => [0.0, 1.0],
    }
}

/// Every cluster's graph with all its fitting pending tasks, in cluster order.
pub fn observe(run: &MlRun) -> Vec<JobsObs> {
    (0..run.clusters() as u32)
        .map(|c| observe_agent(run, c, &fitting(run, c)))
        .collect()
}

/// Cluster `c`'s graph with `offered` as its pending nodes (tasks of its pending set whose
/// minimum fits: all of them, or the one the ablations without the pointer pick).
pub fn observe_agent(run: &MlRun, c: u32, offered: &[u32]) -> JobsObs {
    let n = run.clusters() as u32;
    let nodes: Vec<_> = (0..n).map(|k| cluster_node(run, k)).collect();
    let mut shortcut = [0f32; CLUSTER_FEATURES];
    for x in &nodes {
        for (s, v) in shortcut.iter_mut().zip(x) {
            *s += v / n as f32;
        }
    }
    let now = run.now();
    let mut obs = AgentObs {
        cluster: nodes[c as usize],
        shortcut,
        ..AgentObs::default()
    };
    for t in run.tasks() {
        if let TaskState::Bound {
            cluster,
            alloc: Some(a),
        } = t.state
            && cluster == c
        {
            let [i, s] = kind_bits(t.spec.task.kind());
            let mut x = [0f32; RUNNING_FEATURES];
            x.copy_from_slice(&[
                a.cpu as f32 / UNIT,
                a.gpu as f32 / UNIT,
                i,
                s,
                t.elapsed(now) as f32 / UNIT,
            ]);
            obs.running.push(x);
        }
    }
    let mut allocs = Vec::with_capacity(offered.len());
    for &j in offered {
        let t = &run.tasks()[j as usize];
        let min = t.spec.task.min();
        let [i, s] = kind_bits(t.spec.task.kind());
        let mut p = [0f32; PENDING_FEATURES];
        p[..5].copy_from_slice(&[
            min.cpu as f32 / UNIT,
            min.gpu as f32 / UNIT,
            i,
            s,
            now.saturating_sub(t.spec.arrival) as f32 / UNIT,
        ]);
        obs.pending.push(p);
        let free = run.free(c);
        let ch = choices(run, c, j);
        obs.workers.push(
            ch.iter()
                .map(|a| {
                    let mut w = [0f32; WORKER_FEATURES];
                    w[..4].copy_from_slice(&[
                        a.cpu as f32 / UNIT,
                        a.gpu as f32 / UNIT,
                        a.cpu as f32 / free.cpu.max(1) as f32,
                        a.gpu as f32 / free.gpu.max(1) as f32,
                    ]);
                    w
                })
                .collect(),
        );
        obs.edges.push(competitors(run, c, j, &nodes));
        allocs.push(ch);
    }
    JobsObs {
        obs,
        tasks: offered.to_vec(),
        allocs,
    }
}

/// The other clusters task `j` can reach, seen from `c`: their node, their share of eq. 11's
/// prior (the copies of the task's minimum they hold over the sum over every reachable
/// cluster) and ln(1 + copies)/4.
fn competitors(
    run: &MlRun,
    c: u32,
    j: u32,
    nodes: &[[f32; CLUSTER_FEATURES]],
) -> Vec<[f32; EDGE_FEATURES]> {
    let t = &run.tasks()[j as usize];
    let min = t.spec.task.min();
    let room = |n: u32| f64::from(copies(run.free(n), min));
    let total: f64 = t
        .spec
        .eligible
        .iter()
        .map(|&n| room(n))
        .sum::<f64>()
        .max(1.0);
    t.spec
        .eligible
        .iter()
        .filter(|&&n| n != c)
        .map(|&n| {
            let mut e = [0f32; EDGE_FEATURES];
            e[..CLUSTER_FEATURES].copy_from_slice(&nodes[n as usize]);
            e[CLUSTER_FEATURES] = (room(n) / total) as f32;
            e[CLUSTER_FEATURES + 1] = ((1.0 + room(n)).ln() / 4.0) as f32;
            e
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use continuum_jobs::ml::MlSetting;

    #[test]
    fn choices_are_the_grid_within_range_and_room_plus_everything_free() {
        let mut s = MlSetting::synthetic(1, 50.0);
        s.eligible_p = 1.0;
        let mut run = MlRun::new(s, 1);
        run.admit();
        let j = run.pending(0)[0];
        // A fresh 16 × 16 cluster: the whole grid, (16, 16) included.
        assert_eq!(choices(&run, 0, j).len(), 4 * 5);
        run.interval().place(j, 0, Alloc::new(11, 13)).unwrap();
        let k = run.pending(0)[0];
        // (5, 3) free: cores 2, 4 × GPUs 1, 2, and (5, 3) itself.
        let ch = choices(&run, 0, k);
        assert_eq!(ch.len(), 5);
        assert!(ch.contains(&Alloc::new(5, 3)));
        assert!(ch.iter().all(|a| a.fits_in(Alloc::new(5, 3))));
    }

    #[test]
    fn the_graph_holds_running_pending_and_competitors() {
        let mut s = MlSetting::synthetic(3, 20.0);
        s.eligible_p = 1.0;
        let mut run = MlRun::new(s, 2);
        run.admit();
        let j = run.pending(1)[0];
        run.interval().place(j, 1, Alloc::new(8, 8)).unwrap();
        let obs = observe(&run);
        assert_eq!(obs.len(), 3);
        assert_eq!(obs[1].obs.running.len(), 1);
        assert_eq!(obs[1].obs.running[0][..2], [0.5, 0.5]);
        assert!(obs[0].obs.running.is_empty());
        assert_eq!(obs[0].obs.cluster[..2], [1.0, 1.0]);
        assert_eq!(obs[1].obs.cluster[..2], [0.5, 0.5]);
        // Ten pending tasks, each reaching the two other clusters.
        assert_eq!(obs[0].tasks.len(), 10);
        assert!(obs[0].obs.edges.iter().all(|e| e.len() == 2));
        assert!(!obs[0].tasks.contains(&j));
        // Offered one task (the ablations without the pointer), one pending node.
        let one = observe_agent(&run, 0, &obs[0].tasks[3..4]);
        assert_eq!(one.obs.pending.len(), 1);
        assert_eq!(one.tasks, vec![obs[0].tasks[3]]);
    }
}
