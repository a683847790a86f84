//! FAIRNESS (the proportional-share plugin of the Volcano scheduler, as OGASched uses it):
//! every instance splits each resource among its ports in proportion to their requests, each
//! share capped at the request. Two versions, which differ only in the ports that share:
//!
//! - `fairness` — OGASched §4: "allocates resources to each non-empty port" (the paper's
//!   reading of its best baseline, and the authors' prototype's): the sum runs over the ports
//!   linked to r that have a job this slot,
//!
//!   y_(l,r)^k = min( a_l^k, c_r^k · a_l^k / Σ_{l' ∈ L_r, x_l' > 0} a_l'^k ),
//!
//!   so the present jobs split the whole instance. With linear gains whose α depends only on
//!   (r, k) this takes min(c, Σ present requests) on every instance and resource: the per-slot
//!   optimum, which no online policy can beat.
//! - `fairness-linked` (the ablation; this reproduction's previous headline reading of the
//!   printed formula a_l^k / Σ_{l ∈ L_r} a_l^k): the sum runs over **every** port linked to r,
//!   and the share of a port with no job this slot stays idle.
//!
//! In both, what a cap leaves unused is not handed on (as in the prototype).

use super::Allocator;
use super::problem::{Allocation, Problem};

/// Which ports share an instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ShareOver {
    /// Only the linked ports with a job this slot (the paper's reading).
    #[default]
    Present,
    /// Every port linked to the instance (the ablation).
    Linked,
}

/// Request-proportional shares per instance.
#[derive(Debug, Default, Clone)]
pub struct Fairness {
    /// Which ports share.
    pub over: ShareOver,
}

impl Fairness {
    /// The paper's version (`fairness`): the present ports share.
    pub fn present() -> Self {
        Fairness {
            over: ShareOver::Present,
        }
    }

    /// The ablation (`fairness-linked`): every linked port shares.
    pub fn linked() -> Self {
        Fairness {
            over: ShareOver::Linked,
        }
    }
}

impl Allocator for Fairness {
    fn name(&self) -> &'static str {
        match self.over {
            ShareOver::Present => "fairness",
            ShareOver::Linked => "fairness-linked",
        }
    }

    fn allocate(&mut self, p: &Problem, demand: &[f64], out: &mut Allocation) {
        out.clear();
        let links = p.links();
        let shares = |l: usize| self.over == ShareOver::Linked || demand[l] > 0.0;
        for r in 0..p.instances() {
            for k in 0..p.resources() {
                let asked: f64 = p
                    .instance_links(r)
                    .filter(|&e| shares(links[e].port))
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
        // 2 and 6. Instance 1 (c = 4) serves port 1 only: min(6, 4) = 4. Both versions agree
        // when every port has a job.
        for mut f in [Fairness::linked(), Fairness::present()] {
            let p = two_by_two(&[2.0, 6.0], &[12.0, 4.0]);
            let mut y = Allocation::zeros(&p);
            f.allocate(&p, &[1.0, 1.0], &mut y);
            assert_eq!(y.values(), &[2.0, 6.0, 4.0]);
            // Capacity 6 on instance 0: shares 6·2/8 = 1.5 and 4.5, below the caps.
            let p = two_by_two(&[2.0, 6.0], &[6.0, 4.0]);
            f.allocate(&p, &[1.0, 1.0], &mut y);
            assert_eq!(y.values(), &[1.5, 4.5, 4.0]);
        }
    }

    #[test]
    fn the_linked_ablation_keeps_an_idle_ports_share_idle_and_the_paper_does_not() {
        // Port 1 absent. The ablation: port 0 still gets 6·2/8 = 1.5 of instance 0 (port 1's
        // 4.5 stays idle). The paper: port 0 alone on instance 0, capped at its request 2.
        let p = two_by_two(&[2.0, 6.0], &[6.0, 4.0]);
        let mut y = Allocation::zeros(&p);
        Fairness::linked().allocate(&p, &[1.0, 0.0], &mut y);
        assert_eq!(y.values(), &[1.5, 0.0, 0.0]);
        p.check_feasible(&y, Some(&[1.0, 0.0]), 0.0).unwrap();
        Fairness::present().allocate(&p, &[1.0, 0.0], &mut y);
        assert_eq!(y.values(), &[2.0, 0.0, 0.0]);
        p.check_feasible(&y, Some(&[1.0, 0.0]), 0.0).unwrap();
    }
}
