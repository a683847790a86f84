//! Double-DQN learning with action branching: an online and a target network, Huber loss on
//! the error of every weighted (class, action) cell, Adam with a global gradient-norm clip,
//! periodic target sync. Each class's head has its own Double-DQN target: the online network
//! picks the class's next action, the target network values it (Tavakoli et al. 2018, with
//! per-branch targets). With γ = 0 (counterfactual credit) the target is the value itself.

use super::net::{QNet, build, copy_weights};
use super::replay::Batch;
use candle_core::{D, DType, Device, Result, Tensor};
use candle_nn::{AdamW, Optimizer, ParamsAdamW, VarMap};
use continuum_infer::agent::NetShape;

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
}

impl Learner {
    /// A learner with freshly initialised networks (target = online) drawn from `seed`.
    pub fn new(shape: NetShape, settings: LearnSettings, seed: u64) -> Result<Self> {
        let (online_vars, online) = build(shape, seed)?;
        let (target_vars, target) = build(shape, seed)?;
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
        let n = batch.len();
        let shape = self.online.shape();
        let (c, a) = (shape.classes, shape.actions);
        let dev = Device::Cpu;
        let s = Tensor::from_slice(&batch.states, (n, shape.features, shape.history), &dev)?;
        let values = Tensor::from_slice(&batch.values, (n, c, a), &dev)?;
        let weights = Tensor::from_slice(&batch.weights, (n, c, a), &dev)?;
        let target = if self.settings.gamma > 0.0 {
            let s2 =
                Tensor::from_slice(&batch.next_states, (n, shape.features, shape.history), &dev)?;
            let done = Tensor::from_slice(&batch.dones, (n, 1), &dev)?;
            // Double DQN per branch: the online network picks each class's next action, the
            // target network values it.
            let next_a = self
                .online
                .forward(&s2)?
                .detach()
                .argmax_keepdim(D::Minus1)?;
            let next_q = self
                .target
                .forward(&s2)?
                .detach()
                .gather(&next_a, 2)?
                .squeeze(2)?;
            let not_done = done.affine(-1.0, 1.0)?;
            let boot = next_q
                .broadcast_mul(&not_done)?
                .affine(self.settings.gamma, 0.0)?;
            values.broadcast_add(&boot.unsqueeze(2)?)?.detach()
        } else {
            values
        };
        let q = self.online.forward(&s)?;
        let loss = weighted_huber(&(q - target)?, &weights)?;
        let mut grads = loss.backward()?;
        clip_grad_norm(&self.online_vars, &mut grads, self.settings.max_grad_norm)?;
        self.opt.step(&grads)?;
        self.steps += 1;
        if self.steps % self.settings.target_update_interval.max(1) == 0 {
            self.sync_target()?;
        }
        loss.to_scalar::<f32>()
    }
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
