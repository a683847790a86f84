//! A scenario: the topology, profiles and workload a run simulates, loaded and cross-checked.

use crate::config::ConfigError;
use crate::feasibility::Fleet;
use crate::profiles::Profiles;
use crate::topology::Topology;
use crate::workload::{Lambda, Workload};
use std::path::Path;

/// Everything static about a run, shared (behind an `Arc`) by its forks.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Variant profiles.
    pub profiles: Profiles,
    /// Topology with resolved deployment.
    pub topology: Topology,
    /// Client workload.
    pub workload: Workload,
    /// Flattened per-worker facts.
    pub fleet: Fleet,
}

impl Scenario {
    /// Builds a scenario from its parts.
    pub fn new(profiles: Profiles, topology: Topology, workload: Workload) -> Self {
        let fleet = Fleet::new(&topology, &profiles);
        Self {
            profiles,
            topology,
            workload,
            fleet,
        }
    }

    /// Loads the three files: profiles first, since the others refer to them.
    pub fn load(topology: &Path, profiles: &Path, workload: &Path) -> Result<Self, ConfigError> {
        let p = Profiles::load(profiles)?;
        let t = Topology::load(topology, &p)?;
        let w = Workload::load(workload, &p)?;
        Ok(Self::new(p, t, w))
    }

    /// The same scenario with a constant client rate (`--lambda`).
    pub fn with_lambda(self, per_min: f64) -> Self {
        self.with_lambda_profile(Lambda::Constant(per_min))
    }

    /// The same scenario with client rate `lambda` over time.
    pub fn with_lambda_profile(mut self, lambda: Lambda) -> Self {
        self.workload.lambda = lambda;
        self
    }
}
