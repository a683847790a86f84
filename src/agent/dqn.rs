//! Double-DQN learning: an online and a target network, Huber loss on the TD error, Adam with
//! a global gradient-norm clip, periodic target sync.

use super::net::{NetShape, QNet, build, copy_weights};
use super::replay::Batch;
use candle_core::{D, DType, Device, Result, Tensor};
use candle_nn::{AdamW, Optimizer, ParamsAdamW, VarMap};

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
        let n = batch.actions.len();
        let shape = self.online.shape();
        let dev = Device::Cpu;
        let s = Tensor::from_slice(&batch.states, (n, shape.features, shape.history), &dev)?;
        let s2 = Tensor::from_slice(&batch.next_states, (n, shape.features, shape.history), &dev)?;
        let a = Tensor::from_slice(&batch.actions, (n, 1), &dev)?;
        let r = Tensor::from_slice(&batch.rewards, n, &dev)?;
        let done = Tensor::from_slice(&batch.dones, n, &dev)?;
        // Double DQN: the online network picks the next action, the target network values it.
        let next_a = self
            .online
            .forward(&s2)?
            .detach()
            .argmax_keepdim(D::Minus1)?;
        let next_q = self
            .target
            .forward(&s2)?
            .detach()
            .gather(&next_a, 1)?
            .squeeze(1)?;
        let not_done = done.affine(-1.0, 1.0)?;
        let y = (r + (next_q * not_done)?.affine(self.settings.gamma, 0.0)?)?.detach();
        let q = self.online.forward(&s)?.gather(&a, 1)?.squeeze(1)?;
        let loss = huber(&(q - y)?)?;
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

/// Mean Huber loss (δ = 1) of the errors `e`.
pub fn huber(e: &Tensor) -> Result<Tensor> {
    let abs = e.abs()?;
    let quad = (e.sqr()? * 0.5)?;
    let lin = (abs.clone() - 0.5)?;
    abs.lt(1.0)?.where_cond(&quad, &lin)?.mean_all()
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
