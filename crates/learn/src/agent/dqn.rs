//! Double-DQN learning with action branching: an online and a target network, Huber loss on
//! the error of every weighted (class, action) cell, Adam with a global gradient-norm clip,
//! periodic target sync. Each class's head has its own Double-DQN target: the online network
//! picks the class's next action, the target network values it (Tavakoli et al. 2018, with
//! per-branch targets). With γ = 0 (counterfactual credit) the target is the value itself.
//!
//! With `quantiles` > 0 the networks are implicit quantile networks (Dabney et al., ICML 2018;
//! EdgeTuner's learner) and the loss is the quantile-Huber loss: N quantiles τ of the online
//! network against N′ of the target's, each τ drawn uniformly from the learner's own seeded
//! stream; the next action is the online network's greedy one (its mean over the fixed grid
//! of τ), as above.

use super::net::{QNet, build_with, copy_weights};
use super::replay::Batch;
use candle_core::{D, DType, Device, Result, Tensor};
use candle_nn::{AdamW, Optimizer, ParamsAdamW, VarMap};
use continuum_core::rng::{Purpose, SimRng, stream_rng};
use continuum_infer::agent::NetShape;
use rand::Rng;

/// Quantiles τ sampled per state for the online network and for the target (N = N′ = 8, the
/// IQN paper's choice).
const IQN_SAMPLES: usize = 8;

/// Learning settings (a subset of [`super::DqnConfig`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LearnSettings {
    /// Discount γ.
    pub gamma: f64,
    /// Adam learning rate.
    pub learning_rate: f64,
    /// Global gradient-norm clip.
    pub max_grad_norm: f64,
    /// Gradient steps between target syncs.
    pub target_update_interval: u64,
    /// Cosines of an implicit quantile network's τ embedding (64 in the IQN paper); 0: Double
    /// DQN.
    pub quantiles: usize,
}

/// The learner: online network, target network, optimiser.
pub struct Learner {
    settings: LearnSettings,
    online_vars: VarMap,
    online: QNet,
    target_vars: VarMap,
    target: QNet,
    opt: AdamW,
    steps: u64,
    /// Draws of τ (implicit quantile networks).
    taus: SimRng,
}

impl Learner {
    /// A learner with freshly initialised networks (target = online) drawn from `seed`.
    pub fn new(shape: NetShape, settings: LearnSettings, seed: u64) -> Result<Self> {
        let (online_vars, online) = build_with(shape, settings.quantiles, seed)?;
        let (target_vars, target) = build_with(shape, settings.quantiles, seed)?;
        copy_weights(&online_vars, &target_vars)?;
        let opt = AdamW::new(
            online_vars.all_vars(),
            ParamsAdamW {
                lr: settings.learning_rate,
                weight_decay: 0.0,
                ..ParamsAdamW::default()
            },
        )?;
        Ok(Self {
            settings,
            online_vars,
            online,
            target_vars,
            target,
            opt,
            steps: 0,
            taus: stream_rng(seed, Purpose::Other, 0x0074_6175, 0),
        })
    }

    /// The online network.
    pub fn online(&self) -> &QNet {
        &self.online
    }

    /// The online network's variables (what a checkpoint saves).
    pub fn online_vars(&self) -> &VarMap {
        &self.online_vars
    }

    /// The target network.
    pub fn target(&self) -> &QNet {
        &self.target
    }

    /// Gradient steps taken.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Copies the online weights into the target network.
    pub fn sync_target(&mut self) -> Result<()> {
        copy_weights(&self.online_vars, &self.target_vars)
    }

    /// One gradient step on `batch`; returns the loss. Syncs the target every
    /// `target_update_interval` steps.
    pub fn train_step(&mut self, batch: &Batch) -> Result<f32> {
        Ok(self.step(batch, false)?.0)
    }

    /// [`Self::train_step`] on a prioritised draw (`batch.importance` weighs each transition's
    /// loss); also returns each transition's new priority: the mean absolute error of its
    /// weighted cells (Double DQN) or its quantile-Huber loss (implicit quantile networks).
    pub fn train_step_prioritised(&mut self, batch: &Batch) -> Result<(f32, Vec<f32>)> {
        let (loss, p) = self.step(batch, true)?;
        Ok((loss, p.unwrap_or_default()))
    }

    fn step(&mut self, batch: &Batch, priorities: bool) -> Result<(f32, Option<Vec<f32>>)> {
        if self.online.is_quantile() {
            let (loss, p) = self.quantile_step(batch, priorities)?;
            return Ok((self.apply(loss)?, p));
        }
        let n = batch.len();
        let shape = self.online.shape();
        let (c, a) = (shape.classes, shape.actions);
        let dev = Device::Cpu;
        let s = Tensor::from_slice(&batch.states, (n, shape.features, shape.history), &dev)?;
        let values = Tensor::from_slice(&batch.values, (n, c, a), &dev)?;
        let weights = Tensor::from_slice(&batch.weights, (n, c, a), &dev)?;
        let target = if self.settings.gamma > 0.0 {
            let (s2, not_done, next_a) = self.next_step(batch)?;
            let next_q = self
                .target
                .forward(&s2)?
                .detach()
                .gather(&next_a, 2)?
                .squeeze(2)?;
            let boot = self.discounted(&next_q, &not_done)?;
            values.broadcast_add(&boot.unsqueeze(2)?)?.detach()
        } else {
            values
        };
        let q = self.online.forward(&s)?;
        let e = (q - target)?;
        let p = if priorities {
            let per = (e.abs()?.detach() * &weights)?.sum((1, 2))?;
            let mass = weights.sum((1, 2))?.clamp(1e-6, f64::INFINITY)?;
            Some((per / mass)?.to_vec1::<f32>()?)
        } else {
            None
        };
        let loss = if batch.importance.is_empty() {
            weighted_huber(&e, &weights)?
        } else {
            let total = weights.sum_all()?.to_scalar::<f32>()?.max(1e-6);
            let w = weights.broadcast_mul(&importance(batch, (n, 1, 1))?)?;
            ((huber_elements(&e)? * w)?.sum_all()? / f64::from(total))?
        };
        Ok((self.apply(loss)?, p))
    }

    /// What the bootstrap of `batch` needs: its next states, 1 − done per transition (`[n, 1]`)
    /// and the online network's greedy next action per class (`[n, classes, 1]`: Double DQN per
    /// branch, the online network picks, the target network values).
    fn next_step(&self, batch: &Batch) -> Result<(Tensor, Tensor, Tensor)> {
        let n = batch.len();
        let shape = self.online.shape();
        let dev = Device::Cpu;
        let s2 = Tensor::from_slice(&batch.next_states, (n, shape.features, shape.history), &dev)?;
        let not_done = Tensor::from_slice(&batch.dones, (n, 1), &dev)?.affine(-1.0, 1.0)?;
        let next_a = self
            .online
            .forward(&s2)?
            .detach()
            .argmax_keepdim(D::Minus1)?;
        Ok((s2, not_done, next_a))
    }

    /// γ · `next` where the transition goes on (`not_done` broadcast over `next`).
    fn discounted(&self, next: &Tensor, not_done: &Tensor) -> Result<Tensor> {
        next.broadcast_mul(not_done)?
            .affine(self.settings.gamma, 0.0)
    }

    /// Back-propagates `loss`, clips, steps the optimiser, syncs the target when due; returns
    /// the loss.
    fn apply(&mut self, loss: Tensor) -> Result<f32> {
        let mut grads = loss.backward()?;
        clip_grad_norm(&self.online_vars, &mut grads, self.settings.max_grad_norm)?;
        self.opt.step(&grads)?;
        self.steps += 1;
        if self.steps % self.settings.target_update_interval.max(1) == 0 {
            self.sync_target()?;
        }
        loss.to_scalar::<f32>()
    }

    /// `k` quantiles per state drawn uniformly from (0, 1): `[n, k]`.
    fn draw_taus(&mut self, n: usize, k: usize) -> Result<Tensor> {
        let t: Vec<f32> = (0..n * k).map(|_| self.taus.random::<f32>()).collect();
        Tensor::from_slice(&t, (n, k), &Device::Cpu)
    }

    /// The quantile-Huber loss of `batch` (implicit quantile networks): for each state, class
    /// and weighted action, ρ_τ(δ) = |τ − 1{δ < 0}| · huber(δ) of every pair of an online
    /// quantile τ_i and a target sample j, δ = r + γ Z′_τ′j(s′, a*) − Z_τi(s, a); summed over
    /// i, averaged over j, weighted as [`weighted_huber`].
    fn quantile_step(
        &mut self,
        batch: &Batch,
        priorities: bool,
    ) -> Result<(Tensor, Option<Vec<f32>>)> {
        let n = batch.len();
        let shape = self.online.shape();
        let (c, a) = (shape.classes, shape.actions);
        let dev = Device::Cpu;
        let s = Tensor::from_slice(&batch.states, (n, shape.features, shape.history), &dev)?;
        let values = Tensor::from_slice(&batch.values, (n, 1, c, a), &dev)?;
        let weights = Tensor::from_slice(&batch.weights, (n, 1, 1, c, a), &dev)?;
        // Targets `[n, N′, c, a]`: the value, plus the discounted target quantiles of the online
        // network's next action.
        let (target, n2) = if self.settings.gamma > 0.0 {
            let (s2, not_done, next_a) = self.next_step(batch)?;
            let next_a = next_a
                .unsqueeze(1)?
                .broadcast_as((n, IQN_SAMPLES, c, 1))?
                .contiguous()?;
            let taus2 = self.draw_taus(n, IQN_SAMPLES)?;
            let next_z = self
                .target
                .quantiles(&s2, &taus2)?
                .detach()
                .gather(&next_a, 3)?
                .squeeze(3)?;
            let boot = self.discounted(&next_z, &not_done.unsqueeze(2)?)?;
            (
                values.broadcast_add(&boot.unsqueeze(3)?)?.detach(),
                IQN_SAMPLES,
            )
        } else {
            (values, 1)
        };
        let taus = self.draw_taus(n, IQN_SAMPLES)?;
        let z = self.online.quantiles(&s, &taus)?;
        // δ `[n, N, N′, c, a]`.
        let delta = target.unsqueeze(1)?.broadcast_sub(&z.unsqueeze(2)?)?;
        let below = delta.lt(0.0)?.to_dtype(DType::F32)?;
        let tau = taus.reshape((n, IQN_SAMPLES, 1, 1, 1))?;
        let rho = tau
            .broadcast_sub(&below)?
            .abs()?
            .mul(&huber_elements(&delta)?)?;
        let total = weights.sum_all()?.to_scalar::<f32>()?.max(1e-6);
        let p = if priorities {
            let per = rho
                .detach()
                .broadcast_mul(&weights)?
                .sum((1, 2, 3, 4))?
                .affine(1.0 / n2 as f64, 0.0)?;
            let mass = weights.sum((1, 2, 3, 4))?.clamp(1e-6, f64::INFINITY)?;
            Some((per / mass)?.to_vec1::<f32>()?)
        } else {
            None
        };
        let weights = if batch.importance.is_empty() {
            weights
        } else {
            weights.broadcast_mul(&importance(batch, (n, 1, 1, 1, 1))?)?
        };
        let loss = (rho.broadcast_mul(&weights)?.sum_all()? / f64::from(total * n2 as f32))?;
        Ok((loss, p))
    }
}

/// A prioritised batch's importance weights as a tensor of `shape` (`[n, 1, …]`).
fn importance(batch: &Batch, shape: impl candle_core::shape::ShapeWithOneHole) -> Result<Tensor> {
    let w: Vec<f32> = batch.importance.iter().map(|&x| x as f32).collect();
    Tensor::from_vec(w, shape, &Device::Cpu)
}

/// Huber loss (δ = 1) of the errors `e`, weighted by `w` (same shape): Σ w·huber(e) / Σ w.
pub fn weighted_huber(e: &Tensor, w: &Tensor) -> Result<Tensor> {
    let h = huber_elements(e)?;
    let total = w.sum_all()?.to_scalar::<f32>()?.max(1e-6);
    (h * w)?.sum_all()? / f64::from(total)
}

/// Mean Huber loss (δ = 1) of the errors `e`.
pub fn huber(e: &Tensor) -> Result<Tensor> {
    huber_elements(e)?.mean_all()
}

/// Huber loss (δ = 1) of each error: ½e² within ±1, |e| − ½ beyond.
fn huber_elements(e: &Tensor) -> Result<Tensor> {
    let abs = e.abs()?;
    let quad = (e.sqr()? * 0.5)?;
    let lin = (abs.clone() - 0.5)?;
    abs.lt(1.0)?.where_cond(&quad, &lin)
}

/// Scales every gradient so that their global L2 norm is at most `max_norm`; returns the norm
/// before clipping.
pub fn clip_grad_norm(
    vars: &VarMap,
    grads: &mut candle_core::backprop::GradStore,
    max_norm: f64,
) -> Result<f64> {
    let all = vars.all_vars();
    let mut sq = 0.0f64;
    for v in &all {
        if let Some(g) = grads.get(v.as_tensor()) {
            sq += f64::from(
                g.sqr()?
                    .sum_all()?
                    .to_dtype(DType::F32)?
                    .to_scalar::<f32>()?,
            );
        }
    }
    let norm = sq.sqrt();
    if norm > max_norm {
        let scale = max_norm / (norm + 1e-6);
        for v in &all {
            if let Some(g) = grads.get(v.as_tensor()) {
                let scaled = (g * scale)?;
                grads.insert(v.as_tensor(), scaled);
            }
        }
    }
    Ok(norm)
}

#[cfg(test)]
mod tests;
