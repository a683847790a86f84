//! The replay buffer: a ring of transitions, sampled uniformly from a seeded stream.

use crate::rng::SimRng;
use rand::Rng;

/// A batch of transitions in flat arrays ready for tensors.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Batch {
    /// States, `len × state_len`.
    pub states: Vec<f32>,
    /// Actions taken.
    pub actions: Vec<u32>,
    /// Rewards received.
    pub rewards: Vec<f32>,
    /// Next states, `len × state_len`.
    pub next_states: Vec<f32>,
    /// 1.0 where the episode ended with the transition (no bootstrap), else 0.0.
    pub dones: Vec<f32>,
}

/// A fixed-capacity ring of transitions; the oldest is overwritten when full.
#[derive(Debug, Clone)]
pub struct ReplayBuffer {
    state_len: usize,
    capacity: usize,
    len: usize,
    next: usize,
    states: Vec<f32>,
    next_states: Vec<f32>,
    actions: Vec<u32>,
    rewards: Vec<f32>,
    dones: Vec<f32>,
}

impl ReplayBuffer {
    /// An empty buffer of `capacity` transitions of states of `state_len` numbers.
    pub fn new(capacity: usize, state_len: usize) -> Self {
        Self {
            state_len,
            capacity,
            len: 0,
            next: 0,
            states: vec![0.0; capacity * state_len],
            next_states: vec![0.0; capacity * state_len],
            actions: vec![0; capacity],
            rewards: vec![0.0; capacity],
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

    /// Stores a transition.
    pub fn push(
        &mut self,
        state: &[f32],
        action: u32,
        reward: f32,
        next_state: &[f32],
        done: bool,
    ) {
        assert_eq!(state.len(), self.state_len, "state length");
        assert_eq!(next_state.len(), self.state_len, "next state length");
        let i = self.next;
        let r = i * self.state_len..(i + 1) * self.state_len;
        self.states[r.clone()].copy_from_slice(state);
        self.next_states[r].copy_from_slice(next_state);
        self.actions[i] = action;
        self.rewards[i] = reward;
        self.dones[i] = if done { 1.0 } else { 0.0 };
        self.next = (i + 1) % self.capacity;
        self.len = (self.len + 1).min(self.capacity);
    }

    /// Draws `n` transitions uniformly (with replacement) into `out`.
    pub fn sample(&self, n: usize, rng: &mut SimRng, out: &mut Batch) {
        assert!(!self.is_empty(), "sampling an empty buffer");
        out.states.clear();
        out.next_states.clear();
        out.actions.clear();
        out.rewards.clear();
        out.dones.clear();
        for _ in 0..n {
            let i = rng.random_range(0..self.len);
            let r = i * self.state_len..(i + 1) * self.state_len;
            out.states.extend_from_slice(&self.states[r.clone()]);
            out.next_states.extend_from_slice(&self.next_states[r]);
            out.actions.push(self.actions[i]);
            out.rewards.push(self.rewards[i]);
            out.dones.push(self.dones[i]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Purpose, stream_rng};

    #[test]
    fn ring_overwrites_the_oldest_and_samples_what_it_holds() {
        let mut b = ReplayBuffer::new(3, 2);
        for k in 0..5u32 {
            let x = k as f32;
            b.push(&[x, x], k, x, &[x + 1.0, x + 1.0], k == 4);
        }
        assert_eq!(b.len(), 3);
        let mut batch = Batch::default();
        b.sample(300, &mut stream_rng(1, Purpose::Other, 0, 0), &mut batch);
        // Only transitions 2, 3, 4 remain; each is drawn, consistently.
        let mut seen = [false; 5];
        for (j, &a) in batch.actions.iter().enumerate() {
            assert!(a >= 2, "transition {a} should have been overwritten");
            seen[a as usize] = true;
            assert_eq!(batch.states[2 * j], a as f32);
            assert_eq!(batch.next_states[2 * j], a as f32 + 1.0);
            assert_eq!(batch.rewards[j], a as f32);
            assert_eq!(batch.dones[j], if a == 4 { 1.0 } else { 0.0 });
        }
        assert_eq!(seen, [false, false, true, true, true]);
    }
}
