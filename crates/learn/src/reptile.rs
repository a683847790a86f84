//! The first-order meta-training update shared by every meta-learner here (Reptile, Nichol et
//! al. 2018): θ ← θ + ε · mean over the tasks of each task's direction (its adapted weights less
//! θ, or for first-order MAML its last inner step), ε falling linearly to 0 over the
//! meta-iterations.

/// θ ← θ + ε · mean of `dirs`.
pub fn meta_train_step(theta: &mut [f32], dirs: &[Vec<f32>], eps: f64) {
    let n = dirs.len().max(1) as f32;
    for (i, t) in theta.iter_mut().enumerate() {
        let m: f32 = dirs.iter().map(|d| d[i]).sum::<f32>() / n;
        *t += eps as f32 * m;
    }
}

/// The step size of meta-iteration `it` of `total`: ε0 falling linearly to 0.
pub fn step_size(eps0: f64, it: usize, total: usize) -> f64 {
    eps0 * (1.0 - it as f64 / total.max(1) as f64)
}
