//! Small vector arithmetic shared by the plain-Rust forwards of the decision path: dense layers
//! (row-major for the Q-network, input-major for TapFinger's hot loops) and the dot product.

/// Σ a·b over eight lanes (so that the compiler can vectorise the loop; the order of the sum
/// differs from candle's, within float rounding).
#[inline(always)]
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
    /// The layer of row-major weights `w` (`[out][in]`) and bias `b` (`out` entries).
    pub(crate) fn new(w: Vec<f32>, b: Vec<f32>) -> Self {
        let inputs = w.len() / b.len().max(1);
        Self { w, b, inputs }
    }

    /// Inputs per output.
    pub(crate) fn inputs(&self) -> usize {
        self.inputs
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
}

/// A dense layer stored input-major (`wt[i · out + o]`), for the hot loops of the decision path:
/// `y = b + Σᵢ xᵢ · W[:, i]` runs over the outputs, so it vectorises at any width, and every
/// output adds its inputs in input order whatever the vector width (the same bits with SSE or
/// AVX).
#[derive(Debug, Clone)]
pub(crate) struct Cols {
    wt: Vec<f32>,
    b: Vec<f32>,
}

impl Cols {
    /// The layer of row-major weights `w` (`[out][in]`) and bias `b` (`out` entries).
    pub(crate) fn from_rows(w: &[f32], b: Vec<f32>) -> Self {
        let outs = b.len();
        let ins = w.len() / outs.max(1);
        let mut wt = vec![0.0; w.len()];
        for (o, row) in w.chunks_exact(ins.max(1)).enumerate() {
            for (i, v) in row.iter().enumerate() {
                wt[i * outs + o] = *v;
            }
        }
        Self { wt, b }
    }

    /// Its number of outputs.
    pub(crate) fn outputs(&self) -> usize {
        self.b.len()
    }

    /// `out = W x + b`, `x` given in parts (concatenated); `out` has [`Cols::outputs`] entries.
    /// Outputs go 32, then 8, then 1 at a time, each block's sums held in registers over every
    /// input (independent additions, so the loop is not bound by their latency).
    #[inline(always)]
    pub(crate) fn apply(&self, parts: &[&[f32]], out: &mut [f32]) {
        let n = self.b.len();
        let mut at = 0;
        while at + 32 <= n {
            self.block::<32>(parts, at, out);
            at += 32;
        }
        while at + 8 <= n {
            self.block::<8>(parts, at, out);
            at += 8;
        }
        while at < n {
            self.block::<1>(parts, at, out);
            at += 1;
        }
    }

    /// Outputs `first..first + B` of [`Cols::apply`].
    #[inline(always)]
    fn block<const B: usize>(&self, parts: &[&[f32]], first: usize, out: &mut [f32]) {
        let n = self.b.len();
        let mut acc = [0f32; B];
        acc.copy_from_slice(&self.b[first..first + B]);
        let mut at = first;
        for x in parts {
            for &v in *x {
                let col = &self.wt[at..at + B];
                for l in 0..B {
                    acc[l] += v * col[l];
                }
                at += n;
            }
        }
        out[first..first + B].copy_from_slice(&acc);
    }

    /// `out = relu(W x + b)`.
    #[inline(always)]
    pub(crate) fn relu(&self, parts: &[&[f32]], out: &mut [f32]) {
        self.apply(parts, out);
        out.iter_mut().for_each(|v| *v = v.max(0.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The input-major layer equals the row-major one within float rounding, for widths that
    /// take every block size (32, 8, 1) and inputs given in parts.
    #[test]
    fn input_major_layer_equals_the_row_major_product() {
        for (outs, ins) in [(32, 10), (41, 7), (3, 64), (64, 33)] {
            let w: Vec<f32> = (0..outs * ins)
                .map(|i| ((i * 7919) % 97) as f32 / 97.0 - 0.5)
                .collect();
            let b: Vec<f32> = (0..outs).map(|o| o as f32 * 0.01).collect();
            let x: Vec<f32> = (0..ins).map(|i| (i as f32 * 0.37).sin()).collect();
            let l = Cols::from_rows(&w, b.clone());
            let mut out = vec![0.0; outs];
            let cut = ins / 3;
            l.apply(&[&x[..cut], &x[cut..]], &mut out);
            for o in 0..outs {
                let want: f64 = f64::from(b[o])
                    + (0..ins)
                        .map(|i| f64::from(w[o * ins + i]) * f64::from(x[i]))
                        .sum::<f64>();
                assert!(
                    (f64::from(out[o]) - want).abs() < 1e-5,
                    "output {o} of {outs}×{ins}"
                );
            }
        }
    }
}
