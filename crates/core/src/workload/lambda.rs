//! The client arrival rate λ(t) (clients per minute per scheduler): constant, steps, sine.

/// λ over time, in clients per minute per scheduler.
#[derive(Debug, Clone, PartialEq)]
pub enum Lambda {
    /// The same rate throughout.
    Constant(f64),
    /// Piecewise constant: `(from_ms, per_min)` sorted by time; before the first step, the first rate.
    Step(Vec<(f64, f64)>),
    /// `mean + amplitude · sin(2π t / period)`, clamped at 0.
    Sine {
        /// Mean rate.
        mean: f64,
        /// Amplitude.
        amplitude: f64,
        /// Period, ms.
        period_ms: f64,
    },
}

impl Lambda {
    /// The rate at time `t_ms`, clients per minute.
    pub fn at(&self, t_ms: f64) -> f64 {
        match self {
            Lambda::Constant(x) => *x,
            Lambda::Step(steps) => {
                let i = steps.partition_point(|(t, _)| *t <= t_ms);
                steps[i.saturating_sub(1)].1
            }
            Lambda::Sine {
                mean,
                amplitude,
                period_ms,
            } => {
                (mean + amplitude * (2.0 * std::f64::consts::PI * t_ms / period_ms).sin()).max(0.0)
            }
        }
    }

    /// An upper bound of the rate over all time (for thinning).
    pub fn max(&self) -> f64 {
        match self {
            Lambda::Constant(x) => *x,
            Lambda::Step(steps) => steps.iter().map(|s| s.1).fold(0.0, f64::max),
            Lambda::Sine {
                mean, amplitude, ..
            } => mean + amplitude.abs(),
        }
    }

    /// Time-average of the rate over `[0, duration_ms)` (exact for constants and steps, a
    /// fine Riemann sum for sines), clients per minute.
    pub fn mean_over(&self, duration_ms: f64) -> f64 {
        match self {
            Lambda::Constant(x) => *x,
            _ if duration_ms.is_nan() || duration_ms <= 0.0 => self.at(0.0),
            Lambda::Step(steps) => {
                let mut total = 0.0;
                for (i, (t, r)) in steps.iter().enumerate() {
                    let from = if i == 0 { 0.0 } else { t.min(duration_ms) };
                    let to = steps
                        .get(i + 1)
                        .map_or(duration_ms, |n| n.0.min(duration_ms));
                    total += r * (to - from).max(0.0);
                }
                total / duration_ms
            }
            Lambda::Sine { .. } => {
                let n = 10_000;
                (0..n)
                    .map(|i| self.at((i as f64 + 0.5) / n as f64 * duration_ms))
                    .sum::<f64>()
                    / n as f64
            }
        }
    }

    /// The smallest value it takes over all time.
    pub fn min(&self) -> f64 {
        match self {
            Lambda::Constant(x) => *x,
            Lambda::Step(steps) => steps.iter().map(|s| s.1).fold(f64::INFINITY, f64::min),
            Lambda::Sine {
                mean, amplitude, ..
            } => (mean - amplitude.abs()).max(0.0),
        }
    }

    /// Its long-run level: the value, the sine's mean, or the mean of the steps' values.
    pub fn level(&self) -> f64 {
        match self {
            Lambda::Constant(x) => *x,
            Lambda::Step(steps) => steps.iter().map(|s| s.1).sum::<f64>() / steps.len() as f64,
            Lambda::Sine { mean, .. } => *mean,
        }
    }

    /// A one-line description, for reports.
    pub fn describe(&self) -> String {
        match self {
            Lambda::Constant(x) => format!("{x}"),
            Lambda::Step(s) => format!(
                "step{:?}",
                s.iter().map(|(t, r)| (t / 1000.0, *r)).collect::<Vec<_>>()
            ),
            Lambda::Sine {
                mean,
                amplitude,
                period_ms,
            } => format!(
                "sine(mean {mean}, amplitude {amplitude}, period {} s)",
                period_ms / 1000.0
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_hold_until_the_next_one() {
        let l = Lambda::Step(vec![(0.0, 10.0), (1000.0, 20.0)]);
        assert_eq!(l.at(0.0), 10.0);
        assert_eq!(l.at(999.0), 10.0);
        assert_eq!(l.at(1000.0), 20.0);
        assert_eq!(l.max(), 20.0);
        assert_eq!(l.mean_over(2000.0), 15.0);
        assert_eq!(l.mean_over(500.0), 10.0);
    }

    #[test]
    fn sine_is_clamped_at_zero() {
        let l = Lambda::Sine {
            mean: 1.0,
            amplitude: 2.0,
            period_ms: 4.0,
        };
        assert_eq!(l.at(3.0), 0.0);
        assert!((l.at(1.0) - 3.0).abs() < 1e-9);
        let full = Lambda::Sine {
            mean: 60.0,
            amplitude: 40.0,
            period_ms: 1000.0,
        };
        assert!((full.mean_over(3000.0) - 60.0).abs() < 1e-6);
    }
}
