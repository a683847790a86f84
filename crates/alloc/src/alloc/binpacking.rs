//! BINPACKING (the Kubernetes / Volcano `binpack` idea, as OGASched's authors define it:
//! "dispatch the request to the node that can hold it with the least idle resources", so that
//! fragmentation is avoided). The ports that have a job this slot are served in index order;
//! for every resource k the port's instances are scored, fullest first (best fit), and each
//! gives what the paper's polytope allows the port there: min(a_l^k, its free capacity) on
//! every channel (port, instance) — [`BinPacking::per_channel`], `binpacking`.
//!
//! Under per-channel caps the channels of one port draw on different instances, so the order
//! in which a port visits its instances cannot change what it gets: BINPACKING and SPREADING
//! (the opposite order) allocate the same, as in the paper's Table 3, where they earn the same
//! reward (2519 at ρ = 0.7). Only the ports' order (index order here, dominant share in DRF)
//! decides who gets a shared instance first; [`Placer`] is that rule.
//!
//! The ablation [`BinPacking::one_instance`] (`binpacking-one-instance`, this reproduction's
//! earlier reading) gives each (port, resource) one instance: among those whose free capacity
//! covers the whole request a_l^k, the one with the *least* free capacity (ties: the lower
//! instance index); when none can hold it, the instance with the most free capacity gives all
//! it has left (the authors' fallback).
//!
//! Instances are those linked to the port: the authors' prototype looks at every node, which
//! allocates on pairs that the bipartite model does not have.

use super::Allocator;
use super::problem::{Allocation, Problem};

/// Best fit: fuller instances first.
#[derive(Debug, Clone)]
pub struct BinPacking(Placer);

impl BinPacking {
    /// `binpacking`: every channel up to the port's request (the paper's polytope).
    pub fn per_channel() -> Self {
        Self(Placer::new(Reach::PerChannel))
    }

    /// `binpacking-one-instance`: one instance per (port, resource), best fit.
    pub fn one_instance() -> Self {
        Self(Placer::new(Reach::OneInstance(Fit::Fullest)))
    }
}

impl Allocator for BinPacking {
    fn name(&self) -> &'static str {
        match self.0.reach {
            Reach::PerChannel => "binpacking",
            Reach::OneInstance(_) => "binpacking-one-instance",
        }
    }

    fn allocate(&mut self, p: &Problem, demand: &[f64], out: &mut Allocation) {
        self.0.place(p, demand, out);
    }
}

/// Which instance takes a whole request under [`Reach::OneInstance`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fit {
    /// The one with the least free capacity among those that can hold the request; if none
    /// can, the one with the most, which gives all it has.
    Fullest,
    /// The one with the most free capacity, which gives min(request, free).
    Emptiest,
}

/// Where a port's request of one resource may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// Every channel (port, instance) up to the request: the paper's polytope.
    PerChannel,
    /// One instance, chosen by the fit (the ablations).
    OneInstance(Fit),
}

/// The placement rule BINPACKING and SPREADING share, and its scratch of free capacities.
#[derive(Debug, Clone)]
pub(crate) struct Placer {
    reach: Reach,
    free: Vec<f64>,
}

impl Placer {
    pub(crate) fn new(reach: Reach) -> Self {
        Self {
            reach,
            free: Vec::new(),
        }
    }

    pub(crate) fn reach(&self) -> Reach {
        self.reach
    }

    /// Serves the ports with demand in index order; for each resource a port takes
    /// min(request, free) on each of its channels ([`Reach::PerChannel`]) or on the one
    /// instance its fit chooses among the port's instances ([`Reach::OneInstance`]).
    pub(crate) fn place(&mut self, p: &Problem, demand: &[f64], out: &mut Allocation) {
        out.clear();
        p.fill_capacities(&mut self.free);
        let free = &mut self.free;
        let (links, nk) = (p.links(), p.resources());
        for l in (0..p.ports()).filter(|&l| demand[l] > 0.0) {
            for k in 0..nk {
                let a = p.request(l, k);
                if a <= 0.0 {
                    continue;
                }
                let mut give = |e: usize, free: &mut Vec<f64>| {
                    let f = &mut free[links[e].instance * nk + k];
                    let take = a.min(*f);
                    if take > 0.0 {
                        out.set(e, k, take);
                        *f -= take;
                    }
                };
                let fit = match self.reach {
                    Reach::PerChannel => {
                        for &e in p.port_links(l) {
                            give(e, free);
                        }
                        continue;
                    }
                    Reach::OneInstance(fit) => fit,
                };
                // (free, link) of the emptiest and of the fullest that fits; ties: lower
                // instance.
                let mut emptiest: Option<(f64, usize)> = None;
                let mut fullest_fit: Option<(f64, usize)> = None;
                for &e in p.port_links(l) {
                    let f = free[links[e].instance * nk + k];
                    if emptiest.is_none_or(|(b, _)| f > b) {
                        emptiest = Some((f, e));
                    }
                    if f >= a && fullest_fit.is_none_or(|(b, _)| f < b) {
                        fullest_fit = Some((f, e));
                    }
                }
                let chosen = match fit {
                    Fit::Fullest => fullest_fit.or(emptiest),
                    Fit::Emptiest => emptiest,
                };
                if let Some((_, e)) = chosen {
                    give(e, free);
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
    fn every_channel_takes_up_to_the_request_ports_in_index_order() {
        // Port 0 (a = 2) first: 2 of instance 0 (c = 7). Port 1 (a = 5): 5 of the 5 left on
        // instance 0 and 4 of instance 1 (all it has).
        let p = two_by_two(&[2.0, 5.0], &[7.0, 4.0]);
        let mut y = Allocation::zeros(&p);
        BinPacking::per_channel().allocate(&p, &[1.0, 1.0], &mut y);
        // Links: 0 = (port 0, inst 0), 1 = (port 1, inst 0), 2 = (port 1, inst 1).
        assert_eq!(y.values(), &[2.0, 5.0, 4.0]);
        p.check_feasible(&y, Some(&[1.0, 1.0]), 0.0).unwrap();
        // SPREADING visits the instances in the opposite order and gets the same.
        let mut z = Allocation::zeros(&p);
        crate::alloc::Spreading::per_channel().allocate(&p, &[1.0, 1.0], &mut z);
        assert_eq!(z.values(), y.values());
    }

    #[test]
    fn the_fullest_instance_that_fits_takes_the_request() {
        // Port 0 (a = 2) is served first and has only instance 0 (c = 7): 5 left there.
        // Port 1 (a = 3) fits on both instance 0 (5 free) and instance 1 (4 free): the fuller,
        // instance 1, takes it.
        let p = two_by_two(&[2.0, 3.0], &[7.0, 4.0]);
        let mut y = Allocation::zeros(&p);
        let mut bp = BinPacking::one_instance();
        bp.allocate(&p, &[1.0, 1.0], &mut y);
        // Links: 0 = (port 0, inst 0), 1 = (port 1, inst 0), 2 = (port 1, inst 1).
        assert_eq!(y.values(), &[2.0, 0.0, 3.0]);
        // Port 1 asks 5: after port 0 took 2 of instance 0 both instances have 4 free, none
        // can hold 5, so the emptiest (a tie: the lower index, instance 0) gives all its 4.
        let p = two_by_two(&[2.0, 5.0], &[6.0, 4.0]);
        bp.allocate(&p, &[1.0, 1.0], &mut y);
        assert_eq!(y.values(), &[2.0, 4.0, 0.0]);
        p.check_feasible(&y, Some(&[1.0, 1.0]), 0.0).unwrap();
    }
}
