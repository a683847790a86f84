//! The TapFinger network, in candle: a heterogeneous-graph attention encoder (HAN: node-level
//! attention along each meta-path, then semantic attention across meta-paths), a pointer over
//! the agent's pending streams (plus a void choice), a masked allocation head over the chosen
//! stream's feasible workers, and a value head (MAPPO's per-agent critic). Parameters are shared
//! by every agent, so one checkpoint serves any number of clusters.
//!
//! Meta-paths of a pending stream p at agent n: p–W (the workers of n that can serve p), p–C
//! (the other clusters p is eligible at), p–A (n's own node and the shortcut node). A second
//! layer lets the agent's pending streams attend to each other (p–n–p). A feature set with
//! running-task nodes ([`TapFeatures::Jobs`]) adds their attention (their mean without HAN) to
//! the agent's cluster node, before anything reads it.

use super::batch::ObsBatch;
use candle_core::{D, DType, Device, Result, Tensor};
use candle_nn::{Linear, Module, VarBuilder, VarMap, linear, linear_no_bias};

use continuum_infer::tapfinger::TapNetShape;
#[cfg(doc)]
use continuum_infer::tapfinger::features::TapFeatures;

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

/// The mean of `x` over the axis `mask` ends with (`x` has one more, the features), entries
/// where `mask` is 0 left out; zero where every entry is.
fn masked_mean(x: &Tensor, mask: &Tensor) -> Result<Tensor> {
    let m = mask.unsqueeze(D::Minus1)?;
    let c = mask.sum_keepdim(D::Minus1)?.clamp(1.0, f64::INFINITY)?;
    x.broadcast_mul(&m)?.sum(mask.rank() - 1)?.broadcast_div(&c)
}

/// `x` where `mask` is 1, ≈ −1e9 where it is 0.
pub fn mask_logits(x: &Tensor, mask: &Tensor) -> Result<Tensor> {
    x.add(&((mask - 1.0)? * MASKED)?)
}

/// The running-task layers: their nodes' encoder and the cluster's attention over them.
#[derive(Clone)]
struct Running {
    enc: Linear,
    att: Attn,
}

/// The embeddings of a batch's nodes.
struct Nodes {
    /// The agent's cluster, with its running tasks `[B, H]`.
    ec: Tensor,
    /// The shortcut `[B, H]`.
    es: Tensor,
    /// The streams `[B, P, H]`.
    ep: Tensor,
    /// The allocation choices `[B, P, K, H]`.
    ew: Tensor,
    /// The competitor edges `[B, P, E, H]`.
    ee: Tensor,
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
    /// For a feature set with running-task nodes only (no variables otherwise).
    running: Option<Running>,
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
        let fr = shape.features.running_width();
        let running = if fr > 0 {
            Some(Running {
                enc: linear(fr, h, vb.pp("enc_r"))?,
                att: Attn::new(h, vb.pp("att_r"))?,
            })
        } else {
            None
        };
        Ok(Self {
            enc_c: linear(fc, h, vb.pp("enc_c"))?,
            enc_s: linear(fc, h, vb.pp("enc_s"))?,
            enc_p: linear(fp, h, vb.pp("enc_p"))?,
            enc_w: linear(fw, h, vb.pp("enc_w"))?,
            enc_e: linear(fe, h, vb.pp("enc_e"))?,
            running,
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
        let x = self.nodes(b)?;
        let h2 = if self.shape.han {
            self.han_streams(b, &x)?
        } else {
            self.mean_streams(b, &x)?
        };
        self.heads(b, &x, &h2)
    }

    /// The nodes' embeddings; the agent's cluster node with its running tasks' aggregate added
    /// (attention with HAN, their mean without), for a feature set that has them.
    fn nodes(&self, b: &ObsBatch) -> Result<Nodes> {
        let mut ec = self.enc_c.forward(&b.cluster)?.relu()?; // [B,H]
        if let Some(r) = &self.running {
            let (Some(x), Some(m)) = (&b.running, &b.running_mask) else {
                return Err(candle_core::Error::Msg(
                    "the network reads running tasks: the batch has none".into(),
                ));
            };
            let er = r.enc.forward(x)?.relu()?; // [B,R,H]
            let zr = if self.shape.han {
                r.att
                    .over(&ec.unsqueeze(1)?, &er.unsqueeze(1)?, &m.unsqueeze(1)?)?
                    .squeeze(1)?
            } else {
                masked_mean(&er, m)?
            }; // [B,H]
            ec = ec.add(&zr)?;
        }
        Ok(Nodes {
            ec,
            es: self.enc_s.forward(&b.shortcut)?.relu()?,
            ep: self.enc_p.forward(&b.pending)?.relu()?,
            ew: self.enc_w.forward(&b.workers)?.relu()?,
            ee: self.enc_e.forward(&b.edges)?.relu()?,
        })
    }

    /// The streams' final embeddings `[B, P, H]` with HAN: node-level attention along each
    /// meta-path, semantic attention across them, then the agent's streams attend to each other.
    fn han_streams(&self, b: &ObsBatch, x: &Nodes) -> Result<Tensor> {
        let (n, p, h) = x.ep.dims3()?;
        let mp = &b.pending_mask; // [B,P]
        let mp3 = mp.unsqueeze(D::Minus1)?; // [B,P,1]
        let count = mp.sum_keepdim(1)?.clamp(1.0, f64::INFINITY)?; // [B,1]
        let zw = self.att_w.over(&x.ep, &x.ew, &b.worker_mask)?;
        let ze = self.att_e.over(&x.ep, &x.ee, &b.edge_mask)?;
        let za = x.ec.add(&x.es)?.unsqueeze(1)?.broadcast_as((n, p, h))?;
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
        let h1 = self.l1.forward(&Tensor::cat(&[&x.ep, &z], 2)?)?.relu()?;
        // The agent's streams attend to each other.
        let keys = h1.unsqueeze(1)?.broadcast_as((n, p, p, h))?.contiguous()?;
        let kmask = mp.unsqueeze(1)?.broadcast_as((n, p, p))?.contiguous()?;
        let zp = self.att_p.over(&h1, &keys, &kmask)?;
        self.l2.forward(&Tensor::cat(&[&h1, &zp], 2)?)?.relu()
    }

    /// The streams' final embeddings `[B, P, H]` without HAN (the paper's ablation): an MLP over
    /// each stream's own features and the means of its neighbours'.
    fn mean_streams(&self, b: &ObsBatch, x: &Nodes) -> Result<Tensor> {
        let (n, p, h) = x.ep.dims3()?;
        let zw = masked_mean(&x.ew, &b.worker_mask)?;
        let ze = masked_mean(&x.ee, &b.edge_mask)?;
        let za = x.ec.add(&x.es)?.unsqueeze(1)?.broadcast_as((n, p, h))?;
        let z = zw.add(&ze)?.add(&za)?;
        let h1 = self.l1.forward(&Tensor::cat(&[&x.ep, &z], 2)?)?.relu()?;
        self.l2.forward(&Tensor::cat(&[&h1, &h1], 2)?)?.relu()
    }

    /// The pointer, allocation and value heads over the streams' embeddings `h2`.
    fn heads(&self, b: &ObsBatch, x: &Nodes, h2: &Tensor) -> Result<TapOut> {
        let n = x.ep.dim(0)?;
        let mp = &b.pending_mask; // [B,P]
        let count = mp.sum_keepdim(1)?.clamp(1.0, f64::INFINITY)?; // [B,1]
        let h2 = h2.broadcast_mul(&mp.unsqueeze(D::Minus1)?)?;
        let pooled = h2.sum(1)?.broadcast_div(&count)?; // [B,H]
        let g = self
            .ctx
            .forward(&Tensor::cat(&[&x.ec, &x.es, &pooled], 1)?)?
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
        let void = if self.shape.features.void() {
            Tensor::ones((n, 1), DType::F32, &Device::Cpu)?
        } else {
            Tensor::zeros((n, 1), DType::F32, &Device::Cpu)?
        };
        let pmask = Tensor::cat(&[mp, &void], 1)?;
        let pointer = mask_logits(&Tensor::cat(&[&uj, &uv], 1)?, &pmask)?;
        let aj = self.al_j.forward(&h2)?.unsqueeze(2)?; // [B,P,1,H]
        let alloc = self
            .al_v
            .forward(&self.al_w.forward(&x.ew)?.broadcast_add(&aj)?.tanh()?)?
            .squeeze(D::Minus1)?; // [B,P,K]
        let alloc = mask_logits(&alloc, &b.worker_mask)?;
        let value = self
            .v2
            .forward(&self.v1.forward(&Tensor::cat(&[&g, &x.es], 1)?)?.relu()?)?
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
    use continuum_infer::tapfinger::features::{
        AgentObs, TapFeatures, random_jobs_obs, random_obs,
    };

    fn close(a: f32, b: f32) -> bool {
        (a - b).abs() <= 1e-5 * a.abs().max(1.0)
    }

    /// On a matrix of random graphs (with and without HAN, several widths, every feature set;
    /// for the jobs' features some agents without running tasks, and a batch where none has
    /// any), the plain pointer and allocation logits the agents decide with equal the candle
    /// forward's within 1e-5.
    #[test]
    fn the_plain_forward_equals_candles() {
        let mut rng = stream_rng(5, Purpose::Other, 0, 0);
        // The last entry: graph `b` has no running task when `b` is a multiple of it.
        for (seed, hidden, han, features, idle) in [
            (1, 16, true, TapFeatures::Base, 1),
            (2, 32, true, TapFeatures::Rules, 1),
            (3, 24, false, TapFeatures::Rules, 1),
            (4, 64, true, TapFeatures::Base, 1),
            (5, 32, true, TapFeatures::Jobs, 4),
            (6, 24, false, TapFeatures::Jobs, 3),
            (7, 16, true, TapFeatures::Jobs, 1),
            (8, 16, false, TapFeatures::Jobs, 1),
        ] {
            let shape = TapNetShape {
                hidden,
                han,
                features,
            };
            let (vm, net) = build(shape, seed).unwrap();
            let fast = FastTapNet::read(shape, &weights_of(&vm).unwrap()).unwrap();
            let graphs: Vec<AgentObs> = (0..12)
                .map(|b| {
                    if features != TapFeatures::Jobs {
                        return random_obs(&mut rng);
                    }
                    let mut o = random_jobs_obs(&mut rng);
                    if b % idle == 0 {
                        o.running.clear();
                    }
                    o
                })
                .collect();
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
                        "{features:?}, han {han}, graph {b}, pointer {i}: {w} vs {g}"
                    );
                }
                for (j, workers) in o.workers.iter().enumerate() {
                    let k = workers.len();
                    let got = fast.alloc(&f, j);
                    assert_eq!(got.len(), k);
                    for (kk, (w, g)) in alloc[b][j][..k].iter().zip(&got).enumerate() {
                        assert!(
                            close(*w, *g),
                            "{features:?}, han {han}, graph {b}, offer {j}, worker {kk}"
                        );
                    }
                }
            }
        }
    }

    /// The variable names of a network of `features`, sorted.
    fn names(features: TapFeatures, han: bool) -> Vec<String> {
        let shape = TapNetShape {
            hidden: 8,
            han,
            features,
        };
        let (vm, _) = build(shape, 1).unwrap();
        let mut names: Vec<String> = weights_of(&vm)
            .unwrap()
            .iter()
            .map(|(n, _)| n.to_string())
            .collect();
        names.sort();
        names
    }

    /// The first feature sets' networks have exactly the variables they always had (so shipped
    /// checkpoints load as they are); the jobs' network has those and its running-task layers.
    #[test]
    fn only_the_jobs_network_has_running_task_variables() {
        let mut want: Vec<String> = [
            "al_j.bias",
            "al_j.weight",
            "al_v.weight",
            "al_w.weight",
            "ctx.bias",
            "ctx.weight",
            "enc_c.bias",
            "enc_c.weight",
            "enc_e.bias",
            "enc_e.weight",
            "enc_p.bias",
            "enc_p.weight",
            "enc_s.bias",
            "enc_s.weight",
            "enc_w.bias",
            "enc_w.weight",
            "l1.bias",
            "l1.weight",
            "l2.bias",
            "l2.weight",
            "ptr_g.bias",
            "ptr_g.weight",
            "ptr_j.weight",
            "ptr_v.weight",
            "sem_q.weight",
            "sem_w.bias",
            "sem_w.weight",
            "v1.bias",
            "v1.weight",
            "v2.bias",
            "v2.weight",
            "void",
        ]
        .iter()
        .map(|n| n.to_string())
        .chain(["att_e", "att_p", "att_w"].iter().flat_map(|a| {
            ["k", "q", "v"]
                .iter()
                .map(move |p| format!("{a}.{p}.weight"))
        }))
        .collect();
        want.sort();
        for han in [true, false] {
            assert_eq!(names(TapFeatures::Base, han), want);
            assert_eq!(names(TapFeatures::Rules, han), want);
        }
        want.extend(
            ["att_r.k.weight", "att_r.q.weight", "att_r.v.weight"]
                .iter()
                .chain(&["enc_r.bias", "enc_r.weight"])
                .map(|n| n.to_string()),
        );
        want.sort();
        for han in [true, false] {
            assert_eq!(names(TapFeatures::Jobs, han), want);
        }
    }

    /// A batch of the jobs' features holds the running tasks padded to the most of any agent
    /// (at least one) with their mask; one of the first set holds none.
    #[test]
    fn only_a_jobs_batch_holds_running_tasks() {
        let mut rng = stream_rng(9, Purpose::Other, 0, 0);
        let mut graphs: Vec<AgentObs> = (0..5).map(|_| random_jobs_obs(&mut rng)).collect();
        graphs[0].running.clear();
        let refs: Vec<&AgentObs> = graphs.iter().collect();
        let b = ObsBatch::new(&refs, TapFeatures::Base).unwrap();
        assert!(b.running.is_none() && b.running_mask.is_none());
        let b = ObsBatch::new(&refs, TapFeatures::Jobs).unwrap();
        let r = graphs.iter().map(|o| o.running.len()).max().unwrap().max(1);
        let (x, m) = (b.running.unwrap(), b.running_mask.unwrap());
        assert_eq!(x.dims(), &[5, r, TapFeatures::Jobs.running_width()]);
        let m = m.to_vec2::<f32>().unwrap();
        for (o, m) in graphs.iter().zip(&m) {
            let real = m.iter().filter(|&&v| v == 1.0).count();
            assert_eq!(real, o.running.len());
        }
        let idle: Vec<&AgentObs> = vec![&graphs[0]];
        let b = ObsBatch::new(&idle, TapFeatures::Jobs).unwrap();
        assert_eq!(b.running_mask.unwrap().to_vec2::<f32>().unwrap(), [[0.0]]);
    }
}
