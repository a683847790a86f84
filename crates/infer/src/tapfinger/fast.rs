//! TapFinger's network in plain Rust, for the decision path (docs/model.md §15): a heterogeneous
//! graph attention encoder (node-level attention along each meta-path, semantic attention across
//! them, then the agent's streams attending to each other), a pointer over the agent's offers
//! and the void choice, and the allocation head, on one agent's observation at a time, without
//! padding (each agent's graph has its own number of offers, workers and competitor edges), over
//! the checkpoint's weights. Per agent it computes the pointer's logits; the allocation logits
//! only for the offer the pointer picks. Training (candle's `TapNet` in `continuum-learn`, whose
//! variable names these are) checks its batched forward against this within 1e-5.

use super::features::{AgentObs, TapFeatures};
use crate::linalg::{Cols, dot};
use crate::weights::Weights;

/// Network settings (part of a checkpoint).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TapNetShape {
    /// Hidden width.
    pub hidden: usize,
    /// Whether the encoder is the HAN (false: an MLP over each stream's own features and the
    /// means of its neighbours' — the paper's ablation without HAN).
    pub han: bool,
    /// The features it reads (absent in checkpoints written before there was a choice: the
    /// first set).
    #[serde(default)]
    pub features: TapFeatures,
}

/// Node-level attention, folded for one query at a time: the projections have no bias, so
/// q·(W_k n) = ((W_kᵀ W_q) x)·n and Σ a·(W_v n) = W_v (Σ a·n), two matrix-vector products per
/// query whatever the number of neighbours.
#[derive(Debug, Clone)]
struct Attn {
    /// `(W_kᵀ W_q) / √h`: the query's scores are this times it, dotted with each neighbour.
    m: Cols,
    v: Cols,
}

impl Attn {
    /// The attention `prefix` (projections `q`, `k`, `v`, each `[h][h]` without bias).
    fn read(w: &Weights, prefix: &str, h: usize) -> Result<Self, String> {
        let q = w.tensor(&format!("{prefix}.q.weight"), &[h, h])?;
        let k = w.tensor(&format!("{prefix}.k.weight"), &[h, h])?;
        let (v, vb) = w.linear(&format!("{prefix}.v"), h, h, false)?;
        let scale = (h as f64).sqrt();
        let mut m = vec![0.0f32; h * h];
        for i in 0..h {
            for j in 0..h {
                let s: f64 = (0..h)
                    .map(|o| f64::from(k[o * h + i]) * f64::from(q[o * h + j]))
                    .sum();
                m[i * h + j] = (s / scale) as f32;
            }
        }
        Ok(Self {
            m: Cols::from_rows(&m, vec![0.0; h]),
            v: Cols::from_rows(&v, vb),
        })
    }

    /// `out` = attention of `x` over the rows of `nb` (`h` wide): the weighted mean of the
    /// neighbours' values, zero without neighbours.
    #[inline(always)]
    fn over(&self, x: &[f32], nb: &[f32], t: &mut Tmp, out: &mut [f32]) {
        let h = out.len();
        if nb.is_empty() {
            out.fill(0.0);
            return;
        }
        self.m.apply(&[x], &mut t.u);
        t.w.clear();
        t.w.extend(nb.chunks_exact(h).map(|n| dot(&t.u, n)));
        let mx = t.w.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        t.w.iter_mut().for_each(|w| *w = (*w - mx).exp());
        let z: f32 = t.w.iter().fold(0.0, |z, w| z + w);
        t.mean.fill(0.0);
        for (n, w) in nb.chunks_exact(h).zip(&t.w) {
            let w = w / z;
            t.mean.iter_mut().zip(n).for_each(|(o, v)| *o += w * v);
        }
        self.v.apply(&[&t.mean], out);
    }
}

/// Scratch vectors of one attention or scoring step.
#[derive(Debug, Clone, Default)]
struct Tmp {
    u: Vec<f32>,
    mean: Vec<f32>,
    w: Vec<f32>,
    t: Vec<f32>,
}

impl Tmp {
    fn size(&mut self, h: usize) {
        self.u.resize(h, 0.0);
        self.mean.resize(h, 0.0);
        self.t.resize(h, 0.0);
    }
}

/// One agent's forward pass: the pointer's logits and what the allocation head needs. Its
/// buffers are kept between agents ([`FastTapNet::pointer_into`]), so that a round allocates
/// nothing once they have grown.
#[derive(Debug, Clone, Default)]
pub struct AgentLogits {
    /// Pointer logits over the agent's offers, then the void choice.
    pub pointer: Vec<f32>,
    h: usize,
    /// Per offer, its stream's final embedding (rows of `h`).
    h2: Vec<f32>,
    /// The workers' embeddings, offer after offer (rows of `h`); offer `j`'s are rows
    /// `ew_at[j]..ew_at[j + 1]`.
    ew: Vec<f32>,
    ew_at: Vec<usize>,
    // Scratch.
    ec: Vec<f32>,
    es: Vec<f32>,
    za: Vec<f32>,
    er: Vec<f32>,
    ep: Vec<f32>,
    zw: Vec<f32>,
    ze: Vec<f32>,
    h1: Vec<f32>,
    ee: Vec<f32>,
    row: Vec<f32>,
    tmp: Tmp,
}

/// The running-task layers: their nodes' features read, encoder and attention.
#[derive(Debug, Clone)]
struct Running {
    width: usize,
    enc: Cols,
    att: Attn,
}

/// TapFinger's network's weights, input-major.
#[derive(Debug, Clone)]
pub struct FastTapNet {
    han: bool,
    /// Whether the pointer has a void choice ([`TapFeatures::void`]).
    void: bool,
    h: usize,
    /// Features read per node (cluster, pending, worker, edge): a prefix of each observation's.
    widths: [usize; 4],
    enc_c: Cols,
    enc_s: Cols,
    enc_p: Cols,
    enc_w: Cols,
    enc_e: Cols,
    /// The running-task nodes' encoder and attention, for a feature set that has them.
    running: Option<Running>,
    att_w: Attn,
    att_e: Attn,
    sem_w: Cols,
    sem_q: Vec<f32>,
    l1: Cols,
    att_p: Attn,
    l2: Cols,
    ctx: Cols,
    ptr_j: Cols,
    ptr_g: Cols,
    ptr_v: Vec<f32>,
    /// `W_j · void`: the void choice's projection, the same for every agent.
    void_j: Vec<f32>,
    al_w: Cols,
    al_j: Cols,
    al_v: Vec<f32>,
}

impl FastTapNet {
    /// The network of `shape` from `weights` (the training network's variable names); a
    /// missing weight or one of another shape is refused with its name.
    pub fn read(shape: TapNetShape, w: &Weights) -> Result<Self, String> {
        let h = shape.hidden;
        let cols = |name: &str, ins: usize, bias: bool| -> Result<Cols, String> {
            let (rows, b) = w.linear(name, h, ins, bias)?;
            Ok(Cols::from_rows(&rows, b))
        };
        let row = |name: &str| -> Result<Vec<f32>, String> {
            Ok(w.tensor(&format!("{name}.weight"), &[1, h])?.to_vec())
        };
        let void = w.tensor("void", &[h])?;
        let ptr_j = cols("ptr_j", h, false)?;
        let mut void_j = vec![0.0; ptr_j.outputs()];
        ptr_j.apply(&[void], &mut void_j);
        let [fc, fp, fw, fe] = shape.features.widths();
        let fr = shape.features.running_width();
        let running = if fr > 0 {
            Some(Running {
                width: fr,
                enc: cols("enc_r", fr, true)?,
                att: Attn::read(w, "att_r", h)?,
            })
        } else {
            None
        };
        Ok(Self {
            han: shape.han,
            h,
            widths: [fc, fp, fw, fe],
            enc_c: cols("enc_c", fc, true)?,
            enc_s: cols("enc_s", fc, true)?,
            enc_p: cols("enc_p", fp, true)?,
            enc_w: cols("enc_w", fw, true)?,
            enc_e: cols("enc_e", fe, true)?,
            running,
            void: shape.features.void(),
            att_w: Attn::read(w, "att_w", h)?,
            att_e: Attn::read(w, "att_e", h)?,
            sem_w: cols("sem_w", h, true)?,
            sem_q: row("sem_q")?,
            l1: cols("l1", 2 * h, true)?,
            att_p: Attn::read(w, "att_p", h)?,
            l2: cols("l2", 2 * h, true)?,
            ctx: cols("ctx", 3 * h, true)?,
            ptr_j,
            ptr_g: cols("ptr_g", h, true)?,
            ptr_v: row("ptr_v")?,
            void_j,
            al_w: cols("al_w", h, false)?,
            al_j: cols("al_j", h, true)?,
            al_v: row("al_v")?,
        })
    }

    /// The pointer's logits of one agent (at least one offer), and what
    /// [`FastTapNet::alloc`] needs.
    pub fn pointer(&self, o: &AgentObs) -> AgentLogits {
        let mut a = AgentLogits::default();
        self.pointer_into(o, &mut a);
        a
    }

    /// [`FastTapNet::pointer`] into `a`, reusing its buffers. On a CPU with AVX2 the same
    /// arithmetic runs eight lanes wide: every sum keeps its order, so the bits are the same.
    pub fn pointer_into(&self, o: &AgentObs, a: &mut AgentLogits) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            unsafe { self.pointer_avx2(o, a) };
            return;
        }
        self.pointer_plain(o, a);
    }

    /// [`FastTapNet::pointer_plain`] compiled for AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn pointer_avx2(&self, o: &AgentObs, a: &mut AgentLogits) {
        self.pointer_plain(o, a);
    }

    #[inline(always)]
    fn pointer_plain(&self, o: &AgentObs, a: &mut AgentLogits) {
        let h = self.h;
        a.h = h;
        a.tmp.size(h);
        a.row.resize(h, 0.0);
        self.encode_nodes(o, a);
        self.meta_paths(o, a);
        let beta = self.semantic(a);
        self.streams(a, beta);
        self.score(a);
    }

    /// The nodes' embeddings: the agent's cluster (with its running tasks, for a feature set
    /// that has them), the shortcut, the streams and their workers; `za` = cluster + shortcut.
    #[inline(always)]
    fn encode_nodes(&self, o: &AgentObs, a: &mut AgentLogits) {
        let h = self.h;
        let p = o.pending.len();
        let [fc, fp, fw, _] = self.widths;
        a.ec.resize(h, 0.0);
        a.es.resize(h, 0.0);
        self.enc_c.relu(&[&o.cluster[..fc]], &mut a.ec);
        self.enc_s.relu(&[&o.shortcut[..fc]], &mut a.es);
        if let Some(r) = &self.running {
            a.er.resize(o.running.len() * h, 0.0);
            for (x, out) in o.running.iter().zip(a.er.chunks_exact_mut(h)) {
                r.enc.relu(&[&x[..r.width]], out);
            }
            if self.han {
                r.att.over(&a.ec, &a.er, &mut a.tmp, &mut a.row);
            } else {
                mean_into(&a.er, &mut a.row);
            }
            a.ec.iter_mut().zip(&a.row).for_each(|(c, z)| *c += z);
        }
        a.ep.resize(p * h, 0.0);
        for (x, out) in o.pending.iter().zip(a.ep.chunks_exact_mut(h)) {
            self.enc_p.relu(&[&x[..fp]], out);
        }
        a.ew_at.clear();
        a.ew_at.push(0);
        let k: usize = o.workers.iter().map(Vec::len).sum();
        a.ew.resize(k * h, 0.0);
        let mut rows = a.ew.chunks_exact_mut(h);
        for ws in &o.workers {
            for (w, out) in ws.iter().zip(&mut rows) {
                self.enc_w.relu(&[&w[..fw]], out);
            }
            a.ew_at
                .push(a.ew_at.last().copied().unwrap_or(0) + ws.len());
        }
        a.za.clear();
        a.za.extend(a.ec.iter().zip(&a.es).map(|(x, y)| x + y));
    }

    /// Per stream, its p–W and p–C meta-paths' aggregates (`zw`, `ze`): node-level attention
    /// with HAN, the neighbours' mean without.
    #[inline(always)]
    fn meta_paths(&self, o: &AgentObs, a: &mut AgentLogits) {
        let h = self.h;
        let p = o.pending.len();
        let fe = self.widths[3];
        a.zw.resize(p * h, 0.0);
        a.ze.resize(p * h, 0.0);
        a.h1.resize(p * h, 0.0);
        a.h2.resize(p * h, 0.0);
        for j in 0..p {
            let ep = &a.ep[j * h..(j + 1) * h];
            let ws = &a.ew[a.ew_at[j] * h..a.ew_at[j + 1] * h];
            a.ee.resize(o.edges[j].len() * h, 0.0);
            for (e, out) in o.edges[j].iter().zip(a.ee.chunks_exact_mut(h)) {
                self.enc_e.relu(&[&e[..fe]], out);
            }
            if self.han {
                self.att_w
                    .over(ep, ws, &mut a.tmp, &mut a.zw[j * h..(j + 1) * h]);
                self.att_e
                    .over(ep, &a.ee, &mut a.tmp, &mut a.ze[j * h..(j + 1) * h]);
            } else {
                mean_into(ws, &mut a.zw[j * h..(j + 1) * h]);
                mean_into(&a.ee, &mut a.ze[j * h..(j + 1) * h]);
            }
        }
    }

    /// The meta-paths' weights: semantic attention with HAN; without it, their plain sum
    /// (a product by 1 is exact, so this is the sum's arithmetic).
    #[inline(always)]
    fn semantic(&self, a: &mut AgentLogits) -> [f32; 3] {
        if !self.han {
            return [1.0f32; 3];
        }
        let h = self.h;
        // Semantic attention: per meta-path the mean over the streams of q·tanh(W z + b);
        // the agent's own node is the same for every stream, so its mean is its score.
        let mut sem = |z: &[f32]| -> f32 {
            let s: f32 = z
                .chunks_exact(h)
                .map(|z| {
                    self.sem_w.apply(&[z], &mut a.tmp.t);
                    a.tmp.t.iter_mut().for_each(|v| *v = v.tanh());
                    dot(&self.sem_q, &a.tmp.t)
                })
                .sum();
            s / (z.len() / h) as f32
        };
        let scores = [sem(&a.zw), sem(&a.ze), sem(&a.za)];
        let m = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let e = scores.map(|s| (s - m).exp());
        let zs: f32 = e.iter().sum();
        e.map(|x| x / zs)
    }

    /// Per stream, its embeddings after the meta-paths (`h1`) and after the agent's streams
    /// attend to each other (`h2`; without HAN, a layer over `h1` twice).
    #[inline(always)]
    fn streams(&self, a: &mut AgentLogits, beta: [f32; 3]) {
        let h = self.h;
        let p = a.ep.len() / h;
        for j in 0..p {
            let r = j * h..(j + 1) * h;
            for (((o, w), e), x) in a
                .row
                .iter_mut()
                .zip(&a.zw[r.clone()])
                .zip(&a.ze[r.clone()])
                .zip(&a.za)
            {
                *o = w * beta[0] + e * beta[1] + x * beta[2];
            }
            self.l1.relu(&[&a.ep[r.clone()], &a.row], &mut a.h1[r]);
        }
        for j in 0..p {
            let r = j * h..(j + 1) * h;
            if self.han {
                self.att_p
                    .over(&a.h1[r.clone()], &a.h1, &mut a.tmp, &mut a.row);
                self.l2.relu(&[&a.h1[r.clone()], &a.row], &mut a.h2[r]);
            } else {
                let h1 = &a.h1[r.clone()];
                self.l2.relu(&[h1, h1], &mut a.h2[r]);
            }
        }
    }

    /// The pointer's logits: the context of the agent's nodes and its pooled streams, scored
    /// against each stream and the void choice.
    #[inline(always)]
    fn score(&self, a: &mut AgentLogits) {
        let h = self.h;
        let p = a.h2.len() / h;
        let mut pooled = vec![0.0; h];
        for x in a.h2.chunks_exact(h) {
            pooled.iter_mut().zip(x).for_each(|(o, v)| *o += v);
        }
        pooled.iter_mut().for_each(|o| *o /= p as f32);
        let mut g = vec![0.0; h];
        self.ctx.relu(&[&a.ec, &a.es, &pooled], &mut g);
        let mut gp = vec![0.0; h];
        self.ptr_g.apply(&[&g], &mut gp);
        let t = &mut a.tmp.t;
        let mut score = |xj: Option<&[f32]>| -> f32 {
            match xj {
                Some(x) => self.ptr_j.apply(&[x], t),
                None => t.copy_from_slice(&self.void_j),
            }
            t.iter_mut()
                .zip(&gp)
                .for_each(|(v, g)| *v = (*v + g).tanh());
            dot(&self.ptr_v, t)
        };
        a.pointer.clear();
        for x in a.h2.chunks_exact(h) {
            a.pointer.push(score(Some(x)));
        }
        let void = score(None);
        // Masked as the candle network masks it: x + (0 − 1) · 1e9.
        a.pointer.push(if self.void { void } else { void + -1e9 });
    }

    /// The allocation logits of offer `j` of the agent whose pointer `a` is: one per feasible
    /// worker of the offer.
    pub fn alloc(&self, a: &AgentLogits, j: usize) -> Vec<f32> {
        let h = a.h;
        let mut aj = vec![0.0; h];
        self.al_j.apply(&[&a.h2[j * h..(j + 1) * h]], &mut aj);
        let mut t = vec![0.0; h];
        a.ew[a.ew_at[j] * h..a.ew_at[j + 1] * h]
            .chunks_exact(h)
            .map(|w| {
                self.al_w.apply(&[w], &mut t);
                t.iter_mut()
                    .zip(&aj)
                    .for_each(|(v, x)| *v = (*v + x).tanh());
                dot(&self.al_v, &t)
            })
            .collect()
    }
}

/// `out` = the mean of the rows of `xs` (zero without rows).
#[inline(always)]
fn mean_into(xs: &[f32], out: &mut [f32]) {
    let h = out.len();
    out.fill(0.0);
    let n = xs.len() / h;
    for x in xs.chunks_exact(h) {
        out.iter_mut().zip(x).for_each(|(o, v)| *o += v);
    }
    let c = n.max(1) as f32;
    out.iter_mut().for_each(|o| *o /= c);
}

#[cfg(test)]
#[path = "fast_tests.rs"]
mod tests;
