//! The Q-network's forward pass in plain Rust (docs/model.md §9), for the decision path: the
//! same arithmetic as [`QNet::forward`] on one state at a time, over weights copied once out of
//! the candle variables, with no tensor allocation per call. Training stays in candle; a
//! trained [`super::Agent`] decides with this.

use super::net::{NetShape, QNet};
use candle_core::Result;

use crate::linalg::{Dense, dot};

/// `out = relu?(W x + b)`, reusing `out`'s allocation.
fn layer(d: &Dense, x: &[f32], out: &mut Vec<f32>, relu: bool) {
    out.clear();
    d.apply(&[x], out);
    if relu {
        out.iter_mut().for_each(|v| *v = v.max(0.0));
    }
}

/// [`QNet`]'s weights as plain vectors, and the scratch space of one forward pass.
#[derive(Debug, Clone)]
pub struct FastQNet {
    shape: NetShape,
    /// Convolution weights `[out channel][in channel][tap]` and biases.
    conv_w: Vec<f32>,
    conv_b: Vec<f32>,
    fc1: Dense,
    fc2: Dense,
    out: Dense,
    h0: Vec<f32>,
    h1: Vec<f32>,
    h2: Vec<f32>,
}

impl FastQNet {
    /// Copies the weights of `net`.
    pub fn new(net: &QNet) -> Result<Self> {
        let (conv, fc1, fc2, out) = net.layers();
        let conv_b = match conv.bias() {
            Some(b) => b.to_vec1::<f32>()?,
            None => vec![0.0; net.shape().conv_channels],
        };
        Ok(Self {
            shape: net.shape(),
            conv_w: conv.weight().flatten_all()?.to_vec1::<f32>()?,
            conv_b,
            fc1: Dense::of(fc1)?,
            fc2: Dense::of(fc2)?,
            out: Dense::of(out)?,
            h0: Vec::new(),
            h1: Vec::new(),
            h2: Vec::new(),
        })
    }

    /// The network's shape.
    pub fn shape(&self) -> NetShape {
        self.shape
    }

    /// Q-values of one state `x` (`[features][history]`, row-major, as [`QNet::forward`]
    /// takes a batch of them), `[class][action]` row-major, into `q`.
    pub fn forward(&mut self, x: &[f32], q: &mut Vec<f32>) {
        let s = self.shape;
        debug_assert_eq!(x.len(), s.features * s.history);
        let steps = s.history - s.conv_kernel + 1;
        // The convolution (no padding, stride 1), then ReLU, flattened channel-major as
        // candle's `flatten_from(1)` of `[channels, steps]`.
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
        layer(&self.fc2, &self.h1, &mut self.h2, true);
        layer(&self.out, &self.h2, q, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::net::build;
    use candle_core::{Device, Tensor};
    use continuum_core::rng::{Purpose, stream_rng};
    use rand::Rng;

    /// On a matrix of shapes and random states (values spanning the encoder's range and
    /// beyond), the plain forward equals candle's within 1e-5 (relative to the value's scale).
    #[test]
    fn equals_the_candle_forward() {
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
            let (_vm, net) = build(shape, i as u64 + 1).unwrap();
            let mut fast = FastQNet::new(&net).unwrap();
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
                            "shape {i}, state {b}, class {c}, action {a}: candle {w}, plain {g}"
                        );
                    }
                }
            }
        }
    }
}
