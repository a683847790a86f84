//! The reward of a slot and its (super)gradient.
//!
//! q(x, y) = Σ_l x_l · ( Σ_{r ∈ R_l} Σ_k f_r^k(y_(l,r)^k) − max_k β_k Σ_{r ∈ R_l} y_(l,r)^k )
//!
//! The first term is the computation gain of port l's job, summed over the instances it runs
//! on and the resource types; the second the communication overhead, taken as the *dominant*
//! one: the resource type whose allocation, weighted by β_k, is largest. q is concave in y (a
//! sum of concave gains minus a maximum of linear forms) and linear in the demand x.
//!
//! The maximum is not differentiable where two resource types tie; [`gradient`] then charges
//! the lowest-indexed of them, which gives a supergradient (all OGA needs).

use super::problem::{Allocation, Problem};

/// Scratch space for [`gradient`] and [`reward`] (no allocation per call once warm).
#[derive(Debug, Default, Clone)]
pub struct RewardScratch {
    totals: Vec<f64>,
}

/// Fills `totals[l · K + k]` with Σ_{r ∈ R_l} y_(l,r)^k.
fn port_totals(p: &Problem, y: &Allocation, totals: &mut Vec<f64>) {
    let k = p.resources();
    totals.clear();
    totals.resize(p.ports() * k, 0.0);
    for (e, link) in p.links().iter().enumerate() {
        for j in 0..k {
            totals[link.port * k + j] += y.get(e, j);
        }
    }
}

/// The dominant resource of a port given its totals (ties: the lowest index) and its overhead.
fn dominant(p: &Problem, totals: &[f64]) -> (usize, f64) {
    let mut best = (0, f64::NEG_INFINITY);
    for (j, &s) in totals.iter().enumerate() {
        let o = p.beta(j) * s;
        if o > best.1 {
            best = (j, o);
        }
    }
    best
}

/// The reward q(x, y) of one slot with demand `x` (x_l ≥ 0; 1 or 0 in the paper: whether a
/// job of type l arrived).
pub fn reward(p: &Problem, x: &[f64], y: &Allocation, scratch: &mut RewardScratch) -> f64 {
    let k = p.resources();
    port_totals(p, y, &mut scratch.totals);
    let mut q = 0.0;
    for (l, &xl) in x.iter().enumerate().take(p.ports()) {
        if xl == 0.0 {
            continue;
        }
        let mut gain = 0.0;
        for &e in p.port_links(l) {
            let r = p.links()[e].instance;
            for j in 0..k {
                gain += p.gain(r, j).value(y.get(e, j));
            }
        }
        let (_, overhead) = dominant(p, &scratch.totals[l * k..(l + 1) * k]);
        q += xl * (gain - overhead);
    }
    q
}

/// Writes a supergradient ∂q/∂y_(l,r)^k = x_l · (f_r^k'(y_(l,r)^k) − β_k · [k = k*_l]) into
/// `grad`, where k*_l is port l's dominant resource.
pub fn gradient(
    p: &Problem,
    x: &[f64],
    y: &Allocation,
    grad: &mut Allocation,
    scratch: &mut RewardScratch,
) {
    let k = p.resources();
    port_totals(p, y, &mut scratch.totals);
    for (e, link) in p.links().iter().enumerate() {
        let xl = x[link.port];
        if xl == 0.0 {
            for j in 0..k {
                grad.set(e, j, 0.0);
            }
            continue;
        }
        let (kstar, _) = dominant(p, &scratch.totals[link.port * k..(link.port + 1) * k]);
        for j in 0..k {
            let mut g = p.gain(link.instance, j).derivative(y.get(e, j));
            if j == kstar {
                g -= p.beta(j);
            }
            grad.set(e, j, xl * g);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::problem::ProblemSpec;
    use crate::alloc::utility::{Gain, Utility};
    use continuum_core::rng::{Purpose, stream_rng};
    use rand::Rng;

    /// Two ports, two instances, two resources; port 0 on both instances, port 1 on instance 1.
    fn tiny(u: Utility) -> Problem {
        Problem::new(&ProblemSpec {
            requests: vec![vec![10.0, 10.0], vec![10.0, 10.0]],
            capacities: vec![vec![10.0, 10.0], vec![10.0, 10.0]],
            links: vec![(0, 0), (0, 1), (1, 1)],
            gains: vec![
                vec![Gain::new(u, 1.0), Gain::new(u, 1.2)],
                vec![Gain::new(u, 1.4), Gain::new(u, 1.1)],
            ],
            betas: vec![0.3, 0.5],
        })
        .unwrap()
    }

    #[test]
    fn reward_by_hand() {
        let p = tiny(Utility::Linear);
        let mut y = Allocation::zeros(&p);
        // Links: 0 = (port 0, inst 0), 1 = (port 0, inst 1), 2 = (port 1, inst 1).
        y.set(0, 0, 2.0);
        y.set(1, 0, 1.0);
        y.set(1, 1, 4.0);
        y.set(2, 0, 3.0);
        // Port 0: gain 1.0·2 + 1.4·1 + 1.1·4 = 7.8; overheads 0.3·3 = 0.9, 0.5·4 = 2 → 2.
        // Port 1: gain 1.4·3 = 4.2; overheads 0.9, 0 → 0.9.
        let mut s = RewardScratch::default();
        let q = reward(&p, &[1.0, 1.0], &y, &mut s);
        assert!((q - (5.8 + 3.3)).abs() < 1e-12, "{q}");
        assert!((reward(&p, &[1.0, 0.0], &y, &mut s) - 5.8).abs() < 1e-12);
        assert!((reward(&p, &[0.0, 2.0], &y, &mut s) - 6.6).abs() < 1e-12);
    }

    #[test]
    fn gradient_matches_finite_differences_away_from_ties() {
        let mut rng = stream_rng(11, Purpose::Other, 13, 0);
        for u in Utility::ALL {
            let p = tiny(u);
            let mut s = RewardScratch::default();
            for _ in 0..50 {
                let mut y = Allocation::zeros(&p);
                for v in y.values_mut() {
                    *v = rng.random_range(0.1..8.0);
                }
                let x = [rng.random_range(0.0..2.0), rng.random_range(0.0..2.0)];
                let mut g = Allocation::zeros(&p);
                gradient(&p, &x, &y, &mut g, &mut s);
                let h = 1e-6;
                for i in 0..y.values().len() {
                    let mut up = y.clone();
                    up.values_mut()[i] += h;
                    let mut dn = y.clone();
                    dn.values_mut()[i] -= h;
                    let fd =
                        (reward(&p, &x, &up, &mut s) - reward(&p, &x, &dn, &mut s)) / (2.0 * h);
                    // A finite difference straddling a tie of the max is one-sided on each
                    // side; skip those (measure zero for random points, but be safe).
                    let mut t = [[0.0; 2]; 2];
                    for (e, link) in p.links().iter().enumerate() {
                        for (j, o) in t[link.port].iter_mut().enumerate() {
                            *o += y.get(e, j) * p.beta(j);
                        }
                    }
                    if t.iter().any(|o| (o[0] - o[1]).abs() < 1e-4) {
                        continue;
                    }
                    let gi = g.values()[i];
                    assert!(
                        (fd - gi).abs() <= 1e-5 * (1.0 + gi.abs()),
                        "{u}: ∂q/∂y[{i}] = {gi}, finite difference {fd}"
                    );
                }
            }
        }
    }

    #[test]
    fn tie_charges_the_lowest_resource_and_absent_ports_have_zero_gradient() {
        let p = tiny(Utility::Linear);
        let mut y = Allocation::zeros(&p);
        // Port 0: β-weighted totals 0.3·5 = 1.5 and 0.5·3 = 1.5: a tie → resource 0 charged.
        y.set(0, 0, 5.0);
        y.set(0, 1, 3.0);
        let mut g = Allocation::zeros(&p);
        gradient(&p, &[1.0, 0.0], &y, &mut g, &mut RewardScratch::default());
        assert!((g.get(0, 0) - (1.0 - 0.3)).abs() < 1e-12);
        assert!((g.get(0, 1) - 1.2).abs() < 1e-12);
        assert_eq!((g.get(2, 0), g.get(2, 1)), (0.0, 0.0));
    }
}
