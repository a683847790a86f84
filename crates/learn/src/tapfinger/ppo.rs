//! MAPPO's update (decentralised actors sharing parameters, a per-agent critic): advantages by
//! GAE along each agent's own sequence of decisions, then epochs of clipped-PPO minibatches.

use super::batch::ObsBatch;
use super::net::TapNet;
use super::recorder::Decision;
use crate::agent::clip_grad_norm;
use candle_core::{D, Device, Result, Tensor};
use candle_nn::{AdamW, Optimizer, VarMap};
use continuum_core::rng::SimRng;
use rand::seq::SliceRandom;

/// PPO settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PpoSettings {
    /// Discount per decision.
    pub gamma: f64,
    /// GAE λ.
    pub gae_lambda: f64,
    /// Clip ε.
    pub clip: f64,
    /// Epochs over the episode's decisions.
    pub epochs: usize,
    /// Decisions per minibatch.
    pub minibatch: usize,
    /// Entropy bonus weight.
    pub entropy: f64,
    /// Value-loss weight.
    pub value_coef: f64,
    /// Gradient-norm clip.
    pub max_grad_norm: f64,
}

/// Losses of an update, averaged over its minibatches.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PpoStats {
    /// Clipped policy loss.
    pub policy: f64,
    /// Value loss.
    pub value: f64,
    /// Pointer entropy.
    pub entropy: f64,
}

/// Advantages and returns of `decisions` by GAE, each agent's decisions (in recorded order) a
/// sequence of its own; the last decision of a sequence bootstraps from 0.
pub fn advantages(decisions: &[Decision], gamma: f64, lambda: f64) -> (Vec<f32>, Vec<f32>) {
    let n = decisions.len();
    let mut adv = vec![0f32; n];
    let mut ret = vec![0f32; n];
    let mut clusters: Vec<u32> = decisions.iter().map(|d| d.cluster).collect();
    clusters.sort_unstable();
    clusters.dedup();
    for c in clusters {
        let idx: Vec<usize> = (0..n).filter(|&i| decisions[i].cluster == c).collect();
        let mut next_v = 0.0f64;
        let mut acc = 0.0f64;
        for &i in idx.iter().rev() {
            let d = &decisions[i];
            let delta = f64::from(d.reward) + gamma * next_v - f64::from(d.value);
            acc = delta + gamma * lambda * acc;
            adv[i] = acc as f32;
            ret[i] = (acc + f64::from(d.value)) as f32;
            next_v = f64::from(d.value);
        }
    }
    (adv, ret)
}

/// One PPO update of `net` (whose variables are `vars`) on an episode's decisions.
pub fn update(
    net: &TapNet,
    vars: &VarMap,
    opt: &mut AdamW,
    decisions: &[Decision],
    s: &PpoSettings,
    rng: &mut SimRng,
) -> Result<PpoStats> {
    if decisions.is_empty() {
        return Ok(PpoStats::default());
    }
    let (mut adv, ret) = advantages(decisions, s.gamma, s.gae_lambda);
    let mean = adv.iter().map(|x| f64::from(*x)).sum::<f64>() / adv.len() as f64;
    let var = adv
        .iter()
        .map(|x| (f64::from(*x) - mean).powi(2))
        .sum::<f64>()
        / adv.len() as f64;
    let sd = var.sqrt().max(1e-6);
    for a in &mut adv {
        *a = ((f64::from(*a) - mean) / sd) as f32;
    }
    let mut order: Vec<usize> = (0..decisions.len()).collect();
    let mut stats = PpoStats::default();
    let mut batches = 0usize;
    for _ in 0..s.epochs {
        order.shuffle(rng);
        for chunk in order.chunks(s.minibatch) {
            let st = minibatch(net, vars, opt, decisions, chunk, &adv, &ret, s)?;
            stats.policy += st.policy;
            stats.value += st.value;
            stats.entropy += st.entropy;
            batches += 1;
        }
    }
    let b = batches.max(1) as f64;
    Ok(PpoStats {
        policy: stats.policy / b,
        value: stats.value / b,
        entropy: stats.entropy / b,
    })
}

#[allow(clippy::too_many_arguments)]
fn minibatch(
    net: &TapNet,
    vars: &VarMap,
    opt: &mut AdamW,
    decisions: &[Decision],
    idx: &[usize],
    adv: &[f32],
    ret: &[f32],
    s: &PpoSettings,
) -> Result<PpoStats> {
    let dev = &Device::Cpu;
    let obs: Vec<_> = idx.iter().map(|&i| &decisions[i].obs).collect();
    let batch = ObsBatch::new(&obs, net.shape().features)?;
    let (p, k, _) = batch.dims;
    let out = net.forward(&batch)?;
    let b = idx.len();
    let mut ptr_idx = Vec::with_capacity(b);
    let mut al_idx = Vec::with_capacity(b);
    let mut m = Vec::with_capacity(b);
    let mut old = Vec::with_capacity(b);
    let mut a = Vec::with_capacity(b);
    let mut r = Vec::with_capacity(b);
    for &i in idx {
        let d = &decisions[i];
        match d.action {
            Some((j, kk)) => {
                ptr_idx.push(j);
                al_idx.push(j * k as u32 + kk);
                m.push(if d.won { 1f32 } else { 0.0 });
            }
            None => {
                ptr_idx.push(p as u32);
                al_idx.push(0);
                m.push(0.0);
            }
        }
        old.push(d.logp());
        a.push(adv[i]);
        r.push(ret[i]);
    }
    let ptr_idx = Tensor::from_vec(ptr_idx, (b, 1), dev)?;
    let al_idx = Tensor::from_vec(al_idx, (b, 1), dev)?;
    let m = Tensor::from_vec(m, b, dev)?;
    let old = Tensor::from_vec(old, b, dev)?;
    let a = Tensor::from_vec(a, b, dev)?;
    let r = Tensor::from_vec(r, b, dev)?;
    let lp_ptr = candle_nn::ops::log_softmax(&out.pointer, D::Minus1)?;
    let lp_al = candle_nn::ops::log_softmax(&out.alloc, D::Minus1)?.reshape((b, p * k))?;
    let logp = lp_ptr
        .gather(&ptr_idx, 1)?
        .squeeze(1)?
        .add(&lp_al.gather(&al_idx, 1)?.squeeze(1)?.mul(&m)?)?;
    let ratio = logp.sub(&old)?.exp()?;
    let s1 = ratio.mul(&a)?;
    let s2 = ratio.clamp(1.0 - s.clip, 1.0 + s.clip)?.mul(&a)?;
    let policy = s1.minimum(&s2)?.mean_all()?.neg()?;
    let value = out.value.sub(&r)?.sqr()?.mean_all()?;
    let probs = lp_ptr.exp()?;
    let entropy = probs.mul(&lp_ptr)?.sum(D::Minus1)?.neg()?.mean_all()?;
    let loss = policy
        .add(&(value.clone() * s.value_coef)?)?
        .sub(&(entropy.clone() * s.entropy)?)?;
    let mut grads = loss.backward()?;
    clip_grad_norm(vars, &mut grads, s.max_grad_norm)?;
    opt.step(&grads)?;
    Ok(PpoStats {
        policy: f64::from(policy.to_scalar::<f32>()?),
        value: f64::from(value.to_scalar::<f32>()?),
        entropy: f64::from(entropy.to_scalar::<f32>()?),
    })
}
