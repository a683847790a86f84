//! The per-worker facts feasibility needs, flattened from topology and profiles for speed.

use crate::profiles::{Profiles, TaskId};
use crate::topology::Topology;

/// Static facts of one worker (variant × cluster).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorkerInfo {
    /// Task of its model.
    pub task: TaskId,
    /// Accuracy of its model.
    pub accuracy: f64,
    /// Batch delay: fixed part, ms.
    pub base_ms: f64,
    /// Batch delay: per KB, ms.
    pub per_kb_ms: f64,
    /// Reference input size ζ_ref, KB.
    pub ref_kb: f64,
    /// Capacity: replicas × C_v, normalised qps.
    pub capacity_qps: f64,
    /// Batch size B_v.
    pub batch: u32,
    /// Replicas (parallel servers).
    pub replicas: u32,
    /// Cluster index.
    pub cluster: u32,
    /// Variant index.
    pub variant: u32,
    /// The shares of its cluster's `cpu` and `mem_gb` ([`BALANCED_RESOURCES`]) that one
    /// normalised qps of load on it keeps busy: r_v[k] / (C_v · c_n[k]) — a replica busy a
    /// fraction u of the time holds u of its resource vector r_v. 0 where the variant needs
    /// none of the resource, the cluster has none, or C_v is 0.
    pub busy_share_per_qps: [f64; 2],
}

/// The two resources `balanced-allocation` balances, Kubernetes' pair (docs/model.md §6).
pub const BALANCED_RESOURCES: [&str; 2] = ["cpu", "mem_gb"];

impl WorkerInfo {
    /// Processing delay of one batch whose largest query is `frame_kb`.
    #[inline]
    pub fn delay_ms(&self, frame_kb: f64) -> f64 {
        self.base_ms + self.per_kb_ms * frame_kb
    }
}

/// Every worker's static facts, indexed like [`Topology::workers`].
#[derive(Debug, Clone, Default)]
pub struct Fleet {
    /// Per worker.
    pub workers: Vec<WorkerInfo>,
    /// Per cluster, its workers' indices.
    pub cluster_workers: Vec<Vec<u32>>,
}

impl Fleet {
    /// Flattens a topology's workers with their variants' figures.
    pub fn new(topology: &Topology, profiles: &Profiles) -> Self {
        let workers = topology
            .workers
            .iter()
            .map(|w| {
                let v = &profiles.variants[w.variant];
                let cluster = &topology.clusters[w.cluster];
                let per_qps = |k: &str| {
                    let need = v.resources.get(k).copied().unwrap_or(0.0);
                    let has = cluster.capacity.get(k).copied().unwrap_or(0.0);
                    if need > 0.0 && has > 0.0 && v.capacity_qps > 0.0 {
                        need / (v.capacity_qps * has)
                    } else {
                        0.0
                    }
                };
                WorkerInfo {
                    task: v.task,
                    accuracy: v.accuracy,
                    base_ms: v.base_ms,
                    per_kb_ms: v.per_kb_ms,
                    ref_kb: v.ref_kb,
                    capacity_qps: w.capacity_qps,
                    batch: v.batch,
                    replicas: w.replicas,
                    cluster: w.cluster as u32,
                    variant: w.variant as u32,
                    busy_share_per_qps: BALANCED_RESOURCES.map(per_qps),
                }
            })
            .collect();
        let mut cluster_workers = vec![Vec::new(); topology.clusters.len()];
        for (i, w) in topology.workers.iter().enumerate() {
            cluster_workers[w.cluster].push(i as u32);
        }
        Self {
            workers,
            cluster_workers,
        }
    }
}
