//! Random distributions written in input files: a plain number, or `{uniform: [a, b]}`,
//! `{normal: {mean, std}}`, `{lognormal: {mean, std}}`, `{exponential: {mean}}`,
//! `{choice: [x, y, …]}` or `{choice: {values: [...], weights: [...]}}`.

use rand::Rng;
use rand_distr::{Distribution, Exp, LogNormal, Normal};
use serde::Deserialize;

/// A scalar distribution as written in YAML (validated by [`Dist::check`]).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(
    untagged,
    expecting = "expected a number or one of `{uniform: [a, b]}`, `{normal: {mean, std}}`, `{lognormal: {mean, std}}`, `{exponential: {mean}}`, `{choice: [values]}`"
)]
pub enum DistSpec {
    /// A constant.
    Const(f64),
    /// One of the tagged forms.
    Tagged(TaggedDist),
}

/// The tagged forms of [`DistSpec`].
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum TaggedDist {
    /// Uniform on `[a, b]`.
    Uniform([f64; 2]),
    /// Normal with `mean`, `std`, truncated below at `min` (default 0) by resampling.
    Normal {
        /// Mean.
        mean: f64,
        /// Standard deviation.
        std: f64,
        /// Lower truncation bound (values below are redrawn; default 0).
        #[serde(default)]
        min: f64,
    },
    /// Log-normal with the given mean and standard deviation *of the value itself*.
    Lognormal {
        /// Mean of the value.
        mean: f64,
        /// Standard deviation of the value.
        std: f64,
    },
    /// Exponential with the given mean.
    Exponential {
        /// Mean.
        mean: f64,
    },
    /// A choice among listed values: equally likely, or with weights.
    Choice(ChoiceSpec),
}

/// Values for a `choice` distribution.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(
    untagged,
    expecting = "expected a list of numbers or `{values: [numbers], weights: [numbers]}`"
)]
pub enum ChoiceSpec {
    /// Equally likely values.
    Plain(Vec<f64>),
    /// Values with relative weights.
    Weighted {
        /// The values.
        values: Vec<f64>,
        /// Their relative weights (same length, non-negative, not all zero).
        weights: Vec<f64>,
    },
}

/// A validated distribution, ready to sample, with its mean and least value.
#[derive(Debug, Clone)]
pub struct Dist {
    kind: Kind,
    mean: f64,
    min: f64,
}

#[derive(Debug, Clone)]
enum Kind {
    Const(f64),
    Uniform(f64, f64),
    Normal(Normal<f64>, f64),
    LogNormal(LogNormal<f64>),
    Exp(Exp<f64>),
    /// Values with cumulative weights normalised to 1.
    Choice(Vec<f64>, Vec<f64>),
}

impl Dist {
    /// Validates a spec; `Err` says what is wrong. `min_ok` is the least value the field may take.
    pub fn check(spec: &DistSpec, min_ok: f64) -> Result<Self, String> {
        let finite = |x: f64, what: &str| {
            if x.is_finite() {
                Ok(x)
            } else {
                Err(format!("{what} must be a finite number"))
            }
        };
        let d = match spec {
            DistSpec::Const(x) => {
                let x = finite(*x, "value")?;
                Dist {
                    kind: Kind::Const(x),
                    mean: x,
                    min: x,
                }
            }
            DistSpec::Tagged(TaggedDist::Uniform([a, b])) => {
                let (a, b) = (finite(*a, "uniform bound")?, finite(*b, "uniform bound")?);
                if a > b {
                    return Err(format!(
                        "uniform: [{a}, {b}] has its lower bound above its upper bound"
                    ));
                }
                Dist {
                    kind: Kind::Uniform(a, b),
                    mean: (a + b) / 2.0,
                    min: a,
                }
            }
            DistSpec::Tagged(TaggedDist::Normal { mean, std, min }) => {
                let n = Normal::new(finite(*mean, "mean")?, finite(*std, "std")?)
                    .map_err(|_| format!("normal: std must be >= 0, got {std}"))?;
                if *mean < *min {
                    return Err(format!(
                        "normal: mean {mean} is below its truncation bound {min}"
                    ));
                }
                // Mean of the truncated normal is close to `mean` when the bound is far below it.
                Dist {
                    kind: Kind::Normal(n, *min),
                    mean: *mean,
                    min: *min,
                }
            }
            DistSpec::Tagged(TaggedDist::Lognormal { mean, std }) => {
                if *mean <= 0.0 || *std < 0.0 || !mean.is_finite() || !std.is_finite() {
                    return Err(format!(
                        "lognormal: needs mean > 0 and std >= 0, got mean {mean}, std {std}"
                    ));
                }
                let s2 = (1.0 + (std / mean).powi(2)).ln();
                let mu = mean.ln() - s2 / 2.0;
                let l = LogNormal::new(mu, s2.sqrt()).map_err(|e| e.to_string())?;
                Dist {
                    kind: Kind::LogNormal(l),
                    mean: *mean,
                    min: 0.0,
                }
            }
            DistSpec::Tagged(TaggedDist::Exponential { mean }) => {
                if !(*mean > 0.0 && mean.is_finite()) {
                    return Err(format!("exponential: mean must be > 0, got {mean}"));
                }
                let e = Exp::new(1.0 / mean).map_err(|e| e.to_string())?;
                Dist {
                    kind: Kind::Exp(e),
                    mean: *mean,
                    min: 0.0,
                }
            }
            DistSpec::Tagged(TaggedDist::Choice(c)) => {
                let (values, weights) = match c {
                    ChoiceSpec::Plain(v) => (v.clone(), vec![1.0; v.len()]),
                    ChoiceSpec::Weighted { values, weights } => (values.clone(), weights.clone()),
                };
                if values.is_empty() || values.len() != weights.len() {
                    return Err("choice: needs at least one value and one weight per value".into());
                }
                if weights.iter().any(|w| !(*w >= 0.0 && w.is_finite())) {
                    return Err("choice: weights must be finite and >= 0".into());
                }
                let total: f64 = weights.iter().sum();
                if total <= 0.0 {
                    return Err("choice: weights must not all be zero".into());
                }
                let mut acc = 0.0;
                let cum: Vec<f64> = weights
                    .iter()
                    .map(|w| {
                        acc += w / total;
                        acc
                    })
                    .collect();
                for v in &values {
                    finite(*v, "choice value")?;
                }
                let mean = values.iter().zip(weights).map(|(v, w)| v * w / total).sum();
                let min = values.iter().copied().fold(f64::INFINITY, f64::min);
                Dist {
                    kind: Kind::Choice(values, cum),
                    mean,
                    min,
                }
            }
        };
        if d.min_value() < min_ok {
            return Err(format!(
                "can take values below {min_ok} (least possible value {})",
                d.min_value()
            ));
        }
        Ok(d)
    }

    /// A constant distribution.
    pub fn constant(x: f64) -> Self {
        Dist {
            kind: Kind::Const(x),
            mean: x,
            min: x,
        }
    }

    /// The least value this distribution can produce.
    pub fn min_value(&self) -> f64 {
        self.min
    }

    /// The mean (for a truncated normal: the untruncated mean).
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// Draws one value.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        match &self.kind {
            Kind::Const(x) => *x,
            Kind::Uniform(a, b) => {
                if a == b {
                    *a
                } else {
                    rng.random_range(*a..=*b)
                }
            }
            Kind::Normal(n, min) => {
                for _ in 0..64 {
                    let x = n.sample(rng);
                    if x >= *min {
                        return x;
                    }
                }
                *min
            }
            Kind::LogNormal(l) => l.sample(rng),
            Kind::Exp(e) => e.sample(rng),
            Kind::Choice(v, cum) => {
                let u: f64 = rng.random();
                let i = cum.partition_point(|c| *c <= u).min(v.len() - 1);
                v[i]
            }
        }
    }
}
