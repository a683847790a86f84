//! FAIRNESS (the proportional-share plugin of the Volcano scheduler, as OGASched's authors
//! use it): every instance splits each resource among the ports that have a job this slot, in
//! proportion to their requests, each capped at its request:
//!
//! y_(l,r)^k = min( a_l^k, c_r^k · a_l^k / Σ_{l' ∈ L_r, x_l' > 0} a_l'^k ).
//!
//! What a cap leaves unused is not handed on (as in the authors' prototype).

use super::Allocator;
use super::problem::{Allocation, Problem};

/// Request-proportional shares per instance.
#[derive(Debug, Default, Clone)]
pub struct Fairness;

impl Allocator for Fairness {
    fn name(&self) -> &'static str {
        "fairness"
    }

    fn allocate(&mut self, p: &Problem, demand: &[f64], out: &mut Allocation) {
        out.clear();
        let links = p.links();
        for r in 0..p.instances() {
            for k in 0..p.resources() {
                let asked: f64 = p
                    .instance_links(r)
                    .filter(|&e| demand[links[e].port] > 0.0)
                    .map(|e| p.request(links[e].port, k))
                    .sum();
                if asked <= 0.0 {
                    continue;
                }
                let c = p.capacity(r, k);
                for e in p.instance_links(r) {
                    let l = links[e].port;
                    if demand[l] > 0.0 {
                        let a = p.request(l, k);
                        out.set(e, k, (c * a / asked).min(a));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::tests::two_by_two;

    #[test]
    fn shares_follow_requests_and_stop_at_the_request() {
        // Instance 0 (c = 12) serves ports 0 (a = 2) and 1 (a = 6): shares 3 and 9, capped at
        // 2 and 6. Instance 1 (c = 4) serves port 1 only: min(6, 4) = 4.
        let p = two_by_two(&[2.0, 6.0], &[12.0, 4.0]);
        let mut y = Allocation::zeros(&p);
        Fairness.allocate(&p, &[1.0, 1.0], &mut y);
        assert_eq!(y.values(), &[2.0, 6.0, 4.0]);
        // Capacity 6 on instance 0: shares 6·2/8 = 1.5 and 4.5, below the caps.
        let p = two_by_two(&[2.0, 6.0], &[6.0, 4.0]);
        Fairness.allocate(&p, &[1.0, 1.0], &mut y);
        assert_eq!(y.values(), &[1.5, 4.5, 4.0]);
        // Port 1 absent: port 0 alone on instance 0, capped at its request.
        Fairness.allocate(&p, &[1.0, 0.0], &mut y);
        assert_eq!(y.values(), &[2.0, 0.0, 0.0]);
        p.check_feasible(&y, Some(&[1.0, 0.0]), 0.0).unwrap();
    }
}
