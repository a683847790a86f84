//! `least-predicted`: the least *predicted* end-to-end delay — e2e(v, n) plus the queueing delay
//! the worker's load predicts (docs/model.md §6). "Fast now" is `least-impedance`; this is "fast
//! under load".
//!
//! Queue model (an assumption, stated in docs/model.md §6): the worker is an M/D/1 queue whose
//! deterministic service rate is its capacity C (normalised qps) and whose arrival rate is the
//! seen load plus the stream's own demand, so with utilisation u = (L + demand) / C the mean
//! wait is W = u / (2 C (1 − u)) seconds (Pollaczek–Khinchine with zero service-time variance).
//! Feasibility keeps u ≤ 1; u is capped at [`MAX_UTILISATION`] so a full worker predicts a long
//! but finite wait.

use super::{Policy, pick_min};
use crate::feasibility::Candidate;
use crate::rng::SimRng;

/// The utilisation above which the wait is taken at this value (a full worker's M/D/1 wait is
/// infinite).
pub const MAX_UTILISATION: f64 = 0.99;

/// The M/D/1 mean wait, ms, of a worker of capacity `capacity_qps` at utilisation `u`.
pub fn md1_wait_ms(capacity_qps: f64, u: f64) -> f64 {
    if capacity_qps <= 0.0 {
        return f64::INFINITY;
    }
    let u = u.clamp(0.0, MAX_UTILISATION);
    1000.0 * u / (2.0 * capacity_qps * (1.0 - u))
}

/// e2e(v, n) plus the predicted wait, ms.
fn predicted_ms(c: &Candidate) -> f64 {
    let u = if c.capacity_qps > 0.0 {
        (c.load_qps + c.demand_qps) / c.capacity_qps
    } else {
        1.0
    };
    c.e2e_ms + md1_wait_ms(c.capacity_qps, u)
}

/// Binds to the binding of least predicted delay.
pub struct LeastPredicted;

impl Policy for LeastPredicted {
    fn name(&self) -> &'static str {
        "least-predicted"
    }
    fn choose(&self, c: &[Candidate], _: &mut SimRng) -> usize {
        pick_min(c, predicted_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(worker: u32, e2e: f64, load: f64, cap: f64) -> Candidate {
        Candidate {
            worker,
            cluster: worker,
            variant: 0,
            net_ms: 1.0,
            e2e_ms: e2e,
            load_qps: load,
            capacity_qps: cap,
            demand_qps: 10.0,
            cluster_shares: [0.0; 2],
        }
    }

    #[test]
    fn the_md1_wait_by_hand() {
        // C 100 qps, u 0.5: 0.5 / (2 · 100 · 0.5) s = 5 ms; u 0.9: 0.9 / (2 · 100 · 0.1) = 45 ms.
        assert!((md1_wait_ms(100.0, 0.5) - 5.0).abs() < 1e-9);
        assert!((md1_wait_ms(100.0, 0.9) - 45.0).abs() < 1e-9);
        // Capped at u = 0.99: 0.99 / (2 · 100 · 0.01) = 495 ms, also for u ≥ 1.
        assert!((md1_wait_ms(100.0, 1.5) - 495.0).abs() < 1e-9);
        assert_eq!(md1_wait_ms(0.0, 0.1), f64::INFINITY);
    }

    #[test]
    fn a_busy_fast_worker_loses_to_an_idle_slower_one() {
        // Worker 0: e2e 10, u = (80 + 10)/100 = 0.9 → 10 + 45 = 55 ms.
        // Worker 1: e2e 30, u = (0 + 10)/100 = 0.1 → 30 + 0.1/(2·100·0.9) s ≈ 30.56 ms ← best.
        // `least-impedance` would take worker 0.
        let c = [cand(0, 10.0, 80.0, 100.0), cand(1, 30.0, 0.0, 100.0)];
        let mut rng = crate::rng::stream_rng(1, crate::rng::Purpose::Other, 0, 0);
        assert_eq!(LeastPredicted.choose(&c, &mut rng), 1);
        assert!((predicted_ms(&c[0]) - 55.0).abs() < 1e-9);
        // Lightly loaded, the faster one wins: u = 0.2 → 10 + 1.25 ms.
        let c = [cand(0, 10.0, 10.0, 100.0), cand(1, 30.0, 0.0, 100.0)];
        assert_eq!(LeastPredicted.choose(&c, &mut rng), 0);
    }
}
