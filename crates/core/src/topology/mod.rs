//! The edge-cloud topology (docs/model.md §2): clusters in a tree of links, the workers deployed on
//! them, and for every scheduler the one-way delay d_n^s and jitter σ_n^s to every worker.

mod deploy;
mod paths;
mod schema;

use crate::config::{ConfigError, Source};
use crate::profiles::Profiles;
use std::collections::BTreeMap;
use std::path::Path;

pub use deploy::fill_to_saturation;
pub use deploy::{fits, take};

/// A compute site: an antenna, a central office, a regional DC, the cloud.
#[derive(Debug, Clone)]
pub struct Cluster {
    /// Unique id.
    pub id: String,
    /// Layer name (`access`, `central-office`, `regional-dc`, `cloud`, or user-named).
    pub layer: String,
    /// Parent cluster (one hop up), if any.
    pub parent: Option<usize>,
    /// One-way latency mean of the link to the parent, ms.
    pub link_mean_ms: f64,
    /// Standard deviation of that latency (jitter), ms.
    pub link_jitter_ms: f64,
    /// Resource capacity vector c_n (resource name → amount); empty means no compute.
    pub capacity: BTreeMap<String, f64>,
}

/// A deployed model variant on one cluster, with its replicas: the unit that serves queries.
#[derive(Debug, Clone)]
pub struct Worker {
    /// Cluster index.
    pub cluster: usize,
    /// Variant index in the profiles.
    pub variant: usize,
    /// Replicas of the variant (parallel servers sharing one FIFO queue).
    pub replicas: u32,
    /// Capacity of the worker: replicas × C_v, normalised qps.
    pub capacity_qps: f64,
}

/// How a scheduler reaches one worker.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reach {
    /// Worker index.
    pub worker: u32,
    /// Cluster index of the worker.
    pub cluster: u32,
    /// Variant index of the worker.
    pub variant: u32,
    /// One-way mean network delay d_n^s, ms.
    pub d_ms: f64,
    /// One-way jitter σ_n^s, ms.
    pub sigma_ms: f64,
}

impl Reach {
    /// The network distance used by policies: d_n^s + 2σ_n^s.
    #[inline]
    pub fn net_ms(&self) -> f64 {
        self.d_ms + 2.0 * self.sigma_ms
    }

    /// The order of a reach list: net distance, then cluster index, then variant index
    /// (feasibility relies on the distance order to skip the far tail).
    pub fn by_distance(a: &Self, b: &Self) -> std::cmp::Ordering {
        a.net_ms()
            .total_cmp(&b.net_ms())
            .then(a.cluster.cmp(&b.cluster))
            .then(a.variant.cmp(&b.variant))
    }
}

/// A scheduler at an access cluster, with every worker it can reach, nearest first.
#[derive(Debug, Clone)]
pub struct Scheduler {
    /// Cluster index where it sits.
    pub cluster: usize,
    /// Reachable workers ordered by net distance, then cluster index, then variant index.
    pub reach: Vec<Reach>,
}

/// A validated topology with its deployment resolved against a profile.
#[derive(Debug, Clone)]
pub struct Topology {
    /// Name (from the file, or its stem).
    pub name: String,
    /// Clusters.
    pub clusters: Vec<Cluster>,
    /// Workers, ordered by cluster then variant.
    pub workers: Vec<Worker>,
    /// Schedulers.
    pub schedulers: Vec<Scheduler>,
}

impl Topology {
    /// Loads a topology file and resolves its deployment against `profiles`.
    pub fn load(path: &Path, profiles: &Profiles) -> Result<Self, ConfigError> {
        Self::from_source(&Source::read(path)?, profiles)
    }

    /// Parses and validates topology text.
    pub fn from_source(src: &Source, profiles: &Profiles) -> Result<Self, ConfigError> {
        schema::build(src, profiles, false)
    }

    /// Loads a topology file for an allocator: its workers are every (cluster, variant) pair
    /// where one replica of the variant fits the cluster, with the file's deployment as their
    /// replicas (0 for the pairs it does not deploy). Schedulers reach them all; a worker with
    /// no replica has no capacity, so bindings never pick it and runs with the file's
    /// deployment give the same results as [`Self::load`].
    pub fn load_candidates(path: &Path, profiles: &Profiles) -> Result<Self, ConfigError> {
        Self::candidates_from_source(&Source::read(path)?, profiles)
    }

    /// [`Self::load_candidates`] from topology text.
    pub fn candidates_from_source(src: &Source, profiles: &Profiles) -> Result<Self, ConfigError> {
        schema::build(src, profiles, true)
    }

    /// Index of the cluster with this id.
    pub fn cluster_index(&self, id: &str) -> Option<usize> {
        self.clusters.iter().position(|c| c.id == id)
    }

    /// Total of each resource over all clusters.
    pub fn total_capacity(&self) -> BTreeMap<String, f64> {
        let mut t = BTreeMap::new();
        for c in &self.clusters {
            for (k, v) in &c.capacity {
                *t.entry(k.clone()).or_insert(0.0) += v;
            }
        }
        t
    }

    /// Total serving capacity in normalised qps (sum of worker capacities).
    pub fn total_capacity_qps(&self) -> f64 {
        self.workers.iter().map(|w| w.capacity_qps).sum()
    }
}

#[cfg(test)]
mod tests;
