//! The replay buffer: a ring of transitions, sampled uniformly from a seeded stream.
//!
//! A transition carries, per stream class (network head) and action, a learning value and a
//! weight: with temporal-difference credit the value is the reward of the action the class took
//! (weight 1 there, 0 elsewhere; 0 for the whole class when it saw no traffic); with
//! counterfactual credit every action of a class has a measured value (full information).

use continuum_core::rng::SimRng;
use rand::Rng;

/// One transition of one scheduler.
#[derive(Debug, Clone, PartialEq)]
pub struct Transition {
    /// State the actions were chosen in.
    pub state: Vec<f32>,
    /// Action taken per class.
    pub actions: Vec<u32>,
    /// Value per (class, action), `classes × actions`: a reward, or a counterfactual value.
    pub values: Vec<f32>,
    /// Weight per (class, action): 0 where `values` says nothing.
    pub weights: Vec<f32>,
    /// State at the next boundary.
    pub next_state: Vec<f32>,
    /// Whether the episode ended with this transition (no bootstrap).
    pub done: bool,
}

impl Transition {
    /// A transition whose class `c` took `actions[c]` and earned `rewards[c]` (weight
    /// `class_weights[c]`), for a network of `n_actions` actions per class.
    pub fn taken(
        state: Vec<f32>,
        actions: Vec<u32>,
        rewards: &[f32],
        class_weights: &[f32],
        n_actions: usize,
        next_state: Vec<f32>,
        done: bool,
    ) -> Self {
        let mut values = vec![0.0; actions.len() * n_actions];
        let mut weights = vec![0.0; actions.len() * n_actions];
        for (c, &a) in actions.iter().enumerate() {
            values[c * n_actions + a as usize] = rewards[c];
            weights[c * n_actions + a as usize] = class_weights[c];
        }
        Self {
            state,
            actions,
            values,
            weights,
            next_state,
            done,
        }
    }
}

impl Transition {
    /// Mean value of the actions taken, over the classes that carry a value for them (the
    /// reward with temporal-difference credit; with counterfactual credit, how much better than
    /// the class's average action the taken one was). `None` when no class does.
    pub fn taken_value(&self) -> Option<f32> {
        let n = self.values.len() / self.actions.len().max(1);
        let (sum, k) = self
            .actions
            .iter()
            .enumerate()
            .map(|(c, &a)| c * n + a as usize)
            .filter(|&i| self.weights[i] > 0.0)
            .fold((0.0, 0), |(s, k), i| (s + self.values[i], k + 1));
        (k > 0).then(|| sum / k as f32)
    }
}

/// A batch of transitions in flat arrays ready for tensors.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Batch {
    /// States, `len × state_len`.
    pub states: Vec<f32>,
    /// Actions taken, `len × classes`.
    pub actions: Vec<u32>,
    /// Values, `len × classes × actions`.
    pub values: Vec<f32>,
    /// Weights, `len × classes × actions`.
    pub weights: Vec<f32>,
    /// Next states, `len × state_len`.
    pub next_states: Vec<f32>,
    /// 1.0 where the episode ended with the transition (no bootstrap), else 0.0.
    pub dones: Vec<f32>,
    /// Importance weight per transition of a prioritised draw, multiplied into its loss
    /// (empty: every transition weighs 1).
    pub importance: Vec<f64>,
}

impl Batch {
    /// Transitions in the batch.
    pub fn len(&self) -> usize {
        self.dones.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.dones.is_empty()
    }

    /// Appends one transition.
    pub fn push(&mut self, t: &Transition) {
        self.states.extend_from_slice(&t.state);
        self.next_states.extend_from_slice(&t.next_state);
        self.actions.extend_from_slice(&t.actions);
        self.values.extend_from_slice(&t.values);
        self.weights.extend_from_slice(&t.weights);
        self.dones.push(if t.done { 1.0 } else { 0.0 });
    }

    /// Empties the batch, keeping its memory.
    pub fn clear(&mut self) {
        self.states.clear();
        self.next_states.clear();
        self.actions.clear();
        self.values.clear();
        self.weights.clear();
        self.dones.clear();
        self.importance.clear();
    }
}

/// A fixed-capacity ring of transitions; the oldest is overwritten when full.
#[derive(Debug, Clone)]
pub struct ReplayBuffer {
    state_len: usize,
    classes: usize,
    cells: usize,
    capacity: usize,
    len: usize,
    next: usize,
    states: Vec<f32>,
    next_states: Vec<f32>,
    actions: Vec<u32>,
    values: Vec<f32>,
    weights: Vec<f32>,
    dones: Vec<f32>,
}

impl ReplayBuffer {
    /// An empty buffer of `capacity` transitions of states of `state_len` numbers, for a
    /// network of `classes` heads of `actions` actions.
    pub fn new(capacity: usize, state_len: usize, classes: usize, actions: usize) -> Self {
        let cells = classes * actions;
        Self {
            state_len,
            classes,
            cells,
            capacity,
            len: 0,
            next: 0,
            states: vec![0.0; capacity * state_len],
            next_states: vec![0.0; capacity * state_len],
            actions: vec![0; capacity * classes],
            values: vec![0.0; capacity * cells],
            weights: vec![0.0; capacity * cells],
            dones: vec![0.0; capacity],
        }
    }

    /// Transitions held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Stores a transition; returns the slot it went to.
    pub fn push(&mut self, t: &Transition) -> usize {
        assert_eq!(t.state.len(), self.state_len, "state length");
        assert_eq!(t.next_state.len(), self.state_len, "next state length");
        assert_eq!(t.actions.len(), self.classes, "actions per class");
        assert_eq!(t.values.len(), self.cells, "values per class and action");
        assert_eq!(t.weights.len(), self.cells, "weights per class and action");
        let i = self.next;
        let r = i * self.state_len..(i + 1) * self.state_len;
        self.states[r.clone()].copy_from_slice(&t.state);
        self.next_states[r].copy_from_slice(&t.next_state);
        self.actions[i * self.classes..(i + 1) * self.classes].copy_from_slice(&t.actions);
        self.values[i * self.cells..(i + 1) * self.cells].copy_from_slice(&t.values);
        self.weights[i * self.cells..(i + 1) * self.cells].copy_from_slice(&t.weights);
        self.dones[i] = if t.done { 1.0 } else { 0.0 };
        self.next = (i + 1) % self.capacity;
        self.len = (self.len + 1).min(self.capacity);
        i
    }

    /// Draws `n` transitions uniformly (with replacement) into `out`.
    pub fn sample(&self, n: usize, rng: &mut SimRng, out: &mut Batch) {
        assert!(!self.is_empty(), "sampling an empty buffer");
        out.clear();
        for _ in 0..n {
            let i = rng.random_range(0..self.len);
            self.copy_into(i, out);
        }
    }

    /// Copies the transitions in `slots` into `out`, in that order.
    pub(crate) fn gather(&self, slots: &[usize], out: &mut Batch) {
        out.clear();
        for &i in slots {
            self.copy_into(i, out);
        }
    }

    fn copy_into(&self, i: usize, out: &mut Batch) {
        let r = i * self.state_len..(i + 1) * self.state_len;
        out.states.extend_from_slice(&self.states[r.clone()]);
        out.next_states.extend_from_slice(&self.next_states[r]);
        out.actions
            .extend_from_slice(&self.actions[i * self.classes..(i + 1) * self.classes]);
        out.values
            .extend_from_slice(&self.values[i * self.cells..(i + 1) * self.cells]);
        out.weights
            .extend_from_slice(&self.weights[i * self.cells..(i + 1) * self.cells]);
        out.dones.push(self.dones[i]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use continuum_core::rng::{Purpose, stream_rng};

    #[test]
    fn ring_overwrites_the_oldest_and_samples_what_it_holds() {
        let mut b = ReplayBuffer::new(3, 2, 2, 3);
        for k in 0..5u32 {
            let x = k as f32;
            b.push(&Transition::taken(
                vec![x, x],
                vec![k % 3, (k + 1) % 3],
                &[x, -x],
                &[1.0, 0.5],
                3,
                vec![x + 1.0, x + 1.0],
                k == 4,
            ));
        }
        assert_eq!(b.len(), 3);
        let mut batch = Batch::default();
        b.sample(300, &mut stream_rng(1, Purpose::Other, 0, 0), &mut batch);
        assert_eq!(batch.len(), 300);
        // Only transitions 2, 3, 4 remain; each is drawn, consistently.
        let mut seen = [false; 5];
        for j in 0..batch.len() {
            let k = batch.states[2 * j] as u32;
            assert!(k >= 2, "transition {k} should have been overwritten");
            seen[k as usize] = true;
            assert_eq!(batch.next_states[2 * j], k as f32 + 1.0);
            assert_eq!(batch.actions[2 * j..2 * j + 2], [k % 3, (k + 1) % 3]);
            let v = &batch.values[6 * j..6 * j + 6];
            let w = &batch.weights[6 * j..6 * j + 6];
            // Class 0 took k % 3, class 1 took (k + 1) % 3: only those cells carry values.
            assert_eq!(v[(k % 3) as usize], k as f32);
            assert_eq!(v[3 + ((k + 1) % 3) as usize], -(k as f32));
            assert_eq!(w.iter().sum::<f32>(), 1.5);
            assert_eq!(batch.dones[j], if k == 4 { 1.0 } else { 0.0 });
        }
        assert_eq!(seen, [false, false, true, true, true]);
    }
}
