//! SPREADING (the inverse of BINPACKING, as OGASched's authors define it): the ports that have
//! a job this slot are served in index order; for every resource k the port's instances are
//! scored emptiest first, and each gives min(a_l^k, free) on its channel — the paper's
//! polytope ([`Spreading::per_channel`], `spreading`), which makes the visiting order moot
//! and the allocation BINPACKING's (see [`super::binpacking`]). The ablation
//! [`Spreading::one_instance`] (`spreading-one-instance`) gives each (port, resource) only the
//! instance with the *most* free capacity: min(a_l^k, free) there (ties: the lower instance
//! index). Only instances linked to the port are considered.

use super::Allocator;
use super::binpacking::{Fit, Placer, Reach};
use super::problem::{Allocation, Problem};

/// Worst fit: emptier instances first.
#[derive(Debug, Clone)]
pub struct Spreading(Placer);

impl Spreading {
    /// `spreading`: every channel up to the port's request (the paper's polytope).
    pub fn per_channel() -> Self {
        Self(Placer::new(Reach::PerChannel))
    }

    /// `spreading-one-instance`: one instance per (port, resource), the emptiest.
    pub fn one_instance() -> Self {
        Self(Placer::new(Reach::OneInstance(Fit::Emptiest)))
    }
}

impl Allocator for Spreading {
    fn name(&self) -> &'static str {
        match self.0.reach() {
            Reach::PerChannel => "spreading",
            Reach::OneInstance(_) => "spreading-one-instance",
        }
    }

    fn allocate(&mut self, p: &Problem, demand: &[f64], out: &mut Allocation) {
        self.0.place(p, demand, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::tests::two_by_two;

    #[test]
    fn the_emptiest_instance_takes_the_request() {
        // Port 0 (a = 2) is served first and has only instance 0: it takes 2 (6 → 4 free).
        // Port 1 (a = 3) then sees 4 free on both: a tie, so the lower index, instance 0.
        let p = two_by_two(&[2.0, 3.0], &[6.0, 4.0]);
        let mut y = Allocation::zeros(&p);
        let mut sp = Spreading::one_instance();
        sp.allocate(&p, &[1.0, 1.0], &mut y);
        // Links: 0 = (port 0, inst 0), 1 = (port 1, inst 0), 2 = (port 1, inst 1).
        assert_eq!(y.values(), &[2.0, 3.0, 0.0]);
        // Port 1 alone, asking 7: the emptiest (6 free) gives all it has.
        let p = two_by_two(&[2.0, 7.0], &[6.0, 4.0]);
        sp.allocate(&p, &[0.0, 1.0], &mut y);
        assert_eq!(y.values(), &[0.0, 6.0, 0.0]);
        p.check_feasible(&y, Some(&[0.0, 1.0]), 0.0).unwrap();
    }
}
