//! Small vector arithmetic shared by the plain-Rust forwards of the decision path: a dense
//! layer copied out of candle, and the dot product.

use candle_core::Result;

/// Σ a·b over eight lanes (so that the compiler can vectorise the loop; the order of the sum
/// differs from candle's, within float rounding).
#[inline]
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let tail: f32 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

/// A dense layer: weights `[out][in]` row-major, bias (zeros for a layer without one).
#[derive(Debug, Clone)]
pub(crate) struct Dense {
    w: Vec<f32>,
    b: Vec<f32>,
    inputs: usize,
}

impl Dense {
    pub(crate) fn of(l: &candle_nn::Linear) -> Result<Self> {
        let w = l.weight();
        let (outs, inputs) = w.dims2()?;
        Ok(Self {
            w: w.flatten_all()?.to_vec1::<f32>()?,
            b: match l.bias() {
                Some(b) => b.to_vec1::<f32>()?,
                None => vec![0.0; outs],
            },
            inputs,
        })
    }

    pub(crate) fn outputs(&self) -> usize {
        self.b.len()
    }

    /// `W x + b` (x given in parts, concatenated), appended to `out`.
    pub(crate) fn apply(&self, parts: &[&[f32]], out: &mut Vec<f32>) {
        for (row, b) in self.w.chunks_exact(self.inputs).zip(&self.b) {
            let mut v = *b;
            let mut at = 0;
            for x in parts {
                v += dot(&row[at..at + x.len()], x);
                at += x.len();
            }
            out.push(v);
        }
    }

    /// `Wᵀ y` (the bias left out).
    pub(crate) fn transposed(&self, y: &[f32]) -> Vec<f32> {
        let mut out = vec![0.0; self.inputs];
        for (row, v) in self.w.chunks_exact(self.inputs).zip(y) {
            out.iter_mut().zip(row).for_each(|(o, w)| *o += w * v);
        }
        out
    }

    /// `relu(W x + b)` as a new vector.
    pub(crate) fn relu(&self, parts: &[&[f32]]) -> Vec<f32> {
        let mut out = Vec::with_capacity(self.outputs());
        self.apply(parts, &mut out);
        out.iter_mut().for_each(|v| *v = v.max(0.0));
        out
    }

    /// `W x + b` as a new vector.
    pub(crate) fn linear(&self, parts: &[&[f32]]) -> Vec<f32> {
        let mut out = Vec::with_capacity(self.outputs());
        self.apply(parts, &mut out);
        out
    }
}
