//! The Q-network (docs/model.md §9): a 1-D convolution over the time axis (features as channels), then
//! two dense layers — the trunk every class shares — then one head per stream class with one
//! Q-value per action (action branching, Tavakoli et al. 2018: each class's policy is a branch
//! of its own). With one class it is docs/model.md §9's network. Built with candle; weights are
//! initialised from a seeded stream so training is reproducible. As an implicit quantile
//! network (`algorithm: iqn`) it has one more layer, `tau`, embedding a quantile τ that
//! multiplies the first dense layer's output; its action values are the mean of the quantile
//! values over a fixed grid of τ ([`continuum_infer::agent::quantile_grid`]).

use candle_core::{DType, Device, Module, Result, Tensor};
use candle_nn::{Conv1d, Conv1dConfig, Linear, VarBuilder, VarMap, conv1d, linear};
use continuum_core::rng::{Purpose, stream_rng};
use continuum_infer::agent::{IQN_GRID, NetShape, quantile_grid};
use rand::Rng;

/// The Q-network.
#[derive(Debug, Clone)]
pub struct QNet {
    shape: NetShape,
    conv: Conv1d,
    fc1: Linear,
    fc2: Linear,
    out: Linear,
    /// The quantile embedding of an implicit quantile network (`n_cos` inputs), else none.
    tau: Option<Linear>,
}

impl QNet {
    /// Builds the layers on `vb` (creating their variables in its var map).
    pub fn new(shape: NetShape, vb: VarBuilder) -> Result<Self> {
        Self::with_quantiles(shape, 0, vb)
    }

    /// Builds the layers on `vb`; with `n_cos` > 0 an implicit quantile network whose τ
    /// embedding has `n_cos` cosines.
    pub fn with_quantiles(shape: NetShape, n_cos: usize, vb: VarBuilder) -> Result<Self> {
        let steps = shape.history - shape.conv_kernel + 1;
        let tau = if n_cos > 0 {
            Some(linear(n_cos, shape.hidden, vb.pp("tau"))?)
        } else {
            None
        };
        Ok(Self {
            tau,
            conv: conv1d(
                shape.features,
                shape.conv_channels,
                shape.conv_kernel,
                Conv1dConfig::default(),
                vb.pp("conv"),
            )?,
            fc1: linear(shape.conv_channels * steps, shape.hidden, vb.pp("fc1"))?,
            fc2: linear(shape.hidden, shape.hidden, vb.pp("fc2"))?,
            // One row block per class: the heads share nothing but the trunk's output.
            out: linear(shape.hidden, shape.classes * shape.actions, vb.pp("out"))?,
            shape,
        })
    }

    /// The network's shape.
    pub fn shape(&self) -> NetShape {
        self.shape
    }

    /// Whether it is an implicit quantile network.
    pub fn is_quantile(&self) -> bool {
        self.tau.is_some()
    }

    /// Q-values `[batch, classes, actions]` of states `[batch, features, history]` (an implicit
    /// quantile network's: the mean of its quantile values over the fixed grid of τ).
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let n = x.dim(0)?;
        if self.tau.is_some() {
            let grid = quantile_grid();
            let taus = Tensor::from_slice(&grid, (1, IQN_GRID), x.device())?
                .broadcast_as((n, IQN_GRID))?
                .contiguous()?;
            return self.quantiles(x, &taus)?.mean(1);
        }
        let h = self.trunk(x)?;
        let h = self.fc2.forward(&h)?.relu()?;
        self.out
            .forward(&h)?
            .reshape((n, self.shape.classes, self.shape.actions))
    }

    /// The convolution and the first dense layer: `[batch, hidden]`.
    fn trunk(&self, x: &Tensor) -> Result<Tensor> {
        let h = self.conv.forward(x)?.relu()?.flatten_from(1)?;
        self.fc1.forward(&h)?.relu()
    }

    /// An implicit quantile network's quantile values `[batch, quantiles, classes, actions]`
    /// of states `x` at `taus` (`[batch, quantiles]`, each in (0, 1)).
    pub fn quantiles(&self, x: &Tensor, taus: &Tensor) -> Result<Tensor> {
        let tau_layer = self.tau.as_ref().ok_or_else(|| {
            candle_core::Error::Msg("quantiles of a network without a τ embedding".into())
        })?;
        let (n, k) = taus.dims2()?;
        let n_cos = tau_layer.weight().dim(1)?;
        let h = self.trunk(x)?;
        let i: Vec<f32> = (0..n_cos)
            .map(|i| std::f32::consts::PI * i as f32)
            .collect();
        let i = Tensor::from_slice(&i, (1, 1, n_cos), x.device())?;
        let emb = taus.unsqueeze(2)?.broadcast_mul(&i)?.cos()?;
        let phi = tau_layer.forward(&emb)?.relu()?;
        let mixed = h.unsqueeze(1)?.broadcast_mul(&phi)?;
        let h2 = self.fc2.forward(&mixed)?.relu()?;
        self.out
            .forward(&h2)?
            .reshape((n, k, self.shape.classes, self.shape.actions))
    }
}

/// A var map with a network of `shape` on the CPU, weights drawn from `seed`.
pub fn build(shape: NetShape, seed: u64) -> Result<(VarMap, QNet)> {
    build_with(shape, 0, seed)
}

/// [`build`], as an implicit quantile network with `n_cos` cosines when `n_cos` > 0.
pub(crate) fn build_with(shape: NetShape, n_cos: usize, seed: u64) -> Result<(VarMap, QNet)> {
    let vm = VarMap::new();
    let net = QNet::with_quantiles(
        shape,
        n_cos,
        VarBuilder::from_varmap(&vm, DType::F32, &Device::Cpu),
    )?;
    init_weights(&vm, seed)?;
    Ok((vm, net))
}

/// Re-initialises every variable: weights uniform in ±1/√fan_in (PyTorch's default for
/// linear and convolution layers), biases zero. Variables are visited in name order so the
/// draw does not depend on hash-map order.
pub fn init_weights(vm: &VarMap, seed: u64) -> Result<()> {
    let data = vm.data().lock().expect("var map lock");
    let mut names: Vec<&String> = data.keys().collect();
    names.sort();
    let mut rng = stream_rng(seed, Purpose::Other, 0x6e6e, 0);
    for name in names {
        let var = &data[name];
        let dims = var.dims().to_vec();
        let n: usize = dims.iter().product();
        let values: Vec<f32> = if name.ends_with("bias") {
            vec![0.0; n]
        } else {
            let fan_in: usize = dims[1..].iter().product::<usize>().max(1);
            let b = 1.0 / (fan_in as f64).sqrt();
            (0..n).map(|_| rng.random_range(-b..b) as f32).collect()
        };
        var.set(&Tensor::from_vec(values, dims, &Device::Cpu)?)?;
    }
    Ok(())
}

/// Copies every variable of `from` into the same-named variable of `to`.
pub fn copy_weights(from: &VarMap, to: &VarMap) -> Result<()> {
    let src = from.data().lock().expect("var map lock");
    let dst = to.data().lock().expect("var map lock");
    for (name, var) in src.iter() {
        if let Some(d) = dst.get(name) {
            d.set(var.as_tensor())?;
        }
    }
    Ok(())
}

/// Every variable of `vm` in name order, flattened into one vector.
pub fn flat(vm: &VarMap) -> Result<Vec<f32>> {
    let data = vm.data().lock().expect("var map lock");
    let mut names: Vec<&String> = data.keys().collect();
    names.sort();
    let mut out = Vec::new();
    for n in names {
        out.extend(data[n].as_tensor().flatten_all()?.to_vec1::<f32>()?);
    }
    Ok(out)
}

/// Sets every variable of `vm` (name order) from `values` (as [`flat`] wrote them).
pub fn set_flat(vm: &VarMap, values: &[f32]) -> Result<()> {
    let data = vm.data().lock().expect("var map lock");
    let mut names: Vec<&String> = data.keys().collect();
    names.sort();
    let mut at = 0;
    for n in names {
        let v = &data[n];
        let len = v.elem_count();
        let dims = v.dims().to_vec();
        v.set(&Tensor::from_slice(
            &values[at..at + len],
            dims,
            &Device::Cpu,
        )?)?;
        at += len;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::weights_of;
    use continuum_infer::agent::FastQNet;

    /// On a matrix of shapes and random states (values spanning the encoder's range and
    /// beyond), the plain forward the agents decide with equals candle's within 1e-5 (relative
    /// to the value's scale).
    #[test]
    fn the_plain_forward_equals_candles() {
        let mut rng = stream_rng(3, Purpose::Other, 0, 0);
        for (i, shape) in [
            (7, 4, 8, 2, 16, 5, 1),
            (12, 6, 16, 3, 64, 7, 4),
            (20, 8, 32, 4, 128, 15, 3),
            (5, 3, 4, 3, 8, 2, 2),
        ]
        .into_iter()
        .enumerate()
        {
            let (features, history, conv_channels, conv_kernel, hidden, actions, classes) = shape;
            let shape = NetShape {
                features,
                history,
                conv_channels,
                conv_kernel,
                hidden,
                actions,
                classes,
            };
            // Each shape as a Q-network and as an implicit quantile network.
            for n_cos in [0, 8] {
                let (vm, net) = build_with(shape, n_cos, i as u64 + 1).unwrap();
                let mut fast = FastQNet::read(shape, &weights_of(&vm).unwrap()).unwrap();
                let n = 9;
                let x: Vec<f32> = (0..n * features * history)
                    .map(|_| rng.random_range(-3.0..3.0))
                    .collect();
                let t = Tensor::from_slice(&x, (n, features, history), &Device::Cpu).unwrap();
                let want = net.forward(&t).unwrap().to_vec3::<f32>().unwrap();
                let mut q = Vec::new();
                for b in 0..n {
                    let one = &x[b * features * history..(b + 1) * features * history];
                    fast.forward(one, &mut q);
                    assert_eq!(q.len(), classes * actions);
                    for c in 0..classes {
                        for a in 0..actions {
                            let (w, g) = (want[b][c][a], q[c * actions + a]);
                            assert!(
                                (w - g).abs() <= 1e-5 * w.abs().max(1.0),
                                "shape {i}, n_cos {n_cos}, state {b}, class {c}, action {a}: candle {w}, plain {g}"
                            );
                        }
                    }
                }
            }
        }
    }
}
