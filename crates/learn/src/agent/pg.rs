//! Policy-gradient learning of the meta-policy network (docs/model.md §9.8): the branching
//! network's outputs read as logits of a softmax policy per class; actions are sampled from
//! it; every `batch_size` transitions, one gradient step on them (on-policy; the buffer is then
//! cleared). A transition's values are the counterfactual value of each (class, action) — how
//! much better than the class's mean action it did — so the baseline is already subtracted.
//! - `reinforce`: −Σ log π(a_taken|s) · v_taken.
//! - `reinforce-improved`: −Σ_a π(a|s) · v_a / sd(v) − β H(π): every measured action's value
//!   enters the gradient (the expected gradient; Mean Actor-Critic), scaled to unit spread over
//!   the batch, with an entropy bonus.
//!
//! Unmeasured (weight 0) cells count as the class's mean (value 0).

use super::dqn::clip_grad_norm;
use super::net::{QNet, build};
use super::replay::Transition;
use candle_core::{D, Device, Result, Tensor};
use candle_nn::{AdamW, Optimizer, ParamsAdamW, VarMap};
use continuum_core::rng::SimRng;
use continuum_infer::agent::{Algorithm, NetShape};
use rand::Rng;

/// The policy-gradient learner: the policy network, its optimiser, the pending transitions.
pub struct PgLearner {
    vars: VarMap,
    net: QNet,
    opt: AdamW,
    algorithm: Algorithm,
    entropy: f64,
    max_grad_norm: f64,
    batch: usize,
    pending: Vec<Transition>,
}

impl PgLearner {
    /// A learner of `algorithm` (not `dqn`) with weights drawn from `seed`, stepping every
    /// `batch` transitions.
    pub fn new(
        shape: NetShape,
        algorithm: Algorithm,
        learning_rate: f64,
        entropy: f64,
        max_grad_norm: f64,
        batch: usize,
        seed: u64,
    ) -> Result<Self> {
        let (vars, net) = build(shape, seed)?;
        let opt = AdamW::new(
            vars.all_vars(),
            ParamsAdamW {
                lr: learning_rate,
                weight_decay: 0.0,
                ..ParamsAdamW::default()
            },
        )?;
        Ok(Self {
            vars,
            net,
            opt,
            algorithm,
            entropy,
            max_grad_norm,
            batch: batch.max(1),
            pending: Vec::new(),
        })
    }

    /// The policy network.
    pub fn net(&self) -> &QNet {
        &self.net
    }

    /// Its variables.
    pub fn vars(&self) -> &VarMap {
        &self.vars
    }

    /// An action drawn from softmax(`logits`).
    pub fn sample(logits: &[f32], rng: &mut SimRng) -> u32 {
        let top = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let w: Vec<f64> = logits.iter().map(|z| f64::from(z - top).exp()).collect();
        let mut u = rng.random::<f64>() * w.iter().sum::<f64>();
        for (i, x) in w.iter().enumerate() {
            if u < *x {
                return i as u32;
            }
            u -= x;
        }
        (w.len() - 1) as u32
    }

    /// Adds a transition; steps when `batch` are pending. Returns the step's loss, if any.
    pub fn push(&mut self, t: &Transition) -> Result<Option<f32>> {
        self.pending.push(t.clone());
        if self.pending.len() < self.batch {
            return Ok(None);
        }
        let loss = self.update()?;
        self.pending.clear();
        Ok(Some(loss))
    }

    fn update(&mut self) -> Result<f32> {
        let shape = self.net.shape();
        let (n, c, a) = (self.pending.len(), shape.classes, shape.actions);
        let dev = Device::Cpu;
        let states: Vec<f32> = self
            .pending
            .iter()
            .flat_map(|t| t.state.iter().copied())
            .collect();
        let x = Tensor::from_vec(states, (n, shape.features, shape.history), &dev)?;
        let logp = candle_nn::ops::log_softmax(&self.net.forward(&x)?, D::Minus1)?;
        let mut coef = vec![0f32; n * c * a];
        for (i, t) in self.pending.iter().enumerate() {
            for k in 0..c {
                let base = (i * c + k) * a;
                match self.algorithm {
                    Algorithm::Reinforce => {
                        let j = k * a + t.actions[k] as usize;
                        if t.weights[j] > 0.0 {
                            coef[base + t.actions[k] as usize] = t.values[j];
                        }
                    }
                    _ => {
                        for act in 0..a {
                            let j = k * a + act;
                            if t.weights[j] > 0.0 {
                                coef[base + act] = t.values[j];
                            }
                        }
                    }
                }
            }
        }
        let rows = (n * c) as f64;
        let loss = if self.algorithm == Algorithm::Reinforce {
            let w = Tensor::from_vec(coef, (n, c, a), &dev)?;
            ((logp * w)?.sum_all()? / -rows)?
        } else {
            let nz: Vec<f32> = coef.iter().copied().filter(|v| *v != 0.0).collect();
            let sd = if nz.is_empty() {
                1.0
            } else {
                let m = nz.iter().sum::<f32>() / nz.len() as f32;
                (nz.iter().map(|v| (v - m).powi(2)).sum::<f32>() / nz.len() as f32)
                    .sqrt()
                    .max(1e-6)
            };
            let w = (Tensor::from_vec(coef, (n, c, a), &dev)? / f64::from(sd))?;
            let p = logp.exp()?;
            let gain = ((&p * w)?.sum_all()? / rows)?;
            let entropy = ((p * &logp)?.sum_all()? / -rows)?;
            (gain.neg()? - (entropy * self.entropy)?)?
        };
        let mut grads = loss.backward()?;
        clip_grad_norm(&self.vars, &mut grads, self.max_grad_norm)?;
        self.opt.step(&grads)?;
        loss.to_scalar::<f32>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use continuum_core::rng::{Purpose, stream_rng};

    fn shape() -> NetShape {
        NetShape {
            features: 3,
            history: 2,
            conv_channels: 4,
            conv_kernel: 2,
            hidden: 16,
            actions: 3,
            classes: 2,
        }
    }

    /// Class 0's best action is 2, class 1's is 0 (values relative to the class mean).
    fn transition(actions: Vec<u32>, all: bool) -> Transition {
        let v = [-1.0f32, 0.0, 1.0, 1.0, 0.0, -1.0];
        let mut values = vec![0.0; 6];
        let mut weights = vec![0.0; 6];
        for j in 0..6 {
            if all || j % 3 == actions[j / 3] as usize {
                values[j] = v[j];
                weights[j] = 1.0;
            }
        }
        Transition {
            state: vec![0.5, 0.1, 0.3, 0.2, 0.9, 0.4],
            actions,
            values,
            weights,
            next_state: vec![0.0; 6],
            done: false,
        }
    }

    fn learns(algorithm: Algorithm) {
        let mut l = PgLearner::new(shape(), algorithm, 0.01, 0.001, 10.0, 32, 3).unwrap();
        let mut rng = stream_rng(5, Purpose::Other, 0, 0);
        let x =
            Tensor::from_vec(transition(vec![0, 0], true).state, (1, 3, 2), &Device::Cpu).unwrap();
        for _ in 0..40 * 32 {
            let q = l.net().forward(&x).unwrap().to_vec3::<f32>().unwrap();
            let acts = q[0]
                .iter()
                .map(|z| PgLearner::sample(z, &mut rng))
                .collect();
            l.push(&transition(acts, algorithm != Algorithm::Reinforce))
                .unwrap();
        }
        let q = l.net().forward(&x).unwrap().to_vec3::<f32>().unwrap();
        assert_eq!(continuum_infer::agent::argmax(&q[0][0]), 2, "{:?}", q[0]);
        assert_eq!(continuum_infer::agent::argmax(&q[0][1]), 0, "{:?}", q[0]);
    }

    #[test]
    fn reinforce_finds_each_class_best_action() {
        learns(Algorithm::Reinforce);
    }

    #[test]
    fn the_all_action_gradient_finds_each_class_best_action() {
        learns(Algorithm::ReinforceImproved);
    }

    #[test]
    fn sampling_follows_the_softmax() {
        let mut rng = stream_rng(1, Purpose::Other, 0, 0);
        let mut counts = [0usize; 2];
        for _ in 0..4000 {
            counts[PgLearner::sample(&[0.0, (3.0f32).ln()], &mut rng) as usize] += 1;
        }
        let share = counts[1] as f64 / 4000.0;
        assert!((share - 0.75).abs() < 0.03, "{share}");
    }
}
