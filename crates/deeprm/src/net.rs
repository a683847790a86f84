//! DeepRM's policy network (one hidden layer, ReLU, a softmax over the void action and the
//! slots; the public code's 20 hidden units) and, for the actor-critic variant, a critic of the
//! same shape. Training runs through candle; rollouts use [`Snapshot`], a plain copy of the
//! weights whose forward pass skips the image's zero cells (most of them).

use continuum_learn::agent::init_weights;

use candle_core::{DType, Device, Module, Result, Tensor};
use candle_nn::{Linear, VarBuilder, VarMap, linear};
use serde::{Deserialize, Serialize};

/// The network's sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PgShape {
    /// Observation length.
    pub input: usize,
    /// Hidden units.
    pub hidden: usize,
    /// Actions.
    pub actions: usize,
    /// Whether a critic is present.
    pub critic: bool,
}

/// The policy (and critic) in candle.
pub struct PgNet {
    shape: PgShape,
    l1: Linear,
    l2: Linear,
    critic: Option<(Linear, Linear)>,
}

impl PgNet {
    /// Builds the layers under `vb`.
    pub fn new(shape: PgShape, vb: VarBuilder) -> Result<Self> {
        let critic = if shape.critic {
            // The critic also sees the share of the episode left (returns depend on it).
            Some((
                linear(shape.input + 1, shape.hidden, vb.pp("c1"))?,
                linear(shape.hidden, 1, vb.pp("c2"))?,
            ))
        } else {
            None
        };
        Ok(Self {
            shape,
            l1: linear(shape.input, shape.hidden, vb.pp("l1"))?,
            l2: linear(shape.hidden, shape.actions, vb.pp("l2"))?,
            critic,
        })
    }

    /// Its sizes.
    pub fn shape(&self) -> PgShape {
        self.shape
    }

    /// Action logits of a batch of observations `[n, input]`.
    pub fn logits(&self, x: &Tensor) -> Result<Tensor> {
        self.l2.forward(&self.l1.forward(x)?.relu()?)
    }

    /// Values of a batch `[n, input + 1]` (observation and share of the episode left).
    pub fn value(&self, x: &Tensor) -> Result<Option<Tensor>> {
        match &self.critic {
            Some((c1, c2)) => Ok(Some(c2.forward(&c1.forward(x)?.relu()?)?.squeeze(1)?)),
            None => Ok(None),
        }
    }

    /// A plain copy of the policy's weights for rollouts.
    pub fn snapshot(&self) -> Result<Snapshot> {
        let w1 = self
            .l1
            .weight()
            .t()?
            .contiguous()?
            .flatten_all()?
            .to_vec1()?;
        let b1 = bias(&self.l1)?;
        let w2 = self.l2.weight().flatten_all()?.to_vec1()?;
        let b2 = bias(&self.l2)?;
        Ok(Snapshot {
            hidden: self.shape.hidden,
            actions: self.shape.actions,
            w1t: w1,
            b1,
            w2,
            b2,
        })
    }
}

fn bias(l: &Linear) -> Result<Vec<f32>> {
    match l.bias() {
        Some(b) => b.to_vec1(),
        None => Ok(vec![0.0; l.weight().dims()[0]]),
    }
}

/// A var map holding a network of `shape`, weights drawn from `seed`.
pub fn build(shape: PgShape, seed: u64) -> Result<(VarMap, PgNet)> {
    let vm = VarMap::new();
    let net = PgNet::new(
        shape,
        VarBuilder::from_varmap(&vm, DType::F32, &Device::Cpu),
    )?;
    init_weights(&vm, seed)?;
    Ok((vm, net))
}

/// The policy's weights as plain vectors.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    hidden: usize,
    actions: usize,
    /// First layer, transposed: `[input][hidden]`.
    w1t: Vec<f32>,
    b1: Vec<f32>,
    /// Second layer: `[actions][hidden]`.
    w2: Vec<f32>,
    b2: Vec<f32>,
}

impl Snapshot {
    /// Action probabilities for `obs`, actions where `mask` is false given probability 0 (all
    /// allowed without a mask).
    pub fn probs(&self, obs: &[f32], mask: Option<&[bool]>, out: &mut Vec<f32>) {
        let h = self.hidden;
        let mut hid = self.b1.clone();
        for (i, &x) in obs.iter().enumerate() {
            if x != 0.0 {
                let row = &self.w1t[i * h..(i + 1) * h];
                for (a, w) in hid.iter_mut().zip(row) {
                    *a += x * w;
                }
            }
        }
        for a in &mut hid {
            *a = a.max(0.0);
        }
        out.clear();
        for k in 0..self.actions {
            let row = &self.w2[k * h..(k + 1) * h];
            let z = self.b2[k] + row.iter().zip(&hid).map(|(w, x)| w * x).sum::<f32>();
            out.push(z);
        }
        let allowed = |k: usize| mask.is_none_or(|m| m[k]);
        let top = (0..self.actions)
            .filter(|&k| allowed(k))
            .map(|k| out[k])
            .fold(f32::NEG_INFINITY, f32::max);
        let mut sum = 0.0;
        for (k, z) in out.iter_mut().enumerate() {
            *z = if allowed(k) { (*z - top).exp() } else { 0.0 };
            sum += *z;
        }
        for z in out.iter_mut() {
            *z /= sum;
        }
    }
}
