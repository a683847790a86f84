//! SPREADING (Kubernetes' `LeastAllocated` node scoring, as OGASched's §4 defines it: "similar
//! to BINPACKING in procedures but with an opposite favor"): each job of a port with demand
//! this slot goes whole to the linked instance with the highest `LeastAllocated` score
//! (1/K) Σ_k (free_r^k − a_l^k) / c_r^k among those that hold it — [`Spreading::scored`],
//! `spreading`; the filter, the ties and the fallback are BINPACKING's ([`super::binpacking`]).
//! The ablation [`Spreading::per_channel`] (`spreading-per-channel`) gives min(a_l^k, free) on
//! every channel, which allocates the same as `binpacking-per-channel`.

use super::Allocator;
use super::binpacking::{Placer, Reach, Score};
use super::problem::{Allocation, Problem};

/// Least-allocated scoring: emptier instances first.
#[derive(Debug, Clone)]
pub struct Spreading(Placer);

impl Spreading {
    /// `spreading`: one instance per job, chosen by `LeastAllocated` scoring.
    pub fn scored() -> Self {
        Self(Placer::new(Reach::Scored(Score::LeastAllocated)))
    }

    /// `spreading-per-channel`: every channel up to the port's request (the ablation).
    pub fn per_channel() -> Self {
        Self(Placer::new(Reach::PerChannel))
    }
}

impl Allocator for Spreading {
    fn name(&self) -> &'static str {
        match self.0.reach() {
            Reach::Scored(_) => "spreading",
            Reach::PerChannel => "spreading-per-channel",
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
    fn the_emptiest_instance_after_placing_takes_the_job() {
        // Port 0 (a = 2) has only instance 0 (c = 6): 4 free there. Port 1 (a = 3): instance 0
        // scores (4 − 3)/6 = 0.17, instance 1 (c = 4) (4 − 3)/4 = 0.25: instance 1.
        let p = two_by_two(&[2.0, 3.0], &[6.0, 4.0]);
        let mut y = Allocation::zeros(&p);
        Spreading::scored().allocate(&p, &[1.0, 1.0], &mut y);
        // Links: 0 = (port 0, inst 0), 1 = (port 1, inst 0), 2 = (port 1, inst 1).
        assert_eq!(y.values(), &[2.0, 0.0, 3.0]);
        p.check_feasible(&y, Some(&[1.0, 1.0]), 0.0).unwrap();
    }
}
