//! Hyper-parameters of TapFinger's agents and their MAPPO training, read from one YAML file
//! (`config/tapfinger.yaml`, whose `method: tapfinger` tells `continuum train` which learner it
//! configures); every field has a documented default.

use super::features::TapFeatures;
use crate::agent::LambdaProfile;
use continuum_core::config::{ConfigError, Source};
use continuum_core::pull::Resolution;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What an agent is rewarded for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TapReward {
    /// TapFinger's: −(streams waiting in the agent's eligible set after each step, and those
    /// refused there), per step: waiting is what completion time is made of.
    Waiting,
    /// continuum's objective: each stream an agent binds credits it with (successes −
    /// failures) / queries of that stream; each stream refused is −1, shared by the agents it
    /// was eligible at.
    Success,
}

/// How conflicting claims are resolved (the YAML names of [`Resolution`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResolutionName {
    /// Eq. 11 with Pr(n) from free capacity.
    Bayes,
    /// Eq. 11 with a uniform prior.
    UniformPrior,
    /// The lowest cluster index wins.
    FirstClaim,
}

impl ResolutionName {
    /// The core's resolution.
    pub fn resolution(self) -> Resolution {
        match self {
            Self::Bayes => Resolution::Bayes,
            Self::UniformPrior => Resolution::UniformPrior,
            Self::FirstClaim => Resolution::FirstClaim,
        }
    }
}

/// Every hyper-parameter of the agents and their training.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TapConfig {
    /// Must be `tapfinger`.
    pub method: String,
    /// Training episodes.
    pub episodes: usize,
    /// Simulated time per episode, s.
    pub episode_s: f64,
    /// Range of client rates episodes are drawn from, clients/min/antenna.
    pub lambda_range: [f64; 2],
    /// Constant λ per episode, or λ moving inside it.
    pub lambda_profile: LambdaProfile,
    /// Decision step, ms (the load publication period Δ of the runs, 100 ms by default).
    pub step_ms: f64,
    /// Steps a stream may wait unclaimed before it is refused.
    pub patience: u32,
    /// Hidden width of the network.
    pub hidden: usize,
    /// HAN encoder (false: the ablation without HAN, an MLP over each stream's features).
    pub han: bool,
    /// Pointer over every pending stream (false: the ablation without the pointer, each agent
    /// considers its oldest stream only).
    pub pointer: bool,
    /// Conflict resolution.
    pub resolution: ResolutionName,
    /// The features the network reads: `base` (the shipped checkpoint's) or `rules` (also the
    /// copies of the demand per worker and per cluster that the strong rules score).
    pub features: TapFeatures,
    /// Confidence fallback at run time: an agent whose most probable pointer choice has a
    /// probability below this claims as `prior-pull` instead (absent: never).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<f64>,
    /// At run time, each agent draws its choice from its policy, as in training (false: the
    /// most probable choice).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub sample: bool,
    /// Reward.
    pub reward: TapReward,
    /// Discount per decision of an agent (TapFinger: 1).
    pub gamma: f64,
    /// GAE λ.
    pub gae_lambda: f64,
    /// PPO clip ε.
    pub clip: f64,
    /// PPO epochs per episode.
    pub epochs: usize,
    /// Decisions per minibatch.
    pub minibatch: usize,
    /// Adam learning rate.
    pub learning_rate: f64,
    /// Entropy bonus weight.
    pub entropy: f64,
    /// Value-loss weight.
    pub value_coef: f64,
    /// Gradient-norm clip.
    pub max_grad_norm: f64,
}

impl Default for TapConfig {
    fn default() -> Self {
        Self {
            method: "tapfinger".into(),
            // assumption: sized to train in under 30 min on 2 cores (measured in docs/tapfinger.md).
            episodes: 40,
            episode_s: 120.0,
            lambda_range: [20.0, 100.0],
            lambda_profile: LambdaProfile::Dynamic,
            step_ms: 100.0,
            patience: 1,
            // assumption: 32 keeps a round of every agent under a millisecond on one core;
            // see the size ablation in docs/tapfinger.md.
            hidden: 32,
            han: true,
            pointer: true,
            resolution: ResolutionName::Bayes,
            features: TapFeatures::Base,
            fallback: None,
            sample: false,
            reward: TapReward::Success,
            // assumption: PPO's usual settings (Schulman et al. 2017), γ < 1 so that credit stays
            // with the decisions near it.
            gamma: 0.99,
            gae_lambda: 0.95,
            clip: 0.2,
            epochs: 3,
            minibatch: 512,
            learning_rate: 3e-4,
            entropy: 0.01,
            value_coef: 0.5,
            max_grad_norm: 1.0,
        }
    }
}

impl TapConfig {
    /// Loads a config file; absent fields take their defaults.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let src = Source::read(path)?;
        let c: Self = src.parse()?;
        c.validate()
            .map_err(|(field, m)| src.error_file(field, m))?;
        Ok(c)
    }

    /// Whether a config file is for this learner (its `method` is `tapfinger`).
    pub fn is_tapfinger(path: &Path) -> bool {
        #[derive(Deserialize)]
        struct Method {
            method: Option<String>,
        }
        Source::read(path)
            .ok()
            .and_then(|s| s.parse::<Method>().ok())
            .and_then(|m| m.method)
            .is_some_and(|m| m == "tapfinger")
    }

    /// Checks ranges; the error names the field.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        let pos = |x: f64| x > 0.0 && x.is_finite();
        let bad = |f: &'static str, m: &str| Err((f, m.to_string()));
        if self.method != "tapfinger" {
            return bad("method", "expected `tapfinger`");
        }
        if self.fallback.is_some_and(|c| !(c > 0.0 && c <= 1.0)) {
            return bad("fallback", "expected a probability in (0, 1]");
        }
        if self.episodes == 0 {
            return bad("episodes", "expected at least 1");
        }
        if !pos(self.episode_s) {
            return bad("episode_s", "expected a number > 0");
        }
        let [lo, hi] = self.lambda_range;
        if !(lo >= 0.0 && hi >= lo && hi.is_finite()) {
            return bad("lambda_range", "expected [low, high] with 0 <= low <= high");
        }
        if !pos(self.step_ms) {
            return bad("step_ms", "expected a number > 0");
        }
        if self.patience == 0 {
            return bad("patience", "expected at least 1 step");
        }
        if self.hidden == 0 || self.hidden > 1024 {
            return bad("hidden", "expected 1 ..= 1024");
        }
        if !(0.0..=1.0).contains(&self.gamma) {
            return bad("gamma", "expected 0 <= gamma <= 1");
        }
        if !(0.0..=1.0).contains(&self.gae_lambda) {
            return bad("gae_lambda", "expected 0 <= gae_lambda <= 1");
        }
        if !(self.clip > 0.0 && self.clip < 1.0) {
            return bad("clip", "expected 0 < clip < 1");
        }
        if self.epochs == 0 || self.minibatch == 0 {
            return bad("epochs", "epochs and minibatch must be at least 1");
        }
        if !pos(self.learning_rate) || !pos(self.max_grad_norm) {
            return bad(
                "learning_rate",
                "learning_rate and max_grad_norm must be > 0",
            );
        }
        if !(self.entropy >= 0.0 && self.value_coef >= 0.0) {
            return bad("entropy", "entropy and value_coef must be >= 0");
        }
        Ok(())
    }
}
