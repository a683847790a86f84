//! `random`: uniform among the feasible bindings (a baseline).

use super::Policy;
use crate::feasibility::Candidate;
use crate::rng::SimRng;
use rand::Rng;

/// Binds uniformly at random.
pub(super) struct Random;

impl Policy for Random {
    fn name(&self) -> &'static str {
        "random"
    }
    fn choose(&self, c: &[Candidate], rng: &mut SimRng) -> usize {
        rng.random_range(0..c.len())
    }
}
