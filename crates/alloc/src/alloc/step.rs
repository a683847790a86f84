//! Learning-rate schedules of the gradient steps.

/// A step size η_t as a function of the step index t = 0, 1, 2, …
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepSize {
    /// η_t = η0 · decay^t: OGASched's schedule (its Table 2: η0 = 25, decay 0.9999).
    Geometric {
        /// η0 (> 0).
        eta0: f64,
        /// The factor per step, in (0, 1].
        decay: f64,
    },
    /// η_t = η0 / √(t + 1): the classic schedule of projected subgradient ascent, used for the
    /// best fixed allocation in hindsight.
    InvSqrt {
        /// η0 (> 0).
        eta0: f64,
    },
}

impl StepSize {
    /// OGASched's defaults (its Table 2).
    pub const PAPER: StepSize = StepSize::Geometric {
        eta0: 25.0,
        decay: 0.9999,
    };

    /// η_t.
    pub fn at(&self, t: u64) -> f64 {
        match *self {
            StepSize::Geometric { eta0, decay } => eta0 * decay.powf(t as f64),
            StepSize::InvSqrt { eta0 } => eta0 / ((t + 1) as f64).sqrt(),
        }
    }

    /// Checks the parameters; the error names the one out of range.
    pub fn validate(&self) -> Result<(), String> {
        let (eta0, decay) = match *self {
            StepSize::Geometric { eta0, decay } => (eta0, decay),
            StepSize::InvSqrt { eta0 } => (eta0, 1.0),
        };
        if !(eta0.is_finite() && eta0 > 0.0) {
            return Err(format!("eta0: expected a finite value > 0, got {eta0}"));
        }
        if !(decay > 0.0 && decay <= 1.0) {
            return Err(format!("decay: expected a value in (0, 1], got {decay}"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules() {
        let g = StepSize::PAPER;
        assert_eq!(g.at(0), 25.0);
        assert!((g.at(2) - 25.0 * 0.9999 * 0.9999).abs() < 1e-12);
        assert!((g.at(2000) - 25.0 * 0.9999f64.powi(2000)).abs() < 1e-9);
        let s = StepSize::InvSqrt { eta0: 4.0 };
        assert_eq!(s.at(0), 4.0);
        assert_eq!(s.at(3), 2.0);
        assert!(g.validate().is_ok());
        assert!(
            StepSize::Geometric {
                eta0: 0.0,
                decay: 0.9
            }
            .validate()
            .unwrap_err()
            .starts_with("eta0")
        );
        assert!(
            StepSize::Geometric {
                eta0: 1.0,
                decay: 1.5
            }
            .validate()
            .unwrap_err()
            .starts_with("decay")
        );
    }
}
