//! The computation-gain utilities f_r^k of OGASched (Zhao et al.): concave, increasing, zero at
//! y = 0, each scaled by a coefficient α > 0, with their derivatives.
//!
//! | name | f(y) | f'(y) |
//! |---|---|---|
//! | `linear` | α y | α |
//! | `log` | α ln(y + 1) | α / (y + 1) |
//! | `reciprocal` | 1/α − 1/(y + α) | 1 / (y + α)² |
//! | `poly` | α √(y + 1) − α | α / (2 √(y + 1)) |
//!
//! The reciprocal form is the paper's (and issue 13's) α⁻¹ − (y + α)⁻¹; the authors' public
//! prototype scales α by 3 inside it, which we do not.

use std::fmt;

/// The shape of a computation gain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Utility {
    /// α y.
    Linear,
    /// α ln(y + 1).
    Log,
    /// 1/α − 1/(y + α).
    Reciprocal,
    /// α √(y + 1) − α.
    Poly,
}

impl Utility {
    /// Every utility, in the order the paper lists them.
    pub const ALL: [Utility; 4] = [
        Utility::Linear,
        Utility::Log,
        Utility::Reciprocal,
        Utility::Poly,
    ];

    /// Its name (`linear`, `log`, `reciprocal`, `poly`).
    pub fn name(self) -> &'static str {
        match self {
            Utility::Linear => "linear",
            Utility::Log => "log",
            Utility::Reciprocal => "reciprocal",
            Utility::Poly => "poly",
        }
    }

    /// The utility called `name`.
    pub fn parse(name: &str) -> Option<Utility> {
        Utility::ALL.into_iter().find(|u| u.name() == name)
    }
}

impl fmt::Display for Utility {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The gain f_r^k of one resource type on one instance: a utility shape and its α (> 0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gain {
    /// The shape.
    pub utility: Utility,
    /// Its coefficient α (> 0).
    pub alpha: f64,
}

impl Gain {
    /// A gain of shape `utility` with coefficient `alpha`.
    pub fn new(utility: Utility, alpha: f64) -> Self {
        Gain { utility, alpha }
    }

    /// f(y) for y ≥ 0.
    #[inline]
    pub fn value(&self, y: f64) -> f64 {
        let a = self.alpha;
        match self.utility {
            Utility::Linear => a * y,
            Utility::Log => a * y.ln_1p(),
            Utility::Reciprocal => 1.0 / a - 1.0 / (y + a),
            Utility::Poly => a * ((y + 1.0).sqrt() - 1.0),
        }
    }

    /// f'(y) for y ≥ 0.
    #[inline]
    pub fn derivative(&self, y: f64) -> f64 {
        let a = self.alpha;
        match self.utility {
            Utility::Linear => a,
            Utility::Log => a / (y + 1.0),
            Utility::Reciprocal => 1.0 / ((y + a) * (y + a)),
            Utility::Poly => 0.5 * a / (y + 1.0).sqrt(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for u in Utility::ALL {
            assert_eq!(Utility::parse(u.name()), Some(u));
        }
        assert_eq!(Utility::parse("cubic"), None);
    }

    #[test]
    fn every_gain_is_zero_at_zero_increasing_and_concave() {
        for u in Utility::ALL {
            for alpha in [0.5, 1.0, 1.25, 1.5, 3.0] {
                let g = Gain::new(u, alpha);
                assert!(g.value(0.0).abs() < 1e-15, "{u} at 0");
                let mut prev_v = 0.0;
                let mut prev_d = f64::INFINITY;
                for i in 1..200 {
                    let y = i as f64 * 0.37;
                    let (v, d) = (g.value(y), g.derivative(y));
                    assert!(v > prev_v, "{u} α {alpha}: not increasing at {y}");
                    assert!(d > 0.0 && d <= prev_d + 1e-15, "{u}: f' not non-increasing");
                    prev_v = v;
                    prev_d = d;
                }
            }
        }
    }

    #[test]
    fn derivatives_match_finite_differences() {
        // Central differences with h = 1e-5: truncation error ~ h² |f'''| ≤ 1e-9 here.
        let h = 1e-5;
        for u in Utility::ALL {
            for alpha in [1.0, 1.27, 1.5] {
                let g = Gain::new(u, alpha);
                for y in [0.0, 0.01, 0.5, 1.0, 3.7, 20.0, 150.0, 1000.0] {
                    // One-sided at 0 (the domain is y ≥ 0), second order.
                    let fd = if y == 0.0 {
                        (-3.0 * g.value(0.0) + 4.0 * g.value(h) - g.value(2.0 * h)) / (2.0 * h)
                    } else {
                        (g.value(y + h) - g.value(y - h)) / (2.0 * h)
                    };
                    let d = g.derivative(y);
                    assert!(
                        (fd - d).abs() <= 1e-6 * (1.0 + d.abs()),
                        "{u} α {alpha} y {y}: f' {d} vs finite difference {fd}"
                    );
                }
            }
        }
    }

    #[test]
    fn known_values() {
        let a = 1.5;
        assert!((Gain::new(Utility::Linear, a).value(2.0) - 3.0).abs() < 1e-12);
        assert!((Gain::new(Utility::Log, a).value(std::f64::consts::E - 1.0) - a).abs() < 1e-12);
        assert!(
            (Gain::new(Utility::Reciprocal, a).value(1.5) - (1.0 / 1.5 - 1.0 / 3.0)).abs() < 1e-12
        );
        assert!((Gain::new(Utility::Poly, a).value(3.0) - a).abs() < 1e-12);
    }
}
