//! Capacity perturbations (`--capacity-scale`): the workers process faster or slower than their
//! profiles say, while schedulers keep binding by the profiles. Robustness runs use it (EdgeTuner
//! varies node capacity by ±25 % and ±50 %).

use continuum_core::rng::{Purpose, stream_rng};
use continuum_core::topology::Topology;
use rand::Rng;

/// How actual worker speed departs from the profiled one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CapacityScale {
    /// Every worker at this multiple of its profiled capacity (processing takes 1/scale as
    /// long); 1 is the profile itself.
    Uniform(f64),
    /// Every cluster at its own multiple, drawn uniformly from [1 − spread, 1 + spread] by
    /// `seed`.
    Perturb {
        /// Half-width of the range, in [0, 1).
        spread: f64,
        /// Seed of the draws.
        seed: u64,
    },
}

impl Default for CapacityScale {
    fn default() -> Self {
        Self::Uniform(1.0)
    }
}

impl CapacityScale {
    /// Parses `<scale>` (e.g. `0.5`) or `perturb:<spread>[:<seed>]` (e.g. `perturb:0.25:7`);
    /// `seed` defaults to `default_seed`. The error says what was expected.
    pub fn parse(s: &str, default_seed: u64) -> Result<Self, String> {
        let s = s.trim();
        let bad = |why: &str| format!("capacity scale `{s}`: {why}");
        if let Some(rest) = s.strip_prefix("perturb:") {
            let (spread, seed) = match rest.split_once(':') {
                Some((a, b)) => (
                    a,
                    b.trim()
                        .parse::<u64>()
                        .map_err(|_| bad("the seed must be a whole number"))?,
                ),
                None => (rest, default_seed),
            };
            let spread: f64 = spread
                .trim()
                .parse()
                .map_err(|_| bad("expected `perturb:<spread>[:<seed>]` with a number spread"))?;
            if !(0.0..1.0).contains(&spread) {
                return Err(bad("the spread must be in [0, 1)"));
            }
            return Ok(Self::Perturb { spread, seed });
        }
        let x: f64 = s
            .parse()
            .map_err(|_| bad("expected a number (e.g. 0.5) or `perturb:<spread>[:<seed>]`"))?;
        if !(x > 0.0 && x.is_finite()) {
            return Err(bad("the scale must be a finite number > 0"));
        }
        Ok(Self::Uniform(x))
    }

    /// The processing-time multiplier (1 / capacity multiple) of every worker of `topology`,
    /// indexed like its workers.
    pub fn slowdowns(&self, topology: &Topology) -> Vec<f64> {
        let per_cluster: Vec<f64> = match *self {
            Self::Uniform(x) => vec![x; topology.clusters.len()],
            Self::Perturb { spread, seed } => (0..topology.clusters.len())
                .map(|c| {
                    let mut rng = stream_rng(seed, Purpose::Capacity, c as u64, 0);
                    1.0 + spread * rng.random_range(-1.0..=1.0)
                })
                .collect(),
        };
        topology
            .workers
            .iter()
            .map(|w| 1.0 / per_cluster[w.cluster])
            .collect()
    }

    /// Its name as parsed (`0.5`, `perturb:0.25:7`).
    pub fn name(&self) -> String {
        match self {
            Self::Uniform(x) => format!("{x}"),
            Self::Perturb { spread, seed } => format!("perturb:{spread}:{seed}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_forms_and_refuses_the_rest() {
        assert_eq!(
            CapacityScale::parse("0.5", 1).unwrap(),
            CapacityScale::Uniform(0.5)
        );
        assert_eq!(
            CapacityScale::parse("perturb:0.25", 9).unwrap(),
            CapacityScale::Perturb {
                spread: 0.25,
                seed: 9
            }
        );
        assert_eq!(
            CapacityScale::parse("perturb:0.5:7", 9).unwrap().name(),
            "perturb:0.5:7"
        );
        for (s, want) in [
            ("0", "> 0"),
            ("fast", "expected a number"),
            ("perturb:1.5", "[0, 1)"),
            ("perturb:0.2:x", "whole number"),
        ] {
            let e = CapacityScale::parse(s, 1).unwrap_err();
            assert!(e.contains(want), "{s}: {e}");
        }
    }

    #[test]
    fn slowdowns_are_per_cluster_and_seeded() {
        let sc = continuum_core::fixtures::scenario(
            continuum_core::fixtures::TOPOLOGY,
            &continuum_core::fixtures::workload(10.0, "poisson", 100.0, 0.0),
        );
        let t = &sc.topology;
        let half = CapacityScale::Uniform(0.5).slowdowns(t);
        assert!(half.iter().all(|x| *x == 2.0));
        let p = CapacityScale::Perturb {
            spread: 0.5,
            seed: 3,
        };
        let a = p.slowdowns(t);
        assert_eq!(a, p.slowdowns(t));
        assert!(a.iter().all(|x| (1.0 / 1.5..=2.0).contains(x)), "{a:?}");
        // Workers of one cluster share a factor.
        for (i, w) in t.workers.iter().enumerate() {
            for (j, v) in t.workers.iter().enumerate() {
                if w.cluster == v.cluster {
                    assert_eq!(a[i], a[j]);
                }
            }
        }
        assert_ne!(
            a,
            CapacityScale::Perturb {
                spread: 0.5,
                seed: 4
            }
            .slowdowns(t)
        );
    }
}
