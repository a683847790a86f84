//! Euclidean projection onto the allocation polytope
//! Y = {y : 0 ≤ y_(l,r)^k ≤ a_l^k, Σ_{l ∈ L_r} y_(l,r)^k ≤ c_r^k}.
//!
//! Y is a product over (instance r, resource k) of independent blocks
//! {0 ≤ y_l ≤ u_l, Σ_l y_l ≤ c}, so the projection splits into one small problem per block. Its
//! KKT conditions give y_l(μ) = clamp(z_l − μ, 0, u_l) for a multiplier μ ≥ 0 with μ = 0 when
//! Σ_l clamp(z_l, 0, u_l) ≤ c, and otherwise g(μ) = Σ_l clamp(z_l − μ, 0, u_l) = c. g is
//! continuous, non-increasing and piecewise linear with breakpoints at z_l and z_l − u_l, so
//! bisection over the sorted breakpoints finds the linear piece that crosses c and μ follows
//! exactly from it (no iteration tolerance). The result satisfies the bounds exactly and the
//! budget up to rounding (a few ulps of c).
//!
//! (OGASched's fast projection as printed sorts z and subtracts one shared offset, which can
//! leave an entry above its cap a_l^k or below 0; solving for μ as above cannot.)

use super::problem::{Allocation, Problem};

/// Projects `z` in place onto {0 ≤ y_i ≤ upper_i, Σ_i y_i ≤ budget} (upper_i ≥ 0, budget ≥ 0)
/// and returns the multiplier μ ≥ 0 of the budget. `breaks` is scratch space.
pub fn project_block(z: &mut [f64], upper: &[f64], budget: f64, breaks: &mut Vec<f64>) -> f64 {
    debug_assert_eq!(z.len(), upper.len());
    let g = |mu: f64| -> f64 {
        z.iter()
            .zip(upper)
            .map(|(&zi, &ui)| (zi - mu).clamp(0.0, ui))
            .sum()
    };
    let mu = if g(0.0) <= budget {
        0.0
    } else {
        // g(0) > budget ≥ 0, and g(max z) = 0: the crossing lies in (0, max z].
        breaks.clear();
        breaks.push(0.0);
        for (&zi, &ui) in z.iter().zip(upper) {
            if ui > 0.0 {
                breaks.extend([zi, zi - ui].into_iter().filter(|&b| b > 0.0));
            }
        }
        breaks.sort_by(f64::total_cmp);
        breaks.dedup();
        // Bisection: the first breakpoint where g ≤ budget (g(breaks[0] = 0) > budget).
        let (mut lo, mut hi) = (0, breaks.len() - 1);
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            if g(breaks[mid]) <= budget {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        let (b0, b1) = (breaks[lo], breaks[hi]);
        let (g0, g1) = (g(b0), g(b1));
        // g is linear on [b0, b1] with g(b0) > budget ≥ g(b1).
        let mu = b0 + (b1 - b0) * (g0 - budget) / (g0 - g1);
        mu.clamp(b0, b1)
    };
    for (zi, &ui) in z.iter_mut().zip(upper) {
        *zi = (*zi - mu).clamp(0.0, ui);
    }
    mu
}

/// Reusable scratch space for [`Projector::project`].
#[derive(Debug, Default, Clone)]
pub struct Projector {
    z: Vec<f64>,
    upper: Vec<f64>,
    breaks: Vec<f64>,
}

impl Projector {
    /// Projects `y` in place onto Y; when `demand` is given, onto Y ∩ {y_(l,r)^k = 0 for every
    /// port with x_l = 0} (the caps of ports without demand are set to 0).
    pub fn project(&mut self, p: &Problem, y: &mut Allocation, demand: Option<&[f64]>) {
        let links = p.links();
        for r in 0..p.instances() {
            let range = p.instance_links(r);
            for k in 0..p.resources() {
                self.z.clear();
                self.upper.clear();
                for e in range.clone() {
                    let l = links[e].port;
                    let cap = match demand {
                        Some(x) if x[l] <= 0.0 => 0.0,
                        _ => p.request(l, k),
                    };
                    self.z.push(y.get(e, k));
                    self.upper.push(cap);
                }
                project_block(&mut self.z, &self.upper, p.capacity(r, k), &mut self.breaks);
                for (i, e) in range.clone().enumerate() {
                    y.set(e, k, self.z[i]);
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "project_tests.rs"]
mod tests;
