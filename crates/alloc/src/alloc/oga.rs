//! OGASched's online gradient ascent: each slot, one step along the (super)gradient of the
//! slot's reward, then the Euclidean projection back onto the allocation polytope Y.
//!
//! The iterate s starts at 0 and steps with η_t ([`StepSize`]), t = 0, 1, … Two timings:
//!
//! - [`Timing::Oblivious`] (`oga`): the paper's Algorithm 1 and the setting of its regret
//!   bound (online convex optimisation): y(t) = s(t−1) is played before x(t) is revealed, then
//!   s(t) = Π_Y( s(t−1) + η_t ∇_y q(x(t), s(t−1)) ).
//! - [`Timing::Observed`] (`oga-lookahead`): jobs arrive at the start of slot t and the scheduler
//!   sees x(t) before allocating, as the four heuristics do. The step uses that slot's reward,
//!   s(t) = Π_Y( s(t−1) + η_t ∇_y q(x(t), s(t−1)) ), and the allocation played is s(t) with the
//!   ports that have no job at 0. This is the order of the authors' public prototype, except
//!   that the prototype also zeroes those ports in the iterate itself (marked "TODO: this may
//!   not [be] right" there), so that a port returning after an idle slot restarts from 0; we
//!   keep its iterate. Measured on the bench's setting, keeping it earns more at every η0 we
//!   tried (docs/oga.md). Seeing x(t) first is a look-ahead the paper's online setting does
//!   not have: it can earn more than the best fixed allocation (a negative regret).
//!
//! In both, ports without demand get a zero gradient and only lose what the projection takes.

use super::Allocator;
use super::problem::{Allocation, Problem};
use super::project::Projector;
use super::reward::{RewardScratch, gradient};
use super::step::StepSize;

/// When the allocator learns the slot's demand (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timing {
    /// x(t) is seen before allocating: step with it, then play the iterate with the ports
    /// that have no job at 0.
    Observed,
    /// y(t) is the iterate from before x(t) is seen (online convex optimisation).
    Oblivious,
}

/// Online gradient ascent (OGASched).
#[derive(Debug, Clone)]
pub struct Oga {
    step: StepSize,
    timing: Timing,
    t: u64,
    y: Option<Allocation>,
    grad: Option<Allocation>,
    projector: Projector,
    scratch: RewardScratch,
}

impl Oga {
    /// An allocator with schedule `step` and `timing`, starting from y = 0.
    pub fn new(step: StepSize, timing: Timing) -> Self {
        Oga {
            step,
            timing,
            t: 0,
            y: None,
            grad: None,
            projector: Projector::default(),
            scratch: RewardScratch::default(),
        }
    }

    /// The current iterate (what the next slot starts from); `None` before the first slot.
    pub fn iterate(&self) -> Option<&Allocation> {
        self.y.as_ref()
    }

    /// Gradient steps taken so far.
    pub fn steps(&self) -> u64 {
        self.t
    }

    /// s ← Π_Y(s + η_t ∇q(x, s)).
    fn step(&mut self, p: &Problem, x: &[f64]) {
        let (Some(y), Some(g)) = (self.y.as_mut(), self.grad.as_mut()) else {
            unreachable!("sized before stepping");
        };
        gradient(p, x, y, g, &mut self.scratch);
        let eta = self.step.at(self.t);
        for (v, d) in y.values_mut().iter_mut().zip(g.values()) {
            *v += eta * d;
        }
        self.projector.project(p, y, None);
        self.t += 1;
    }
}

impl Allocator for Oga {
    fn name(&self) -> &'static str {
        match self.timing {
            Timing::Oblivious => "oga",
            Timing::Observed => "oga-lookahead",
        }
    }

    /// A problem of another shape than the previous call's restarts from y = 0 and η0.
    fn allocate(&mut self, p: &Problem, demand: &[f64], out: &mut Allocation) {
        if !self.y.as_ref().is_some_and(|y| y.fits(p)) {
            self.y = Some(Allocation::zeros(p));
            self.grad = Some(Allocation::zeros(p));
            self.t = 0;
        }
        match self.timing {
            Timing::Observed => {
                self.step(p, demand);
                out.clone_from(self.y.as_ref().expect("sized"));
                for (e, link) in p.links().iter().enumerate() {
                    if demand[link.port] <= 0.0 {
                        for k in 0..p.resources() {
                            out.set(e, k, 0.0);
                        }
                    }
                }
            }
            Timing::Oblivious => {
                out.clone_from(self.y.as_ref().expect("sized"));
                self.step(p, demand);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alloc::problem::ProblemSpec;
    use crate::alloc::reward::reward;
    use crate::alloc::utility::{Gain, Utility};

    /// Two ports requesting 8 each of the one resource of one instance (capacity 10); log gain
    /// with α 1.2, β 0.1 (so f' − β > 0 up to y = 11: more is better up to the caps).
    fn problem() -> Problem {
        Problem::new(&ProblemSpec {
            requests: vec![vec![8.0], vec![8.0]],
            capacities: vec![vec![10.0]],
            links: vec![(0, 0), (1, 0)],
            gains: vec![vec![Gain::new(Utility::Log, 1.2)]],
            betas: vec![0.1],
        })
        .unwrap()
    }

    #[test]
    fn observed_gives_absent_ports_nothing_and_converges_to_the_slot_optimum() {
        let p = problem();
        let mut oga = Oga::new(
            StepSize::Geometric {
                eta0: 2.0,
                decay: 1.0,
            },
            Timing::Observed,
        );
        let mut y = Allocation::zeros(&p);
        // Only port 0 has jobs: it should end at min(a, c) = 8 (f' − β > 0 up to y = 11).
        for _ in 0..50 {
            oga.allocate(&p, &[1.0, 0.0], &mut y);
            p.check_feasible(&y, Some(&[1.0, 0.0]), 1e-12).unwrap();
        }
        assert!((y.get(0, 0) - 8.0).abs() < 1e-9, "{:?}", y.values());
        assert_eq!(y.get(1, 0), 0.0);
        // Both present and symmetric: the optimum splits the capacity 5 / 5.
        for _ in 0..200 {
            oga.allocate(&p, &[1.0, 1.0], &mut y);
        }
        assert!(
            (y.get(0, 0) - 5.0).abs() < 1e-4 && (y.get(1, 0) - 5.0).abs() < 1e-4,
            "{:?}",
            y.values()
        );
        assert_eq!(oga.steps(), 250);
        // Port 1 idle for a slot: it gets nothing, but its iterate only loses what the
        // projection takes (η f'/2 ≈ 0.1), so it comes back near 5 rather than from 0.
        oga.allocate(&p, &[1.0, 0.0], &mut y);
        assert_eq!(y.get(1, 0), 0.0);
        assert!(oga.iterate().unwrap().get(1, 0) > 4.8);
        oga.allocate(&p, &[1.0, 1.0], &mut y);
        assert!(y.get(1, 0) > 4.8, "{:?}", y.values());
    }

    #[test]
    fn oblivious_plays_before_seeing_the_demand() {
        let p = problem();
        let mut oga = Oga::new(
            StepSize::Geometric {
                eta0: 2.0,
                decay: 1.0,
            },
            Timing::Oblivious,
        );
        let mut y = Allocation::zeros(&p);
        oga.allocate(&p, &[1.0, 1.0], &mut y);
        // The first slot plays y(1) = 0, then steps.
        assert_eq!(y.values(), &[0.0, 0.0]);
        assert!(oga.iterate().unwrap().values().iter().all(|&v| v > 0.0));
        // Demand on port 0 only, repeatedly: port 1 keeps what the projection leaves it, but
        // the reward of the played allocation increases towards the optimum ln(9)·1.2 − 0.8.
        let mut last = f64::NEG_INFINITY;
        let mut s = RewardScratch::default();
        for _ in 0..100 {
            oga.allocate(&p, &[1.0, 0.0], &mut y);
            p.check_feasible(&y, None, 1e-12).unwrap();
            let q = reward(&p, &[1.0, 0.0], &y, &mut s);
            assert!(q >= last - 1e-12);
            last = q;
        }
        assert!((last - (1.2 * 9f64.ln() - 0.8)).abs() < 1e-6, "{last}");
    }

    #[test]
    fn a_problem_of_another_shape_restarts() {
        let p = problem();
        let mut oga = Oga::new(StepSize::PAPER, Timing::Observed);
        let mut y = Allocation::zeros(&p);
        oga.allocate(&p, &[1.0, 1.0], &mut y);
        let q = Problem::new(&ProblemSpec {
            requests: vec![vec![8.0]],
            capacities: vec![vec![10.0]],
            links: vec![(0, 0)],
            gains: vec![vec![Gain::new(Utility::Linear, 1.0)]],
            betas: vec![0.1],
        })
        .unwrap();
        let mut z = Allocation::zeros(&q);
        oga.allocate(&q, &[1.0], &mut z);
        assert_eq!(oga.steps(), 1);
        assert_eq!(z.values(), &[8.0]);
    }
}
