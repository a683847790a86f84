//! The tuner's settings: EdgeTuner's printed ones (Wen et al. 2023, "DRL Training Setting" and
//! "State") where the paper gives them, continuum's assumptions, each said, where it does not
//! or where two cores cannot afford the printed value.

use serde::{Deserialize, Serialize};

/// Everything a tuner's training and its network depend on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TunerSettings {
    /// Seconds between two time-steps (paper: 10).
    pub interval_s: f64,
    /// Waiting tasks in a state (paper: 10).
    pub waiting: usize,
    /// Running tasks in a state (paper: 10).
    pub running: usize,
    /// States stacked into the network's input (paper: history length 8).
    pub history: usize,
    /// α1..3 of eqs. 3–5 (paper: −0.02, −0.1, −0.002).
    pub alpha: [f64; 3],
    /// β1..3 of eqs. 3–5 (paper: 10, 5, 1).
    pub beta: [f64; 3],
    /// Factor on every reward before it is learnt (assumption: 0.1; the paper names none, its
    /// Rainbow code clips rewards to ±1 by default, which would keep only their sign).
    pub reward_scale: f64,
    /// Hidden width (paper: 64).
    pub hidden: usize,
    /// Output channels of the convolution over the history (assumption: 32).
    pub conv_channels: usize,
    /// Its kernel over time (assumption: 2).
    pub conv_kernel: usize,
    /// Cosines of the IQN τ embedding (IQN paper: 64).
    pub quantiles: usize,
    /// Discount γ (Rainbow's default 0.99; the paper prints none).
    pub gamma: f64,
    /// Adam learning rate (assumption: 5·10⁻⁴, against Rainbow's 6.25·10⁻⁵ over 60 M steps: the
    /// budget here is thousands of times smaller).
    pub learning_rate: f64,
    /// Transitions per gradient step (paper: 32).
    pub batch_size: usize,
    /// Gradient steps between target syncs (paper: 1000; assumption 250 here, the budget being
    /// small).
    pub target_update: u64,
    /// Transitions before the first gradient step (paper: 10 K time-steps; assumption: 1 000).
    pub learning_starts: usize,
    /// Replay capacity (paper: 12 M; here whatever memory allows: assumption 20 000).
    pub buffer_size: usize,
    /// Gradient steps per time-step of the actors (paper: "the frequency of sampling from
    /// memory is 5", one batch every 5 time-steps).
    pub gradient_steps_per_window: f64,
    /// Actors (paper: 8).
    pub actors: usize,
    /// Prioritised replay's α (Rainbow: 0.5).
    pub priority_exponent: f64,
    /// Importance-sampling weight β (paper: 0.5).
    pub importance_exponent: f64,
    /// Ape-X's base ε and its spread over the actors (Horgan et al.: 0.4 and 7).
    pub epsilon: f64,
    /// See `epsilon`.
    pub epsilon_exponent: f64,
    /// Training episodes (each one run of `episode_s` of arrivals).
    pub episodes: usize,
    /// Arrivals per training episode, s.
    pub episode_s: f64,
    /// How long a training episode may run on after its arrivals, s.
    pub drain_s: f64,
}

impl Default for TunerSettings {
    fn default() -> Self {
        Self {
            interval_s: 10.0,
            waiting: 10,
            running: 10,
            history: 8,
            alpha: [-0.02, -0.1, -0.002],
            beta: [10.0, 5.0, 1.0],
            reward_scale: 0.1,
            hidden: 64,
            conv_channels: 32,
            conv_kernel: 2,
            quantiles: 64,
            gamma: 0.99,
            learning_rate: 5e-4,
            batch_size: 32,
            target_update: 250,
            learning_starts: 1000,
            buffer_size: 20_000,
            gradient_steps_per_window: 0.2,
            actors: 8,
            priority_exponent: 0.5,
            importance_exponent: 0.5,
            epsilon: 0.4,
            epsilon_exponent: 7.0,
            episodes: 32,
            episode_s: 3600.0,
            drain_s: 3600.0,
        }
    }
}

impl TunerSettings {
    /// Checks ranges; the error names the setting.
    pub fn check(&self) -> Result<(), String> {
        let pos = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(format!("{name}: expected a finite value > 0, got {v}"))
            }
        };
        pos("interval_s", self.interval_s)?;
        pos("episode_s", self.episode_s)?;
        pos("reward_scale", self.reward_scale)?;
        pos("learning_rate", self.learning_rate)?;
        if self.drain_s.is_nan() || self.drain_s < 0.0 {
            return Err(format!(
                "drain_s: expected a value >= 0, got {}",
                self.drain_s
            ));
        }
        if !(0.0..1.0).contains(&self.gamma) {
            return Err(format!("gamma: expected [0, 1), got {}", self.gamma));
        }
        for (name, v) in [
            ("history", self.history),
            ("hidden", self.hidden),
            ("batch_size", self.batch_size),
            ("actors", self.actors),
            ("episodes", self.episodes),
            ("conv_channels", self.conv_channels),
        ] {
            if v == 0 {
                return Err(format!("{name}: expected at least 1"));
            }
        }
        if self.conv_kernel == 0 || self.conv_kernel > self.history {
            return Err(format!(
                "conv_kernel: expected 1..={} (the history), got {}",
                self.history, self.conv_kernel
            ));
        }
        Ok(())
    }
}
