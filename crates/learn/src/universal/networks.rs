//! The training networks of the topology-free meta-policy: generated topologies drawn from
//! ranges wide enough to hold the shipped, imported and generated families (sizes, fan-outs,
//! link delays and their spread, compute at the edge against the core), and the settings of a
//! training run. Every network is drawn from a seed; the evaluation networks are files, never
//! drawn.

use anyhow::{Context, Result};
use continuum_core::config::Source;
use continuum_core::profiles::Profiles;
use continuum_core::rng::SimRng;
use continuum_core::topology::Topology;
use continuum_topogen::generate::{GenerateOptions, generate};
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// What a topology-free training run draws and spends (`config/universal-networks.yaml`; every
/// field has a default).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UniversalSettings {
    /// Training networks (one generated topology each), per round.
    pub networks: usize,
    /// Collection rounds: the first behaves by the default rule with random deviations, each
    /// later one by the network fitted so far (with the same share of random deviations), and
    /// the network is refitted on everything collected.
    pub rounds: usize,
    /// Share of (scheduler, class) decisions drawn at random during collection.
    pub explore: f64,
    /// Passes over the collected samples per fit.
    pub epochs: usize,
    /// Validation networks (drawn apart from the training ones) on which the default rule and
    /// the margin are chosen.
    pub validation_networks: usize,
    /// Constant λ of the validation episodes, clients/min/antenna.
    pub validation_lambdas: Vec<f64>,
    /// Candidate margins (pp of success ratio) the network's choice must beat the default by.
    pub margins: Vec<f64>,
    /// Antennas per network (inclusive range).
    pub antennas: [usize; 2],
    /// Antennas per central office.
    pub antennas_per_co: [usize; 2],
    /// Central offices per regional DC.
    pub cos_per_rdc: [usize; 2],
    /// Multiplier of the generator's link delays (1.5, 6, 20 ms).
    pub link_scale: [f64; 2],
    /// Spread of each link around its layer's mean (a fraction).
    pub link_spread: [f64; 2],
    /// Multiplier of every site's compute.
    pub compute_scale: [f64; 2],
    /// Further multiplier of the antennas' and central offices' compute (below 1: the compute
    /// sits in the regional DCs and the cloud, as in `dc-cloud`).
    pub edge_compute: [f64; 2],
    /// Share of antennas with a small GPU.
    pub antenna_gpu_share: [f64; 2],
    /// Share of networks whose antennas and central offices have no compute at all
    /// (`dc-cloud`'s shape).
    pub bare_edge_share: f64,
    /// Workload files, one drawn per network (λ and the class mix are drawn per episode).
    pub workloads: Vec<PathBuf>,
}

impl Default for UniversalSettings {
    /// Assumption: ranges chosen to cover the repository's families — 12 (gen-metro) to 40
    /// (germany50's 50 nodes as antennas would be larger; the generator's fan-outs cover its
    /// shape) antennas, links from a metro (× 0.4) to a continental (× 3) scale, and compute
    /// from a bare edge (dc-cloud) to the full one (full-edge).
    fn default() -> Self {
        Self {
            networks: 32,
            rounds: 2,
            explore: 0.3,
            epochs: 20,
            validation_networks: 4,
            validation_lambdas: vec![20.0, 60.0, 100.0],
            margins: vec![0.0, 0.25, 0.5, 1.0],
            antennas: [4, 40],
            antennas_per_co: [2, 8],
            cos_per_rdc: [1, 4],
            link_scale: [0.4, 3.0],
            link_spread: [0.0, 0.6],
            compute_scale: [0.5, 2.0],
            edge_compute: [0.1, 1.0],
            antenna_gpu_share: [0.0, 1.0],
            bare_edge_share: 0.25,
            workloads: vec![PathBuf::from("workloads/default.yaml")],
        }
    }
}

impl UniversalSettings {
    /// Checks the ranges; the error names the field.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        let ordered = |r: [f64; 2]| r[0].is_finite() && r[1].is_finite() && r[0] <= r[1];
        let counts = [
            ("antennas", self.antennas),
            ("antennas_per_co", self.antennas_per_co),
            ("cos_per_rdc", self.cos_per_rdc),
        ];
        for (f, r) in counts {
            if r[0] == 0 || r[0] > r[1] {
                return Err((f, format!("expected 1 <= low <= high, got {r:?}")));
            }
        }
        let scales = [
            ("link_scale", self.link_scale),
            ("compute_scale", self.compute_scale),
            ("edge_compute", self.edge_compute),
        ];
        for (f, r) in scales {
            if !ordered(r) || r[0] <= 0.0 {
                return Err((f, format!("expected 0 < low <= high, got {r:?}")));
            }
        }
        if !ordered(self.link_spread) || self.link_spread[0] < 0.0 || self.link_spread[1] >= 1.0 {
            return Err(("link_spread", "expected 0 <= low <= high < 1".into()));
        }
        let share = self.antenna_gpu_share;
        if !ordered(share) || share[0] < 0.0 || share[1] > 1.0 {
            return Err(("antenna_gpu_share", "expected 0 <= low <= high <= 1".into()));
        }
        if !(0.0..=1.0).contains(&self.bare_edge_share) {
            return Err(("bare_edge_share", "expected a share in [0, 1]".into()));
        }
        if !(0.0..=1.0).contains(&self.explore) {
            return Err(("explore", "expected a share in [0, 1]".into()));
        }
        if self.networks == 0 || self.rounds == 0 || self.epochs == 0 {
            return Err((
                "networks",
                "networks, rounds and epochs must be >= 1".into(),
            ));
        }
        if self.workloads.is_empty() {
            return Err(("workloads", "expected at least one workload file".into()));
        }
        if self
            .validation_lambdas
            .iter()
            .any(|l| !(l.is_finite() && *l > 0.0))
        {
            return Err(("validation_lambdas", "expected rates > 0".into()));
        }
        if self.margins.iter().any(|m| !(m.is_finite() && *m >= 0.0)) {
            return Err(("margins", "expected numbers >= 0".into()));
        }
        Ok(())
    }

    /// The generator options of a network drawn with `rng`.
    pub fn draw(&self, rng: &mut SimRng, name: String) -> GenerateOptions {
        let d = GenerateOptions::default();
        let u = |rng: &mut SimRng, r: [f64; 2]| {
            if r[1] > r[0] {
                rng.random_range(r[0]..=r[1])
            } else {
                r[0]
            }
        };
        let link = u(rng, self.link_scale);
        let compute = u(rng, self.compute_scale);
        let edge = u(rng, self.edge_compute);
        let mut o = GenerateOptions {
            name,
            antennas: rng.random_range(self.antennas[0]..=self.antennas[1]),
            antennas_per_co: rng.random_range(self.antennas_per_co[0]..=self.antennas_per_co[1]),
            cos_per_rdc: rng.random_range(self.cos_per_rdc[0]..=self.cos_per_rdc[1]),
            link_ms: d.link_ms.map(|x| x * link),
            link_spread: u(rng, self.link_spread),
            antenna_gpu_share: u(rng, self.antenna_gpu_share) * edge,
            bare_edge: rng.random_bool(self.bare_edge_share),
            seed: rng.random(),
            ..d
        };
        // The compute the edge lacks sits in the regional DCs (an operator consolidates rather
        // than drops it, as topologies/dc-cloud.yaml does): the network's total stays that of
        // `compute` at every site.
        let keep = if o.bare_edge { 0.0 } else { edge };
        let (cos, rdcs) = o.counts();
        let (a, c, r) = (o.antennas as f64, cos as f64, rdcs as f64);
        // Provisioned per antenna as the generator's defaults are (full-edge's: 4 antennas per
        // central office, 2 offices per regional DC), so a wider fan-out does not starve its
        // sites; the cloud is one region whatever the size, as in every shipped topology.
        let per_co = o.antennas_per_co as f64 / d.antennas_per_co as f64;
        let per_rdc = per_co * o.cos_per_rdc as f64 / d.cos_per_rdc as f64;
        let cpu = [
            d.cpu[0] * compute,
            d.cpu[1] * compute * per_co,
            d.cpu[2] * compute * per_rdc,
            d.cpu[3] * compute,
        ];
        let gpu = [
            f64::from(d.gpu[0]) * compute * per_co,
            f64::from(d.gpu[1]) * compute * per_rdc,
            f64::from(d.gpu[2]) * compute,
        ];
        let moved_cpu = (1.0 - keep) * (a * cpu[0] + c * cpu[1]) / r;
        let moved_gpu = (1.0 - keep) * c * gpu[0] / r;
        let cores = |x: f64| x.round().max(4.0);
        o.cpu = [
            cores(cpu[0] * keep),
            cores(cpu[1] * keep),
            cores(cpu[2] + moved_cpu),
            cores(cpu[3]),
        ];
        let gpus = |x: f64| (x.round() as u32).max(1);
        o.gpu = [gpus(gpu[0] * keep), gpus(gpu[1] + moved_gpu), gpus(gpu[2])];
        o
    }
}

/// The topology of generator options `o`.
pub fn topology(o: &GenerateOptions, profiles: &Profiles) -> Result<Topology> {
    let text = generate(o);
    Topology::from_source(&Source::inline(&o.name, &text), profiles)
        .with_context(|| format!("generated training topology {}", o.name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use continuum_core::rng::{Purpose, stream_rng};

    #[test]
    fn draws_stay_in_their_ranges_and_repeat_with_the_seed() {
        let s = UniversalSettings::default();
        assert!(s.validate().is_ok());
        let draw = |seed| {
            let mut rng = stream_rng(seed, Purpose::Other, 1, 0);
            (0..20)
                .map(|i| s.draw(&mut rng, format!("n{i}")))
                .collect::<Vec<_>>()
        };
        let a = draw(7);
        assert_eq!(a, draw(7));
        assert_ne!(a, draw(8));
        for o in &a {
            assert!(o.validate().is_ok(), "{o:?}");
            assert!((4..=40).contains(&o.antennas));
            assert!(o.cpu[0] <= o.cpu[2] * 2.0);
        }
        assert!(a.iter().any(|o| o.bare_edge) && a.iter().any(|o| !o.bare_edge));
        let bad = UniversalSettings {
            link_spread: [0.0, 1.0],
            ..UniversalSettings::default()
        };
        assert_eq!(bad.validate().unwrap_err().0, "link_spread");
    }
}
