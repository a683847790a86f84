//! Agent observations padded into dense tensors: `P` pending streams, `K` allocation choices and
//! `E` competitor edges per stream, the largest in the batch; masks say which entries are real
//! (TapFinger's dummy nodes).

use candle_core::{Device, Result, Tensor};
use continuum_infer::tapfinger::features::{
    AgentObs, CLUSTER_FEATURES, EDGE_FEATURES, PENDING_FEATURES, WORKER_FEATURES,
};

/// A batch of padded observations.
#[derive(Debug)]
pub struct ObsBatch {
    /// `[B, Fc]`.
    pub cluster: Tensor,
    /// `[B, Fc]`.
    pub shortcut: Tensor,
    /// `[B, P, Fp]`.
    pub pending: Tensor,
    /// `[B, P]`, 1 for a real stream.
    pub pending_mask: Tensor,
    /// `[B, P, K, Fw]`.
    pub workers: Tensor,
    /// `[B, P, K]`.
    pub worker_mask: Tensor,
    /// `[B, P, E, Fe]`.
    pub edges: Tensor,
    /// `[B, P, E]`.
    pub edge_mask: Tensor,
    /// P, K, E.
    pub dims: (usize, usize, usize),
}

impl ObsBatch {
    /// Pads `obs` (at least one, each with at least one stream) into a batch.
    pub fn new(obs: &[&AgentObs]) -> Result<Self> {
        let b = obs.len();
        let p = obs
            .iter()
            .map(|o| o.pending.len())
            .max()
            .unwrap_or(1)
            .max(1);
        let k = obs
            .iter()
            .flat_map(|o| o.workers.iter().map(Vec::len))
            .max()
            .unwrap_or(1)
            .max(1);
        let e = obs
            .iter()
            .flat_map(|o| o.edges.iter().map(Vec::len))
            .max()
            .unwrap_or(1)
            .max(1);
        let mut cluster = Vec::with_capacity(b * CLUSTER_FEATURES);
        let mut shortcut = Vec::with_capacity(b * CLUSTER_FEATURES);
        let mut pending = vec![0f32; b * p * PENDING_FEATURES];
        let mut pmask = vec![0f32; b * p];
        let mut workers = vec![0f32; b * p * k * WORKER_FEATURES];
        let mut wmask = vec![0f32; b * p * k];
        let mut edges = vec![0f32; b * p * e * EDGE_FEATURES];
        let mut emask = vec![0f32; b * p * e];
        for (i, o) in obs.iter().enumerate() {
            cluster.extend_from_slice(&o.cluster);
            shortcut.extend_from_slice(&o.shortcut);
            for (j, x) in o.pending.iter().enumerate() {
                let at = i * p + j;
                pending[at * PENDING_FEATURES..(at + 1) * PENDING_FEATURES].copy_from_slice(x);
                pmask[at] = 1.0;
                for (kk, w) in o.workers[j].iter().enumerate() {
                    let at = (i * p + j) * k + kk;
                    workers[at * WORKER_FEATURES..(at + 1) * WORKER_FEATURES].copy_from_slice(w);
                    wmask[at] = 1.0;
                }
                for (ee, x) in o.edges[j].iter().enumerate() {
                    let at = (i * p + j) * e + ee;
                    edges[at * EDGE_FEATURES..(at + 1) * EDGE_FEATURES].copy_from_slice(x);
                    emask[at] = 1.0;
                }
            }
        }
        let dev = &Device::Cpu;
        Ok(Self {
            cluster: Tensor::from_vec(cluster, (b, CLUSTER_FEATURES), dev)?,
            shortcut: Tensor::from_vec(shortcut, (b, CLUSTER_FEATURES), dev)?,
            pending: Tensor::from_vec(pending, (b, p, PENDING_FEATURES), dev)?,
            pending_mask: Tensor::from_vec(pmask, (b, p), dev)?,
            workers: Tensor::from_vec(workers, (b, p, k, WORKER_FEATURES), dev)?,
            worker_mask: Tensor::from_vec(wmask, (b, p, k), dev)?,
            edges: Tensor::from_vec(edges, (b, p, e, EDGE_FEATURES), dev)?,
            edge_mask: Tensor::from_vec(emask, (b, p, e), dev)?,
            dims: (p, k, e),
        })
    }
}
