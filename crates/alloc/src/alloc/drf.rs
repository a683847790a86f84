//! DRF (dominant resource fairness, Ghodsi et al., NSDI 2011, as OGASched's authors apply it):
//! the ports that have a job this slot are served in ascending order of their dominant share
//!
//! s_l = max_k a_l^k / Σ_{r ∈ R_l} c_r^k
//!
//! (the largest fraction of any resource reachable from the port that its request represents;
//! ties: the lower port index). Each in turn takes, for every resource k, its job's request
//! a_l^k **in total** over its instances, first fit in instance order, as far as their free
//! capacity goes ([`Drf::port_total`], `drf`): s_l is the share of the job's total request, so
//! the job gets that total (the paper's reading, and the authors' prototype's). The ablation
//! [`Drf::per_channel`] (`drf-per-channel`, this reproduction's previous headline reading)
//! lets the port take up to a_l^k on each of its channels (port, instance), what the polytope
//! Y allows.

use super::Allocator;
use super::problem::{Allocation, Problem};

/// Dominant resource fairness.
#[derive(Debug, Clone)]
pub struct Drf {
    port_total: bool,
    free: Vec<f64>,
    order: Vec<(f64, usize)>,
}

impl Drf {
    /// `drf-per-channel`: each channel up to the port's request (the ablation).
    pub fn per_channel() -> Self {
        Self {
            port_total: false,
            free: Vec::new(),
            order: Vec::new(),
        }
    }

    /// `drf`: the port's total over its instances up to its request, first fit.
    pub fn port_total() -> Self {
        Self {
            port_total: true,
            ..Self::per_channel()
        }
    }
}

/// Port `l`'s dominant share (∞ when it requests some resource none of its instances has; 0
/// when it requests nothing).
pub fn dominant_share(p: &Problem, l: usize) -> f64 {
    let links = p.links();
    (0..p.resources())
        .map(|k| {
            let a = p.request(l, k);
            if a == 0.0 {
                return 0.0;
            }
            let reach: f64 = p
                .port_links(l)
                .iter()
                .map(|&e| p.capacity(links[e].instance, k))
                .sum();
            if reach > 0.0 {
                a / reach
            } else {
                f64::INFINITY
            }
        })
        .fold(0.0, f64::max)
}

impl Allocator for Drf {
    fn name(&self) -> &'static str {
        if self.port_total {
            "drf"
        } else {
            "drf-per-channel"
        }
    }

    fn allocate(&mut self, p: &Problem, demand: &[f64], out: &mut Allocation) {
        out.clear();
        p.fill_capacities(&mut self.free);
        self.order.clear();
        self.order.extend(
            (0..p.ports())
                .filter(|&l| demand[l] > 0.0)
                .map(|l| (dominant_share(p, l), l)),
        );
        self.order
            .sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let (links, nk) = (p.links(), p.resources());
        for &(_, l) in &self.order {
            for k in 0..nk {
                let a = p.request(l, k);
                let mut want = a;
                for &e in p.port_links(l) {
                    if self.port_total && want <= 0.0 {
                        break;
                    }
                    let free = &mut self.free[links[e].instance * nk + k];
                    let take = if self.port_total { want } else { a }.min(*free);
                    if take > 0.0 {
                        out.set(e, k, take);
                        *free -= take;
                        want -= take;
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
    fn the_smaller_dominant_share_goes_first() {
        // Port 0 (a = 5) reaches instance 0 only (c = 6): share 5/6. Port 1 (a = 6) reaches
        // both (6 + 4 = 10): share 0.6, so port 1 goes first: up to 6 on each of its channels,
        // all of instance 0 and all of instance 1 — leaving port 0 nothing.
        let p = two_by_two(&[5.0, 6.0], &[6.0, 4.0]);
        assert!((dominant_share(&p, 0) - 5.0 / 6.0).abs() < 1e-12);
        assert!((dominant_share(&p, 1) - 0.6).abs() < 1e-12);
        let mut y = Allocation::zeros(&p);
        let mut drf = Drf::per_channel();
        drf.allocate(&p, &[1.0, 1.0], &mut y);
        // Links: 0 = (port 0, inst 0), 1 = (port 1, inst 0), 2 = (port 1, inst 1).
        assert_eq!(y.values(), &[0.0, 6.0, 4.0]);
        p.check_feasible(&y, Some(&[1.0, 1.0]), 0.0).unwrap();
        // Port 1 asks 8. Shares: port 0 1/6, port 1 0.8: port 0 first (1 from instance 0),
        // then port 1 up to 8 per channel: the 5 left on instance 0 and 4 on instance 1.
        let p = two_by_two(&[1.0, 8.0], &[6.0, 4.0]);
        drf.allocate(&p, &[1.0, 1.0], &mut y);
        assert_eq!(y.values(), &[1.0, 5.0, 4.0]);
        // Absent ports get nothing.
        drf.allocate(&p, &[0.0, 1.0], &mut y);
        assert_eq!(y.values(), &[0.0, 6.0, 4.0]);
        p.check_feasible(&y, Some(&[0.0, 1.0]), 0.0).unwrap();
    }

    #[test]
    fn the_port_total_ablation_caps_a_port_at_its_request_in_all() {
        // As above, port 1 (a = 6) first, but 6 in all: first fit takes it from instance 0.
        let p = two_by_two(&[5.0, 6.0], &[6.0, 4.0]);
        let mut y = Allocation::zeros(&p);
        let mut drf = Drf::port_total();
        drf.allocate(&p, &[1.0, 1.0], &mut y);
        assert_eq!(y.values(), &[0.0, 6.0, 0.0]);
        // A request larger than one instance spills over to the next: 5 + 3 = 8.
        let p = two_by_two(&[1.0, 8.0], &[6.0, 4.0]);
        drf.allocate(&p, &[1.0, 1.0], &mut y);
        assert_eq!(y.values(), &[1.0, 5.0, 3.0]);
        p.check_feasible(&y, Some(&[1.0, 1.0]), 0.0).unwrap();
    }
}
