//! The Q-network's forward pass in plain Rust (docs/model.md §9), for the decision path: a 1-D
//! convolution over the time axis (features as channels), two dense layers (the trunk every
//! class shares), then one head per stream class with one Q-value per action, on one state at a
//! time over the checkpoint's weights, with no allocation per call once its buffers have grown.
//! Training (candle's `QNet` in `continuum-learn`) checks its forward against this within 1e-5;
//! a trained [`super::Agent`] decides with it. An implicit quantile network (`algorithm: iqn`,
//! recognised by its `tau` layer) values an action by the mean of its quantiles over the fixed
//! grid [`quantile_grid`], as training does.

use crate::linalg::{Dense, dot};
use crate::weights::Weights;

/// Shape of a network: input `[batch, features, history]`, output `[batch, classes, actions]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetShape {
    /// Features per window (channels of the convolution).
    pub features: usize,
    /// Windows stacked (length of the convolution input).
    pub history: usize,
    /// Output channels of the convolution.
    pub conv_channels: usize,
    /// Kernel size over time.
    pub conv_kernel: usize,
    /// Hidden width of the dense layers.
    pub hidden: usize,
    /// Actions per head.
    pub actions: usize,
    /// Heads: stream classes, each choosing its own action.
    pub classes: usize,
}

impl NetShape {
    /// Time steps the convolution outputs (no padding, stride 1).
    pub fn steps(&self) -> usize {
        self.history - self.conv_kernel + 1
    }
}

/// Quantiles an implicit quantile network averages to value an action (K of Dabney et al.,
/// 2018).
pub const IQN_GRID: usize = 32;

/// The fixed τ of an implicit quantile network's action values: the midpoints (k + ½) / K of K
/// equal slices of (0, 1), so that a decision is deterministic (the paper samples them).
pub fn quantile_grid() -> [f32; IQN_GRID] {
    std::array::from_fn(|k| (k as f32 + 0.5) / IQN_GRID as f32)
}

/// The cosine embedding of quantile `tau`: cos(π i τ) for i = 0 … n − 1, into `out`.
pub fn cos_embedding(tau: f32, n: usize, out: &mut Vec<f32>) {
    out.clear();
    out.extend((0..n).map(|i| (std::f32::consts::PI * i as f32 * tau).cos()));
}

/// `out = relu?(W x + b)`, reusing `out`'s allocation.
fn layer(d: &Dense, x: &[f32], out: &mut Vec<f32>, relu: bool) {
    out.clear();
    d.apply(&[x], out);
    if relu {
        out.iter_mut().for_each(|v| *v = v.max(0.0));
    }
}

/// The Q-network's weights as plain vectors, and the scratch space of one forward pass.
#[derive(Debug, Clone)]
pub struct FastQNet {
    shape: NetShape,
    /// Convolution weights `[out channel][in channel][tap]` and biases.
    conv_w: Vec<f32>,
    conv_b: Vec<f32>,
    fc1: Dense,
    fc2: Dense,
    out: Dense,
    /// An implicit quantile network's τ embedding (`hidden × n_cos`), else none.
    tau: Option<Dense>,
    h0: Vec<f32>,
    h1: Vec<f32>,
    h2: Vec<f32>,
    emb: Vec<f32>,
    phi: Vec<f32>,
    mixed: Vec<f32>,
    o: Vec<f32>,
}

impl FastQNet {
    /// The network of `shape` from `weights` (variables `conv`, `fc1`, `fc2` and `out`, as the
    /// training network names them, and `tau` for an implicit quantile network); a missing
    /// weight or one of another shape is refused.
    pub fn read(shape: NetShape, weights: &Weights) -> Result<Self, String> {
        let s = shape;
        if s.conv_kernel == 0 || s.conv_kernel > s.history {
            return Err(format!(
                "kernel {} does not fit a history of {}",
                s.conv_kernel, s.history
            ));
        }
        let conv_w = weights
            .tensor("conv.weight", &[s.conv_channels, s.features, s.conv_kernel])?
            .to_vec();
        let conv_b = weights.tensor("conv.bias", &[s.conv_channels])?.to_vec();
        let dense = |name: &str, outs: usize, ins: usize| -> Result<Dense, String> {
            let (w, b) = weights.linear(name, outs, ins, true)?;
            Ok(Dense::new(w, b))
        };
        let tau = match weights.get("tau.weight") {
            Some(p) if p.dims.len() == 2 => Some(dense("tau", s.hidden, p.dims[1])?),
            Some(p) => {
                return Err(format!(
                    "tau.weight: expected 2 dimensions, got {:?}",
                    p.dims
                ));
            }
            None => None,
        };
        Ok(Self {
            shape,
            conv_w,
            conv_b,
            fc1: dense("fc1", s.hidden, s.conv_channels * s.steps())?,
            fc2: dense("fc2", s.hidden, s.hidden)?,
            out: dense("out", s.classes * s.actions, s.hidden)?,
            tau,
            h0: Vec::new(),
            h1: Vec::new(),
            h2: Vec::new(),
            emb: Vec::new(),
            phi: Vec::new(),
            mixed: Vec::new(),
            o: Vec::new(),
        })
    }

    /// The network's shape.
    pub fn shape(&self) -> NetShape {
        self.shape
    }

    /// Q-values of one state `x` (`[features][history]`, row-major), `[class][action]`
    /// row-major, into `q`.
    pub fn forward(&mut self, x: &[f32], q: &mut Vec<f32>) {
        let s = self.shape;
        debug_assert_eq!(x.len(), s.features * s.history);
        let steps = s.history - s.conv_kernel + 1;
        // The convolution (no padding, stride 1), then ReLU, flattened channel-major (as
        // `[channels, steps]` row-major).
        self.h0.clear();
        for c in 0..s.conv_channels {
            let wc =
                &self.conv_w[c * s.features * s.conv_kernel..(c + 1) * s.features * s.conv_kernel];
            for t in 0..steps {
                let mut v = self.conv_b[c];
                for f in 0..s.features {
                    let w = &wc[f * s.conv_kernel..(f + 1) * s.conv_kernel];
                    v += dot(w, &x[f * s.history + t..f * s.history + t + s.conv_kernel]);
                }
                self.h0.push(v.max(0.0));
            }
        }
        layer(&self.fc1, &self.h0, &mut self.h1, true);
        let Some(tau) = &self.tau else {
            layer(&self.fc2, &self.h1, &mut self.h2, true);
            layer(&self.out, &self.h2, q, false);
            return;
        };
        // An implicit quantile network: the mean over the grid of τ of the quantile values,
        // each the trunk's output times the τ embedding, through the last two layers.
        let n_cos = tau.inputs();
        q.clear();
        q.resize(s.classes * s.actions, 0.0);
        let grid = quantile_grid();
        for &t in &grid {
            cos_embedding(t, n_cos, &mut self.emb);
            layer(tau, &self.emb, &mut self.phi, true);
            self.mixed.clear();
            self.mixed
                .extend(self.h1.iter().zip(&self.phi).map(|(h, p)| h * p));
            layer(&self.fc2, &self.mixed, &mut self.h2, true);
            layer(&self.out, &self.h2, &mut self.o, false);
            q.iter_mut().zip(&self.o).for_each(|(a, b)| *a += b);
        }
        let k = 1.0 / grid.len() as f32;
        q.iter_mut().for_each(|v| *v *= k);
    }
}
