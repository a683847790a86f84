//! Agent observations padded into dense tensors: `P` pending streams, `K` allocation choices and
//! `E` competitor edges per stream, the largest in the batch; masks say which entries are real
//! (TapFinger's dummy nodes). A feature set with running-task nodes also gets `R` of them, the
//! most of any agent in the batch.

use candle_core::{Device, Result, Tensor};
use continuum_infer::tapfinger::features::{AgentObs, TapFeatures};

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
    /// `[B, R, Fr]`, the running tasks, for a feature set that has them (R at least 1).
    pub running: Option<Tensor>,
    /// `[B, R]`, 1 for a real running task, beside [`ObsBatch::running`].
    pub running_mask: Option<Tensor>,
    /// P, K, E.
    pub dims: (usize, usize, usize),
}

impl ObsBatch {
    /// Pads `obs` (at least one, each with at least one stream) into a batch of the features a
    /// network of `features` reads.
    pub fn new(obs: &[&AgentObs], features: TapFeatures) -> Result<Self> {
        let [fc, fp, fw, fe] = features.widths();
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
        let mut cluster = Vec::with_capacity(b * fc);
        let mut shortcut = Vec::with_capacity(b * fc);
        let mut pending = vec![0f32; b * p * fp];
        let mut pmask = vec![0f32; b * p];
        let mut workers = vec![0f32; b * p * k * fw];
        let mut wmask = vec![0f32; b * p * k];
        let mut edges = vec![0f32; b * p * e * fe];
        let mut emask = vec![0f32; b * p * e];
        for (i, o) in obs.iter().enumerate() {
            cluster.extend_from_slice(&o.cluster[..fc]);
            shortcut.extend_from_slice(&o.shortcut[..fc]);
            for (j, x) in o.pending.iter().enumerate() {
                let at = i * p + j;
                pending[at * fp..(at + 1) * fp].copy_from_slice(&x[..fp]);
                pmask[at] = 1.0;
                for (kk, w) in o.workers[j].iter().enumerate() {
                    let at = (i * p + j) * k + kk;
                    workers[at * fw..(at + 1) * fw].copy_from_slice(&w[..fw]);
                    wmask[at] = 1.0;
                }
                for (ee, x) in o.edges[j].iter().enumerate() {
                    let at = (i * p + j) * e + ee;
                    edges[at * fe..(at + 1) * fe].copy_from_slice(&x[..fe]);
                    emask[at] = 1.0;
                }
            }
        }
        let dev = &Device::Cpu;
        let (running, running_mask) = match running(obs, features.running_width())? {
            Some((x, m)) => (Some(x), Some(m)),
            None => (None, None),
        };
        Ok(Self {
            cluster: Tensor::from_vec(cluster, (b, fc), dev)?,
            shortcut: Tensor::from_vec(shortcut, (b, fc), dev)?,
            pending: Tensor::from_vec(pending, (b, p, fp), dev)?,
            pending_mask: Tensor::from_vec(pmask, (b, p), dev)?,
            workers: Tensor::from_vec(workers, (b, p, k, fw), dev)?,
            worker_mask: Tensor::from_vec(wmask, (b, p, k), dev)?,
            edges: Tensor::from_vec(edges, (b, p, e, fe), dev)?,
            edge_mask: Tensor::from_vec(emask, (b, p, e), dev)?,
            running,
            running_mask,
            dims: (p, k, e),
        })
    }
}

/// The running tasks of `obs`, `fr` features each, padded to the most of any agent (at least
/// one), and their mask; none when `fr` is 0 (a feature set without running-task nodes).
fn running(obs: &[&AgentObs], fr: usize) -> Result<Option<(Tensor, Tensor)>> {
    if fr == 0 {
        return Ok(None);
    }
    let b = obs.len();
    let r = obs
        .iter()
        .map(|o| o.running.len())
        .max()
        .unwrap_or(1)
        .max(1);
    let mut x = vec![0f32; b * r * fr];
    let mut m = vec![0f32; b * r];
    for (i, o) in obs.iter().enumerate() {
        for (j, t) in o.running.iter().enumerate() {
            let at = i * r + j;
            x[at * fr..(at + 1) * fr].copy_from_slice(&t[..fr]);
            m[at] = 1.0;
        }
    }
    let dev = &Device::Cpu;
    Ok(Some((
        Tensor::from_vec(x, (b, r, fr), dev)?,
        Tensor::from_vec(m, (b, r), dev)?,
    )))
}
