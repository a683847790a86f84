//! Ape-X's settings (Horgan et al., "Distributed Prioritized Experience Replay", ICLR 2018;
//! EdgeTuner's actors): several actors, each with its own fixed ε, feed one learner through a
//! prioritised replay (docs/model.md §9.5). Off unless a config has an `apex:` block.

use serde::{Deserialize, Serialize};

/// `apex: {actors, priority_exponent, importance_exponent, epsilon, epsilon_exponent}`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ApexConfig {
    /// Actors, each running one episode per round with the learner's weights of the round
    /// before last (EdgeTuner: 8; its Fig. 15 compares 4, 8 and 16).
    pub actors: usize,
    /// Priority exponent α: a transition is drawn with probability p^α / Σ p^α (Ape-X: 0.6).
    pub priority_exponent: f64,
    /// Importance-sampling exponent β: each drawn transition's loss is weighted by
    /// (N·P(i))^−β over the batch's largest such weight (Ape-X: 0.4).
    pub importance_exponent: f64,
    /// Base ε of the actors' exploration (Ape-X: 0.4).
    pub epsilon: f64,
    /// Spread of the actors' ε: actor i of N explores with ε^(1 + i/(N − 1) · this) (Ape-X: 7).
    pub epsilon_exponent: f64,
}

impl Default for ApexConfig {
    fn default() -> Self {
        // Horgan et al. 2018, §4 and appendix (Atari): α = 0.6, β = 0.4, ε = 0.4, exponent 7.
        Self {
            actors: 8,
            priority_exponent: 0.6,
            importance_exponent: 0.4,
            epsilon: 0.4,
            epsilon_exponent: 7.0,
        }
    }
}

impl ApexConfig {
    /// The fixed ε of actor `i` (of [`Self::actors`]): ε^(1 + i/(N − 1) · exponent); ε itself
    /// for a single actor.
    pub fn actor_epsilon(&self, i: usize) -> f64 {
        if self.actors <= 1 {
            return self.epsilon;
        }
        let x = i as f64 / (self.actors - 1) as f64;
        self.epsilon.powf(1.0 + x * self.epsilon_exponent)
    }

    /// Checks ranges; the error names the field (under `apex`).
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        let unit = |x: f64| (0.0..=1.0).contains(&x);
        if self.actors == 0 || self.actors > 256 {
            return Err(("apex", "expected 1 <= actors <= 256".into()));
        }
        if !unit(self.priority_exponent) || !unit(self.importance_exponent) || !unit(self.epsilon) {
            return Err((
                "apex",
                "priority_exponent, importance_exponent and epsilon must be in [0, 1]".into(),
            ));
        }
        if !(self.epsilon_exponent >= 0.0 && self.epsilon_exponent.is_finite()) {
            return Err(("apex", "expected epsilon_exponent >= 0".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actor_epsilons_follow_ape_x() {
        let a = ApexConfig {
            actors: 8,
            ..ApexConfig::default()
        };
        assert_eq!(a.actor_epsilon(0), 0.4);
        // The last actor: 0.4^8 ≈ 6.6e-4.
        assert!((a.actor_epsilon(7) - 0.4f64.powi(8)).abs() < 1e-12);
        assert!(a.actor_epsilon(3) < a.actor_epsilon(2));
        let one = ApexConfig { actors: 1, ..a };
        assert_eq!(one.actor_epsilon(0), 0.4);
        assert!(ApexConfig { actors: 0, ..a }.validate().is_err());
        assert!(ApexConfig { epsilon: 1.5, ..a }.validate().is_err());
        assert!(a.validate().is_ok());
    }
}
