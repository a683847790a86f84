//! Retry-on-reset settings (`retry:` in the gateway's configuration): how many retries the
//! gateway's retry budget allows (the state layer's retry budget counts them).

use serde::Deserialize;

/// Longest budget window, s (the retry budget's ring size).
pub(crate) const MAX_WINDOW_S: u64 = 60;

/// Retry-on-reset settings (`retry:` in the gateway's configuration).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetrySettings {
    /// Whether a query whose worker died or reset under it is retried at all.
    #[serde(default = "default_enabled")]
    pub enabled: bool,
    /// Retries allowed per query received over the window: Finagle's `RetryBudget` default
    /// `percentCanRetry` of 0.2 (Envoy's `retry_budget.budget_percent` defaults to 20 % too).
    #[serde(default = "default_ratio")]
    pub budget_ratio: f64,
    /// Retries allowed per second of the window whatever the traffic (so that a quiet gateway
    /// can still retry): Finagle's `RetryBudget` default `minRetriesPerSec` of 10.
    #[serde(default = "default_min_per_s")]
    pub min_per_s: f64,
    /// The window the budget counts over, ms (whole seconds, 1 to 60 s): Finagle's
    /// `RetryBudget` default `ttl` of 10 s.
    #[serde(default = "default_window_ms")]
    pub window_ms: u64,
}

fn default_enabled() -> bool {
    true
}
fn default_ratio() -> f64 {
    0.2
}
fn default_min_per_s() -> f64 {
    10.0
}
fn default_window_ms() -> u64 {
    10_000
}

impl Default for RetrySettings {
    fn default() -> Self {
        Self {
            enabled: default_enabled(),
            budget_ratio: default_ratio(),
            min_per_s: default_min_per_s(),
            window_ms: default_window_ms(),
        }
    }
}

impl RetrySettings {
    /// Checks the numbers; the error names the key.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.budget_ratio.is_finite() && (0.0..=1.0).contains(&self.budget_ratio)) {
            return Err(format!(
                "retry.budget_ratio: expected a number in [0, 1], got {}",
                self.budget_ratio
            ));
        }
        if !(self.min_per_s.is_finite() && self.min_per_s >= 0.0) {
            return Err(format!(
                "retry.min_per_s: expected a number >= 0, got {}",
                self.min_per_s
            ));
        }
        if !(1000..=MAX_WINDOW_S * 1000).contains(&self.window_ms) || self.window_ms % 1000 != 0 {
            return Err(format!(
                "retry.window_ms: expected whole seconds from 1000 to {}, got {}",
                MAX_WINDOW_S * 1000,
                self.window_ms
            ));
        }
        Ok(())
    }
}
