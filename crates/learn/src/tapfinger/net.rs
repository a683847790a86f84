//! The TapFinger network, in candle: a heterogeneous-graph attention encoder (HAN: node-level
//! attention along each meta-path, then semantic attention across meta-paths), a pointer over
//! the agent's pending streams (plus a void choice), a masked allocation head over the chosen
//! stream's feasible workers, and a value head (MAPPO's per-agent critic). Parameters are shared
//! by every agent, so one checkpoint serves any number of clusters.
//!
//! Meta-paths of a pending stream p at agent n: p–W (the workers of n that can serve p), p–C
//! (the other clusters p is eligible at), p–A (n's own node and the shortcut node). A second
//! layer lets the agent's pending streams attend to each other (p–n–p).

use super::batch::ObsBatch;
use candle_core::{D, DType, Device, Result, Tensor};
use candle_nn::{Linear, Module, VarBuilder, VarMap, linear, linear_no_bias};

use continuum_infer::tapfinger::TapNetShape;

/// What a masked entry is pushed down by before a softmax.
const MASKED: f64 = 1e9;

/// The network's outputs for a batch of agent observations.
#[derive(Debug)]
pub struct TapOut {
    /// Pointer logits `[B, P + 1]`, the last column the void choice; masked entries ≈ −1e9.
    pub pointer: Tensor,
    /// Allocation logits `[B, P, K]`; masked entries ≈ −1e9.
    pub alloc: Tensor,
    /// State values `[B]`.
    pub value: Tensor,
}

#[derive(Clone)]
struct Attn {
    q: Linear,
    k: Linear,
    v: Linear,
}

impl Attn {
    fn new(h: usize, vb: VarBuilder) -> Result<Self> {
        Ok(Self {
            q: linear_no_bias(h, h, vb.pp("q"))?,
            k: linear_no_bias(h, h, vb.pp("k"))?,
            v: linear_no_bias(h, h, vb.pp("v"))?,
        })
    }

    /// Node-level attention of `[B, P, H]` queries over their `[B, P, N, H]` neighbours with
    /// mask `[B, P, N]`: `[B, P, H]`, zero for a node without neighbours.
    fn over(&self, x: &Tensor, nb: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let h = x.dim(D::Minus1)? as f64;
        let q = self.q.forward(x)?.unsqueeze(2)?; // [B,P,1,H]
        let k = self.k.forward(nb)?;
        let v = self.v.forward(nb)?;
        let scores = (q.broadcast_mul(&k)?.sum(D::Minus1)? / h.sqrt())?; // [B,P,N]
        let a = masked_softmax(&scores, mask)?;
        let z = a.unsqueeze(D::Minus1)?.broadcast_mul(&v)?.sum(2)?; // [B,P,H]
        let any = mask.max_keepdim(D::Minus1)?; // [B,P,1]
        z.broadcast_mul(&any)
    }
}

/// Softmax over the last axis with entries where `mask` is 0 left out (an all-masked row is
/// uniform; callers zero its result).
pub fn masked_softmax(x: &Tensor, mask: &Tensor) -> Result<Tensor> {
    candle_nn::ops::softmax_last_dim(&mask_logits(x, mask)?)
}

/// `x` where `mask` is 1, ≈ −1e9 where it is 0.
pub fn mask_logits(x: &Tensor, mask: &Tensor) -> Result<Tensor> {
    x.add(&((mask - 1.0)? * MASKED)?)
}

/// The TapFinger network.
#[derive(Clone)]
pub struct TapNet {
    shape: TapNetShape,
    enc_c: Linear,
    enc_s: Linear,
    enc_p: Linear,
    enc_w: Linear,
    enc_e: Linear,
    att_w: Attn,
    att_e: Attn,
    sem_w: Linear,
    sem_q: Linear,
    l1: Linear,
    att_p: Attn,
    l2: Linear,
    ctx: Linear,
    ptr_j: Linear,
    ptr_g: Linear,
    ptr_v: Linear,
    void: Tensor,
    al_w: Linear,
    al_j: Linear,
    al_v: Linear,
    v1: Linear,
    v2: Linear,
}

impl TapNet {
    /// Builds the layers on `vb`.
    pub fn new(shape: TapNetShape, vb: VarBuilder) -> Result<Self> {
        let h = shape.hidden;
        let [fc, fp, fw, fe] = shape.features.widths();
        Ok(Self {
            enc_c: linear(fc, h, vb.pp("enc_c"))?,
            enc_s: linear(fc, h, vb.pp("enc_s"))?,
            enc_p: linear(fp, h, vb.pp("enc_p"))?,
            enc_w: linear(fw, h, vb.pp("enc_w"))?,
            enc_e: linear(fe, h, vb.pp("enc_e"))?,
            att_w: Attn::new(h, vb.pp("att_w"))?,
            att_e: Attn::new(h, vb.pp("att_e"))?,
            sem_w: linear(h, h, vb.pp("sem_w"))?,
            sem_q: linear_no_bias(h, 1, vb.pp("sem_q"))?,
            l1: linear(2 * h, h, vb.pp("l1"))?,
            att_p: Attn::new(h, vb.pp("att_p"))?,
            l2: linear(2 * h, h, vb.pp("l2"))?,
            ctx: linear(3 * h, h, vb.pp("ctx"))?,
            ptr_j: linear_no_bias(h, h, vb.pp("ptr_j"))?,
            ptr_g: linear(h, h, vb.pp("ptr_g"))?,
            ptr_v: linear_no_bias(h, 1, vb.pp("ptr_v"))?,
            void: vb.get(h, "void")?,
            al_w: linear_no_bias(h, h, vb.pp("al_w"))?,
            al_j: linear(h, h, vb.pp("al_j"))?,
            al_v: linear_no_bias(h, 1, vb.pp("al_v"))?,
            v1: linear(2 * h, h, vb.pp("v1"))?,
            v2: linear(h, 1, vb.pp("v2"))?,
            shape,
        })
    }

    /// The network's settings.
    pub fn shape(&self) -> TapNetShape {
        self.shape
    }

    /// Pointer, allocation and value outputs for a batch.
    pub fn forward(&self, b: &ObsBatch) -> Result<TapOut> {
        let ec = self.enc_c.forward(&b.cluster)?.relu()?; // [B,H]
        let es = self.enc_s.forward(&b.shortcut)?.relu()?; // [B,H]
        let ep = self.enc_p.forward(&b.pending)?.relu()?; // [B,P,H]
        let ew = self.enc_w.forward(&b.workers)?.relu()?; // [B,P,K,H]
        let ee = self.enc_e.forward(&b.edges)?.relu()?; // [B,P,E,H]
        let (n, p, h) = ep.dims3()?;
        let mp = &b.pending_mask; // [B,P]
        let mp3 = mp.unsqueeze(D::Minus1)?; // [B,P,1]
        let count = mp.sum_keepdim(1)?.clamp(1.0, f64::INFINITY)?; // [B,1]
        let h2 = if self.shape.han {
            let zw = self.att_w.over(&ep, &ew, &b.worker_mask)?;
            let ze = self.att_e.over(&ep, &ee, &b.edge_mask)?;
            let za = ec.add(&es)?.unsqueeze(1)?.broadcast_as((n, p, h))?;
            // Semantic attention: one weight per meta-path per agent, from the mean over its
            // streams of q·tanh(W z).
            let paths = [zw, ze, za];
            let mut scores = Vec::with_capacity(3);
            for z in &paths {
                let s = self.sem_q.forward(&self.sem_w.forward(z)?.tanh()?)?; // [B,P,1]
                let s = s.broadcast_mul(&mp3)?.sum(1)?.broadcast_div(&count)?; // [B,1]
                scores.push(s);
            }
            let beta = candle_nn::ops::softmax_last_dim(&Tensor::cat(&scores, 1)?)?; // [B,3]
            let mut z = paths[0].broadcast_mul(&beta.narrow(1, 0, 1)?.unsqueeze(2)?)?;
            for (m, path) in paths.iter().enumerate().skip(1) {
                z = z.add(&path.broadcast_mul(&beta.narrow(1, m, 1)?.unsqueeze(2)?)?)?;
            }
            let h1 = self.l1.forward(&Tensor::cat(&[&ep, &z], 2)?)?.relu()?;
            // The agent's streams attend to each other.
            let keys = h1.unsqueeze(1)?.broadcast_as((n, p, p, h))?.contiguous()?;
            let kmask = mp.unsqueeze(1)?.broadcast_as((n, p, p))?.contiguous()?;
            let zp = self.att_p.over(&h1, &keys, &kmask)?;
            self.l2.forward(&Tensor::cat(&[&h1, &zp], 2)?)?.relu()?
        } else {
            let mean = |x: &Tensor, m: &Tensor| -> Result<Tensor> {
                let m4 = m.unsqueeze(D::Minus1)?;
                let c = m.sum_keepdim(D::Minus1)?.clamp(1.0, f64::INFINITY)?;
                x.broadcast_mul(&m4)?.sum(2)?.broadcast_div(&c)
            };
            let zw = mean(&ew, &b.worker_mask)?;
            let ze = mean(&ee, &b.edge_mask)?;
            let za = ec.add(&es)?.unsqueeze(1)?.broadcast_as((n, p, h))?;
            let z = zw.add(&ze)?.add(&za)?;
            let h1 = self.l1.forward(&Tensor::cat(&[&ep, &z], 2)?)?.relu()?;
            self.l2.forward(&Tensor::cat(&[&h1, &h1], 2)?)?.relu()?
        };
        let h2 = h2.broadcast_mul(&mp3)?;
        let pooled = h2.sum(1)?.broadcast_div(&count)?; // [B,H]
        let g = self
            .ctx
            .forward(&Tensor::cat(&[&ec, &es, &pooled], 1)?)?
            .relu()?; // [B,H]
        let gp = self.ptr_g.forward(&g)?.unsqueeze(1)?; // [B,1,H]
        let uj = self
            .ptr_v
            .forward(&self.ptr_j.forward(&h2)?.broadcast_add(&gp)?.tanh()?)?
            .squeeze(D::Minus1)?; // [B,P]
        let vj = self.ptr_j.forward(&self.void.unsqueeze(0)?)?; // [1,H]
        let uv = self
            .ptr_v
            .forward(&vj.broadcast_add(&gp.squeeze(1)?)?.tanh()?)?; // [B,1]
        let ones = Tensor::ones((n, 1), DType::F32, &Device::Cpu)?;
        let pmask = Tensor::cat(&[mp, &ones], 1)?;
        let pointer = mask_logits(&Tensor::cat(&[&uj, &uv], 1)?, &pmask)?;
        let aj = self.al_j.forward(&h2)?.unsqueeze(2)?; // [B,P,1,H]
        let alloc = self
            .al_v
            .forward(&self.al_w.forward(&ew)?.broadcast_add(&aj)?.tanh()?)?
            .squeeze(D::Minus1)?; // [B,P,K]
        let alloc = mask_logits(&alloc, &b.worker_mask)?;
        let value = self
            .v2
            .forward(&self.v1.forward(&Tensor::cat(&[&g, &es], 1)?)?.relu()?)?
            .squeeze(D::Minus1)?;
        Ok(TapOut {
            pointer,
            alloc,
            value,
        })
    }
}

/// A var map with a network of `shape` on the CPU, weights drawn from `seed`.
pub fn build(shape: TapNetShape, seed: u64) -> Result<(VarMap, TapNet)> {
    let vm = VarMap::new();
    let net = TapNet::new(
        shape,
        VarBuilder::from_varmap(&vm, DType::F32, &Device::Cpu),
    )?;
    crate::agent::init_weights(&vm, seed)?;
    Ok((vm, net))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::weights_of;
    use continuum_core::rng::{Purpose, stream_rng};
    use continuum_infer::tapfinger::FastTapNet;
    use continuum_infer::tapfinger::features::{AgentObs, TapFeatures, random_obs};

    fn close(a: f32, b: f32) -> bool {
        (a - b).abs() <= 1e-5 * a.abs().max(1.0)
    }

    /// On a matrix of random graphs (with and without HAN, several widths), the plain pointer
    /// and allocation logits the agents decide with equal the candle forward's within 1e-5.
    #[test]
    fn the_plain_forward_equals_candles() {
        let mut rng = stream_rng(5, Purpose::Other, 0, 0);
        for (seed, hidden, han, features) in [
            (1, 16, true, TapFeatures::Base),
            (2, 32, true, TapFeatures::Rules),
            (3, 24, false, TapFeatures::Rules),
            (4, 64, true, TapFeatures::Base),
        ] {
            let shape = TapNetShape {
                hidden,
                han,
                features,
            };
            let (vm, net) = build(shape, seed).unwrap();
            let fast = FastTapNet::read(shape, &weights_of(&vm).unwrap()).unwrap();
            let graphs: Vec<AgentObs> = (0..12).map(|_| random_obs(&mut rng)).collect();
            let refs: Vec<&AgentObs> = graphs.iter().collect();
            let out = net
                .forward(&ObsBatch::new(&refs, features).unwrap())
                .unwrap();
            let pointer = out.pointer.to_vec2::<f32>().unwrap();
            let alloc = out.alloc.to_vec3::<f32>().unwrap();
            for (b, o) in graphs.iter().enumerate() {
                let f = fast.pointer(o);
                let n = o.pending.len();
                let want: Vec<f32> = pointer[b][..n]
                    .iter()
                    .chain(pointer[b].last())
                    .copied()
                    .collect();
                assert_eq!(f.pointer.len(), n + 1);
                for (i, (w, g)) in want.iter().zip(&f.pointer).enumerate() {
                    assert!(
                        close(*w, *g),
                        "han {han}, graph {b}, pointer {i}: {w} vs {g}"
                    );
                }
                for (j, workers) in o.workers.iter().enumerate() {
                    let k = workers.len();
                    let got = fast.alloc(&f, j);
                    assert_eq!(got.len(), k);
                    for (kk, (w, g)) in alloc[b][j][..k].iter().zip(&got).enumerate() {
                        assert!(
                            close(*w, *g),
                            "han {han}, graph {b}, offer {j}, worker {kk}"
                        );
                    }
                }
            }
        }
    }
}
