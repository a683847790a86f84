//! What a tuner optimises, as one score of a set of queries: their success ratio (ASET's
//! objective and the default), or their success ratio traded against their p99 latency
//! (EdgeTuner's objective is the tail; a pure tail score would reward dropping queries, since
//! only answered queries have a latency, so the success ratio stays in it).

use super::{Counts, LogHistogram};
use serde::{Deserialize, Serialize};

/// A score of queries' outcomes; higher is better.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Objective {
    /// The success ratio.
    #[default]
    SuccessRatio,
    /// `success ratio − weight · ln(p99 / 1 ms)`: a relative change of the answered queries'
    /// p99 by x % is worth `weight · x` percentage points of success ratio (for small x).
    Tail {
        /// Success-ratio points per unit of log p99 (0.1: a 10 % shorter p99 is worth 1 pp).
        weight: f64,
    },
}

impl Objective {
    /// The score of queries counted by `c` whose answered latencies are `latency`.
    pub fn score(&self, c: &Counts, latency: &LogHistogram) -> f64 {
        match *self {
            Self::SuccessRatio => c.success_ratio(),
            Self::Tail { weight } => {
                // Below 1 ms (or nothing answered) the tail term is 0: no reward for emptiness.
                c.success_ratio() - weight * latency.quantile_ms(0.99).max(1.0).ln()
            }
        }
    }

    /// Whether the score reads latencies (callers may skip gathering them otherwise).
    pub fn needs_latency(&self) -> bool {
        matches!(self, Self::Tail { .. })
    }

    /// Checks the weight; the message says what was expected.
    pub fn validate(&self) -> Result<(), String> {
        match *self {
            Self::Tail { weight } if !(weight >= 0.0 && weight.is_finite()) => {
                Err(format!("tail weight {weight}: expected a number >= 0"))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(success: u64, offered: u64) -> Counts {
        Counts {
            offered,
            success,
            failure: 0,
            rejected: offered - success,
            ..Counts::default()
        }
    }

    fn latencies(ms: f64, n: usize) -> LogHistogram {
        let mut h = LogHistogram::default();
        (0..n).for_each(|_| h.record(ms));
        h
    }

    #[test]
    fn tail_trades_success_for_a_shorter_p99_at_its_weight() {
        let tail = Objective::Tail { weight: 0.1 };
        // Same successes, p99 halved: ln 2 · 0.1 ≈ 6.9 pp better.
        let slow = tail.score(&counts(80, 100), &latencies(400.0, 80));
        let fast = tail.score(&counts(80, 100), &latencies(200.0, 80));
        assert!(
            (fast - slow - 0.1 * 2f64.ln()).abs() < 0.002,
            "{fast} {slow}"
        );
        // 10 pp fewer successes are not bought by a 20 % shorter p99 at weight 0.1.
        let dropped = tail.score(&counts(70, 100), &latencies(320.0, 70));
        assert!(dropped < slow);
        // The success objective ignores latency.
        let s = Objective::SuccessRatio;
        assert_eq!(s.score(&counts(80, 100), &latencies(1.0, 1)), 0.8);
        assert!(Objective::Tail { weight: -1.0 }.validate().is_err());
        assert!(tail.needs_latency() && !s.needs_latency());
    }
}
