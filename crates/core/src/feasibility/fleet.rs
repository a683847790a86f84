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
}

impl WorkerInfo {
    /// Processing delay of one batch whose largest query is `size_kb`.
    #[inline]
    pub fn delay_ms(&self, size_kb: f64) -> f64 {
        self.base_ms + self.per_kb_ms * size_kb
    }
}

/// Every worker's static facts, indexed like [`Topology::workers`].
#[derive(Debug, Clone, Default)]
pub struct Fleet {
    /// Per worker.
    pub workers: Vec<WorkerInfo>,
}

impl Fleet {
    /// Flattens a topology's workers with their variants' figures.
    pub fn new(topology: &Topology, profiles: &Profiles) -> Self {
        let workers = topology
            .workers
            .iter()
            .map(|w| {
                let v = &profiles.variants[w.variant];
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
                }
            })
            .collect();
        Self { workers }
    }
}
