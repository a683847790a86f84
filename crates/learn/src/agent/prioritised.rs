//! Prioritised replay (Schaul et al. 2016, as Ape-X uses it): the replay ring with a sum tree of
//! priorities beside it. A transition is drawn with probability p^α / Σ p^α by stratified
//! sampling (one uniform draw in each of the batch's equal slices of the total, from the
//! learner's seeded stream), and carries the importance weight (N·P(i))^−β over the batch's
//! largest, which the learner multiplies into its loss.

use super::replay::{Batch, ReplayBuffer, Transition};
use continuum_core::rng::SimRng;
use rand::Rng;

/// Added to every priority so that a transition of zero error can still be drawn.
const MIN_PRIORITY: f64 = 1e-6;

/// A binary tree of sums over `capacity` leaves (a power of two at or above it).
#[derive(Debug, Clone)]
struct SumTree {
    leaves: usize,
    nodes: Vec<f64>,
}

impl SumTree {
    fn new(capacity: usize) -> Self {
        let leaves = capacity.next_power_of_two().max(1);
        Self {
            leaves,
            nodes: vec![0.0; 2 * leaves],
        }
    }

    fn total(&self) -> f64 {
        self.nodes[1]
    }

    fn get(&self, i: usize) -> f64 {
        self.nodes[self.leaves + i]
    }

    fn set(&mut self, i: usize, value: f64) {
        let mut at = self.leaves + i;
        self.nodes[at] = value;
        while at > 1 {
            at /= 2;
            self.nodes[at] = self.nodes[2 * at] + self.nodes[2 * at + 1];
        }
    }

    /// The leaf where the running sum passes `mass` (`0 <= mass < total`), never one of zero
    /// priority.
    fn find(&self, mut mass: f64) -> usize {
        let mut at = 1;
        while at < self.leaves {
            let left = self.nodes[2 * at];
            if mass < left || self.nodes[2 * at + 1] <= 0.0 {
                at *= 2;
            } else {
                mass -= left;
                at = 2 * at + 1;
            }
        }
        at - self.leaves
    }
}

/// Prioritised replay: a [`ReplayBuffer`] whose draws follow the priorities.
#[derive(Debug, Clone)]
pub struct PrioritisedReplay {
    ring: ReplayBuffer,
    tree: SumTree,
    alpha: f64,
    beta: f64,
    drawn: Vec<usize>,
}

impl PrioritisedReplay {
    /// An empty replay of `capacity` transitions (see [`ReplayBuffer::new`]), drawing with
    /// priority exponent `alpha` and weighting with importance exponent `beta`.
    pub fn new(
        capacity: usize,
        state_len: usize,
        classes: usize,
        actions: usize,
        alpha: f64,
        beta: f64,
    ) -> Self {
        Self {
            ring: ReplayBuffer::new(capacity, state_len, classes, actions),
            tree: SumTree::new(capacity),
            alpha,
            beta,
            drawn: Vec::new(),
        }
    }

    /// Transitions held.
    pub fn len(&self) -> usize {
        self.ring.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }

    /// Stores `t` with priority `priority` (a non-negative error; its α-th power is kept).
    pub fn push(&mut self, t: &Transition, priority: f32) {
        let i = self.ring.push(t);
        self.tree.set(i, self.mass(priority));
    }

    fn mass(&self, priority: f32) -> f64 {
        let p = f64::from(priority);
        (if p.is_finite() { p.max(0.0) } else { 0.0 } + MIN_PRIORITY).powf(self.alpha)
    }

    /// Draws `n` transitions into `out` (their importance weights in `out.importance`) and
    /// remembers where they lie for [`Self::update`].
    pub fn sample(&mut self, n: usize, rng: &mut SimRng, out: &mut Batch) {
        assert!(!self.is_empty(), "sampling an empty buffer");
        let total = self.tree.total();
        let slice = total / n as f64;
        self.drawn.clear();
        for k in 0..n {
            let mass = ((k as f64 + rng.random::<f64>()) * slice).min(total * (1.0 - 1e-12));
            let i = self.tree.find(mass).min(self.len() - 1);
            self.drawn.push(i);
        }
        self.ring.gather(&self.drawn, out);
        let held = self.len() as f64;
        out.importance.clear();
        out.importance.extend(
            self.drawn
                .iter()
                .map(|&i| (held * self.tree.get(i) / total).powf(-self.beta)),
        );
        let max = out.importance.iter().copied().fold(0.0f64, f64::max);
        for w in &mut out.importance {
            *w /= max;
        }
    }

    /// Sets the priorities of the last batch drawn to `priorities` (the learner's new errors,
    /// in batch order).
    pub fn update(&mut self, priorities: &[f32]) {
        assert_eq!(priorities.len(), self.drawn.len(), "one priority per drawn");
        for (&p, &slot) in priorities.iter().zip(&self.drawn) {
            let m = self.mass(p);
            self.tree.set(slot, m);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use continuum_core::rng::{Purpose, stream_rng};

    fn one(x: f32) -> Transition {
        Transition::taken(vec![x], vec![0], &[x], &[1.0], 1, vec![x], false)
    }

    #[test]
    fn draws_follow_the_priorities_and_weights_undo_them() {
        // Priorities 1, 3 and 0 with α = 1: drawn a quarter, three quarters and never.
        let mut r = PrioritisedReplay::new(4, 1, 1, 1, 1.0, 1.0);
        r.push(&one(0.0), 1.0);
        r.push(&one(1.0), 3.0);
        r.push(&one(2.0), 0.0);
        let mut rng = stream_rng(3, Purpose::Other, 0, 0);
        let mut b = Batch::default();
        let mut counts = [0usize; 3];
        for _ in 0..200 {
            r.sample(8, &mut rng, &mut b);
            for (j, &s) in b.states.iter().enumerate() {
                counts[s as usize] += 1;
                // β = 1: weight ∝ 1/P, normalised by the batch's largest (the rarer one's).
                let w = b.importance[j];
                if s == 1.0 && b.states.contains(&0.0) {
                    assert!((w - 1.0 / 3.0).abs() < 1e-4, "{w}");
                }
            }
        }
        let share = counts[1] as f64 / 1600.0;
        assert!((share - 0.75).abs() < 0.03, "{counts:?}");
        assert_eq!(
            counts[2], 0,
            "a zero-error transition is all but never drawn"
        );
    }

    #[test]
    fn updates_move_the_draws_and_the_ring_overwrites_priorities() {
        let mut r = PrioritisedReplay::new(2, 1, 1, 1, 0.6, 0.4);
        r.push(&one(0.0), 5.0);
        r.push(&one(1.0), 5.0);
        let mut rng = stream_rng(4, Purpose::Other, 0, 0);
        let mut b = Batch::default();
        r.sample(2, &mut rng, &mut b);
        // Lower both drawn to zero error, then overwrite slot 0 with a high-priority one.
        r.update(&[0.0, 0.0]);
        r.push(&one(7.0), 9.0);
        let mut sevens = 0;
        for _ in 0..100 {
            r.sample(4, &mut rng, &mut b);
            sevens += b.states.iter().filter(|&&s| s == 7.0).count();
        }
        assert!(sevens > 390, "{sevens} of 400");
    }
}
