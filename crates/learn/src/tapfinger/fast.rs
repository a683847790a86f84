//! TapFinger's network in plain Rust, for the decision path (docs/model.md §15): the same
//! arithmetic as [`TapNet::forward`] on one agent's observation at a time, without padding (each
//! agent's graph has its own number of offers, workers and competitor edges), over weights copied
//! once out of the candle variables. Per agent it computes the pointer's logits over its offers
//! and the void choice; the allocation logits only for the offer the pointer picks. Training
//! stays in candle.

use super::features::AgentObs;
use super::net::TapNet;
use crate::linalg::{Dense, dot};
use candle_core::Result;

/// Node-level attention's three projections.
#[derive(Debug, Clone)]
struct Attn {
    q: Dense,
    k: Dense,
    v: Dense,
}

impl Attn {
    /// Attention of `x` over `nb`: the weighted mean of the neighbours' values, zero without
    /// neighbours. The projections have no bias, so q·(W_k n) = (W_kᵀ q)·n and
    /// Σ a·(W_v n) = W_v (Σ a·n): three matrix-vector products per query, whatever the number
    /// of neighbours, instead of two per neighbour.
    fn over(&self, x: &[f32], nb: &[Vec<f32>]) -> Vec<f32> {
        let h = x.len();
        if nb.is_empty() {
            return vec![0.0; h];
        }
        let q = self.q.linear(&[x]);
        let u = self.k.transposed(&q);
        let scale = (h as f32).sqrt();
        let scores: Vec<f32> = nb.iter().map(|n| dot(&u, n) / scale).collect();
        let m = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let e: Vec<f32> = scores.iter().map(|s| (s - m).exp()).collect();
        let z: f32 = e.iter().sum();
        let mut mean = vec![0.0; nb[0].len()];
        for (n, w) in nb.iter().zip(&e) {
            let w = w / z;
            mean.iter_mut().zip(n).for_each(|(o, v)| *o += w * v);
        }
        self.v.linear(&[&mean])
    }
}

/// What the decision path needs of one agent's forward pass.
#[derive(Debug, Clone)]
pub struct AgentLogits {
    /// Pointer logits over the agent's offers, then the void choice.
    pub pointer: Vec<f32>,
    /// Per offer, its stream's final embedding (for the allocation head).
    h2: Vec<Vec<f32>>,
    /// Per offer and worker, the worker's embedding.
    ew: Vec<Vec<Vec<f32>>>,
}

/// [`TapNet`]'s weights as plain vectors.
#[derive(Debug, Clone)]
pub struct FastTapNet {
    han: bool,
    enc_c: Dense,
    enc_s: Dense,
    enc_p: Dense,
    enc_w: Dense,
    enc_e: Dense,
    att_w: Attn,
    att_e: Attn,
    sem_w: Dense,
    sem_q: Dense,
    l1: Dense,
    att_p: Attn,
    l2: Dense,
    ctx: Dense,
    ptr_j: Dense,
    ptr_g: Dense,
    ptr_v: Dense,
    void: Vec<f32>,
    al_w: Dense,
    al_j: Dense,
    al_v: Dense,
}

impl FastTapNet {
    /// Copies the weights of `net`.
    pub fn new(net: &TapNet) -> Result<Self> {
        let l = net.layers();
        let attn = |a: [&candle_nn::Linear; 3]| -> Result<Attn> {
            Ok(Attn {
                q: Dense::of(a[0])?,
                k: Dense::of(a[1])?,
                v: Dense::of(a[2])?,
            })
        };
        Ok(Self {
            han: net.shape().han,
            enc_c: Dense::of(l.enc_c)?,
            enc_s: Dense::of(l.enc_s)?,
            enc_p: Dense::of(l.enc_p)?,
            enc_w: Dense::of(l.enc_w)?,
            enc_e: Dense::of(l.enc_e)?,
            att_w: attn(l.att_w)?,
            att_e: attn(l.att_e)?,
            sem_w: Dense::of(l.sem_w)?,
            sem_q: Dense::of(l.sem_q)?,
            l1: Dense::of(l.l1)?,
            att_p: attn(l.att_p)?,
            l2: Dense::of(l.l2)?,
            ctx: Dense::of(l.ctx)?,
            ptr_j: Dense::of(l.ptr_j)?,
            ptr_g: Dense::of(l.ptr_g)?,
            ptr_v: Dense::of(l.ptr_v)?,
            void: l.void.to_vec1::<f32>()?,
            al_w: Dense::of(l.al_w)?,
            al_j: Dense::of(l.al_j)?,
            al_v: Dense::of(l.al_v)?,
        })
    }

    /// The pointer's logits of one agent (at least one offer), and what
    /// [`FastTapNet::alloc`] needs.
    pub fn pointer(&self, o: &AgentObs) -> AgentLogits {
        let ec = self.enc_c.relu(&[&o.cluster]);
        let es = self.enc_s.relu(&[&o.shortcut]);
        let ep: Vec<Vec<f32>> = o.pending.iter().map(|x| self.enc_p.relu(&[x])).collect();
        let ew: Vec<Vec<Vec<f32>>> = o
            .workers
            .iter()
            .map(|ws| ws.iter().map(|w| self.enc_w.relu(&[w])).collect())
            .collect();
        let ee: Vec<Vec<Vec<f32>>> = o
            .edges
            .iter()
            .map(|es| es.iter().map(|e| self.enc_e.relu(&[e])).collect())
            .collect();
        let h = ec.len();
        let p = ep.len();
        let za: Vec<f32> = ec.iter().zip(&es).map(|(a, b)| a + b).collect();
        let h2: Vec<Vec<f32>> = if self.han {
            let zw: Vec<Vec<f32>> = (0..p).map(|j| self.att_w.over(&ep[j], &ew[j])).collect();
            let ze: Vec<Vec<f32>> = (0..p).map(|j| self.att_e.over(&ep[j], &ee[j])).collect();
            // Semantic attention: per meta-path the mean over the streams of q·tanh(W z + b).
            let sem = |zs: &mut dyn Iterator<Item = &Vec<f32>>| -> f32 {
                let mut s = 0.0;
                for z in zs {
                    let mut t = self.sem_w.linear(&[z]);
                    t.iter_mut().for_each(|v| *v = v.tanh());
                    s += self.sem_q.linear(&[&t])[0];
                }
                s / p as f32
            };
            let scores = [
                sem(&mut zw.iter()),
                sem(&mut ze.iter()),
                // The same node for every stream: the mean of its score is the score.
                sem(&mut std::iter::once(&za)) * p as f32,
            ];
            let m = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let e: Vec<f32> = scores.iter().map(|s| (s - m).exp()).collect();
            let zs: f32 = e.iter().sum();
            let beta: Vec<f32> = e.iter().map(|x| x / zs).collect();
            let h1: Vec<Vec<f32>> = (0..p)
                .map(|j| {
                    let z: Vec<f32> = (0..h)
                        .map(|i| zw[j][i] * beta[0] + ze[j][i] * beta[1] + za[i] * beta[2])
                        .collect();
                    self.l1.relu(&[&ep[j], &z])
                })
                .collect();
            (0..p)
                .map(|j| {
                    let zp = self.att_p.over(&h1[j], &h1);
                    self.l2.relu(&[&h1[j], &zp])
                })
                .collect()
        } else {
            let mean = |xs: &[Vec<f32>]| -> Vec<f32> {
                let mut out = vec![0.0; h];
                for x in xs {
                    out.iter_mut().zip(x).for_each(|(o, v)| *o += v);
                }
                let c = xs.len().max(1) as f32;
                out.iter_mut().for_each(|o| *o /= c);
                out
            };
            (0..p)
                .map(|j| {
                    let (zw, ze) = (mean(&ew[j]), mean(&ee[j]));
                    let z: Vec<f32> = (0..h).map(|i| zw[i] + ze[i] + za[i]).collect();
                    let h1 = self.l1.relu(&[&ep[j], &z]);
                    self.l2.relu(&[&h1, &h1])
                })
                .collect()
        };
        let mut pooled = vec![0.0; h];
        for x in &h2 {
            pooled.iter_mut().zip(x).for_each(|(o, v)| *o += v);
        }
        pooled.iter_mut().for_each(|o| *o /= p as f32);
        let g = self.ctx.relu(&[&ec, &es, &pooled]);
        let gp = self.ptr_g.linear(&[&g]);
        let score = |x: &[f32]| -> f32 {
            let mut t = self.ptr_j.linear(&[x]);
            t.iter_mut()
                .zip(&gp)
                .for_each(|(v, g)| *v = (*v + g).tanh());
            self.ptr_v.linear(&[&t])[0]
        };
        let mut pointer: Vec<f32> = h2.iter().map(|x| score(x)).collect();
        pointer.push(score(&self.void));
        AgentLogits { pointer, h2, ew }
    }

    /// The allocation logits of offer `j` of the agent whose pointer `a` is: one per feasible
    /// worker of the offer.
    pub fn alloc(&self, a: &AgentLogits, j: usize) -> Vec<f32> {
        let aj = self.al_j.linear(&[&a.h2[j]]);
        a.ew[j]
            .iter()
            .map(|w| {
                let mut t = self.al_w.linear(&[w]);
                t.iter_mut()
                    .zip(&aj)
                    .for_each(|(v, x)| *v = (*v + x).tanh());
                self.al_v.linear(&[&t])[0]
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tapfinger::batch::ObsBatch;
    use crate::tapfinger::features::{
        CLUSTER_FEATURES, EDGE_FEATURES, PENDING_FEATURES, WORKER_FEATURES,
    };
    use crate::tapfinger::net::{TapNetShape, build};
    use continuum_core::rng::{Purpose, SimRng, stream_rng};
    use rand::Rng;

    fn arr<const N: usize>(rng: &mut SimRng) -> [f32; N] {
        std::array::from_fn(|_| rng.random_range(-2.0..2.0))
    }

    /// An agent's graph of random size: 1–7 offers, 1–5 workers and 0–6 competitors each.
    fn obs(rng: &mut SimRng) -> AgentObs {
        let p = rng.random_range(1..8);
        AgentObs {
            cluster: arr::<CLUSTER_FEATURES>(rng),
            shortcut: arr::<CLUSTER_FEATURES>(rng),
            pending: (0..p).map(|_| arr::<PENDING_FEATURES>(rng)).collect(),
            workers: (0..p)
                .map(|_| {
                    (0..rng.random_range(1..6))
                        .map(|_| arr::<WORKER_FEATURES>(rng))
                        .collect()
                })
                .collect(),
            edges: (0..p)
                .map(|_| {
                    (0..rng.random_range(0..7))
                        .map(|_| arr::<EDGE_FEATURES>(rng))
                        .collect()
                })
                .collect(),
        }
    }

    fn close(a: f32, b: f32) -> bool {
        (a - b).abs() <= 1e-5 * a.abs().max(1.0)
    }

    /// On a matrix of random graphs (with and without HAN, several widths), the plain pointer
    /// and allocation logits equal the candle forward's within 1e-5.
    #[test]
    fn equals_the_candle_forward() {
        let mut rng = stream_rng(5, Purpose::Other, 0, 0);
        for (seed, hidden, han) in [(1, 16, true), (2, 32, true), (3, 24, false), (4, 64, true)] {
            let (_vm, net) = build(TapNetShape { hidden, han }, seed).unwrap();
            let fast = FastTapNet::new(&net).unwrap();
            let graphs: Vec<AgentObs> = (0..12).map(|_| obs(&mut rng)).collect();
            let refs: Vec<&AgentObs> = graphs.iter().collect();
            let out = net.forward(&ObsBatch::new(&refs).unwrap()).unwrap();
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
