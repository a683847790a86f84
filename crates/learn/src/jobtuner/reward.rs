//! EdgeTuner's reward, eqs. 3–6 of Wen et al. 2023 ("Reward"), with the printed constants
//! (α = −0.02, −0.1, −0.002; β = 10, 5, 1; "DRL Training Setting"):
//!
//! - each job j_i completed in (t − 1, t]: r_i^job = α1 · JTL_i + β1 (eq. 3);
//! - the running tasks: r^run = α2 · [max TTL^run at t − max TTL^run at t − 1] + β2 (eq. 4), a
//!   running task's TTL being how long it has run;
//! - the waiting tasks: r^wait = α3 · max TTL^wait at t + β3 (eq. 5), how long the longest
//!   waiting task has waited;
//! - r_t = Σ_i r_i^job + r^run + r^wait (eq. 6).
//!
//! Times are in seconds (the paper's unit for JTL: "dozens of minutes").

/// The reward of one time-step: the latencies of the jobs completed in it, the longest running
/// task's run time at its start and end, the longest wait at its end.
pub(crate) fn reward(
    alpha: [f64; 3],
    beta: [f64; 3],
    completed_jtl_s: &[f64],
    max_run_before_s: f64,
    max_run_s: f64,
    max_wait_s: f64,
) -> f64 {
    let jobs: f64 = completed_jtl_s
        .iter()
        .map(|jtl| alpha[0] * jtl + beta[0])
        .sum();
    let run = alpha[1] * (max_run_s - max_run_before_s) + beta[1];
    let wait = alpha[2] * max_wait_s + beta[2];
    jobs + run + wait
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: [f64; 3] = [-0.02, -0.1, -0.002];
    const B: [f64; 3] = [10.0, 5.0, 1.0];

    #[test]
    fn the_printed_constants_give_these_rewards() {
        // Two jobs of 100 s and 600 s: (−2 + 10) + (−12 + 10) = 6; the longest run grew from
        // 30 s to 40 s: −1 + 5 = 4; the longest wait is 250 s: −0.5 + 1 = 0.5.
        let r = reward(A, B, &[100.0, 600.0], 30.0, 40.0, 250.0);
        assert!((r - 10.5).abs() < 1e-9, "{r}");
        // An idle cluster: only the two constants.
        assert_eq!(reward(A, B, &[], 0.0, 0.0, 0.0), 6.0);
    }

    #[test]
    fn longer_tails_earn_less() {
        let base = reward(A, B, &[100.0], 10.0, 20.0, 50.0);
        assert!(reward(A, B, &[200.0], 10.0, 20.0, 50.0) < base);
        assert!(reward(A, B, &[100.0], 10.0, 30.0, 50.0) < base);
        assert!(reward(A, B, &[100.0], 10.0, 20.0, 80.0) < base);
    }
}
