//! Dense FP32 tensors as queries carry them, and the deterministic test input every face
//! (worker tests, load generator, profiler) agrees on.

/// A dense FP32 tensor: row-major data and its shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    /// Dimensions, outermost first (the batch).
    pub shape: Vec<usize>,
    /// Elements in row-major order; `data.len()` is the product of `shape`.
    pub data: Vec<f32>,
}

/// A deterministic test input of `n` items of shape `item`: element k of the flattened tensor is
/// `((k · 7919) mod 251) / 251 − 0.5`. `tools/make_models.py` uses the same formula to write
/// `models/reference.json`.
pub fn reference_input(n: usize, item: &[usize]) -> Vec<f32> {
    let len = n * item.iter().product::<usize>();
    (0..len)
        .map(|k| ((k as u64 * 7919) % 251) as f32 / 251.0 - 0.5)
        .collect()
}
