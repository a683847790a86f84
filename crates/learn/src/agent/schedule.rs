//! The ε-greedy exploration schedule: linear decay from `start` to `end` over a fraction of
//! the training steps, then constant (as in Stable-Baselines3 and CleanRL).

/// A linear ε schedule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EpsilonSchedule {
    /// ε at step 0.
    pub start: f64,
    /// ε after the decay.
    pub end: f64,
    /// Steps over which ε decays.
    pub decay_steps: u64,
}

impl EpsilonSchedule {
    /// ε at `step`.
    pub fn at(&self, step: u64) -> f64 {
        if self.decay_steps == 0 || step >= self.decay_steps {
            return self.end;
        }
        self.start + (self.end - self.start) * step as f64 / self.decay_steps as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decays_linearly_then_holds() {
        let s = EpsilonSchedule {
            start: 1.0,
            end: 0.1,
            decay_steps: 100,
        };
        assert_eq!(s.at(0), 1.0);
        assert!((s.at(50) - 0.55).abs() < 1e-12);
        assert_eq!(s.at(100), 0.1);
        assert_eq!(s.at(10_000), 0.1);
        assert_eq!(
            EpsilonSchedule {
                decay_steps: 0,
                ..s
            }
            .at(0),
            0.1
        );
    }
}
