//! Placement configurations (docs/jobs.md, "Placement"): a value with a stable name that says
//! how waiting tasks get nodes. kube-scheduler's configurations place *each task* on its own, in
//! queue order; Volcano's visit *jobs* in their job order and place each job's ready tasks
//! together, all or none under gang. Both filter then score (`filter.rs`, [`plugins`]); the
//! job-level policies are in [`volcano`]. The named configurations are the comparison sets of
//! EdgeTuner's evaluation ("Considered Scheduler Configurations"); [`queue`] adds DeepRM's
//! visible slots as a task-level queue order (`DEEPRM_TETRIS@M`, `DEEPRM_SJF@M`).

mod filter;
pub mod plugins;
pub mod queue;
pub mod volcano;

pub(crate) use filter::Slot;
pub use plugins::Plugin;
pub use queue::{QueueOrder, VisibleScore};
pub use volcano::JobOrder;

use crate::error::JobsError;
use crate::resources::Res;
use continuum_core::config::did_you_mean;

/// Whether a configuration places tasks one by one or jobs as units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// kube-scheduler: every waiting task on its own, in queue order (first queued first).
    Task,
    /// Volcano: jobs in their job order, each job's ready tasks together.
    Job,
}

/// A placement configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    name: String,
    plugins: Vec<(Plugin, f64)>,
    level: Level,
    order: JobOrder,
    gang: bool,
    resource_weights: Res,
    queue: QueueOrder,
}

/// The resource weights of the plugins by default: kube-scheduler's NodeResourcesFit and
/// BalancedAllocation score cpu and memory with weight 1 (GPUs only when configured), as
/// Volcano's binpack does (`binpack.cpu`, `binpack.memory`).
pub const DEFAULT_RESOURCE_WEIGHTS: Res = Res::new(1.0, 0.0, 1.0);

/// kube-scheduler configurations: one scoring plugin each, weight 1.
pub const KUBERNETES: [&str; 6] = ["LRP", "MRP", "BRA", "EP", "RLP", "RTCR"];

/// Volcano configurations, the 13 of EdgeTuner's comparison for AI workloads.
pub const VOLCANO: [&str; 13] = [
    "GANG_LRP",
    "GANG_MRP",
    "GANG_BRA",
    "DRF_LRP",
    "DRF_MRP",
    "DRF_BRA",
    "GANG_DRF_BINPACK",
    "GANG_DRF_LRP",
    "GANG_DRF_MRP",
    "GANG_DRF_BRA",
    "SLA_LRP",
    "SLA_MRP",
    "SLA_BRA",
];

/// EdgeTuner's other kube-scheduler algorithms, which score by notions the model lacks, with why
/// each is left out (docs/jobs.md, "Not modelled").
pub const NOT_MODELLED: [(&str, &str); 6] = [
    (
        "TTP",
        "TaintToleration scores by taints and tolerations; nodes here have no taints",
    ),
    (
        "NAP",
        "NodeAffinity scores by node labels a pod asks for; nodes here have no labels",
    ),
    (
        "ILP",
        "ImageLocality scores by container images already on a node; tasks here have no images",
    ),
    (
        "NPAPP",
        "NodePreferAvoidPods scores by a node annotation; nodes here have none",
    ),
    (
        "NLP",
        "NodeLabel scores by node labels; nodes here have no labels",
    ),
    (
        "IPAP",
        "InterPodAffinity scores by labels of pods already on a node; tasks here have none",
    ),
];

/// RequestedToCapacityRatio's shape in the named `RTCR`: the bin-packing example of the
/// Kubernetes documentation ("Resource Bin Packing"), utilisation 0 → score 0, 100 → 10.
pub const RTCR_SHAPE: [(f64, f64); 2] = [(0.0, 0.0), (100.0, 10.0)];

impl Placement {
    /// A configuration of `plugins` (each with its weight > 0) at `level`; `order` and `gang`
    /// only mean something at [`Level::Job`]. Refused: no plugin, a weight ≤ 0, a
    /// RequestedToCapacityRatio shape that is empty, not increasing in utilisation or outside
    /// utilisation [0, 100] × score [0, 10], or job-level policies at task level.
    pub fn new(
        name: &str,
        plugins: Vec<(Plugin, f64)>,
        level: Level,
        order: JobOrder,
        gang: bool,
    ) -> Result<Self, JobsError> {
        let bad = |m: String| Err(JobsError::Name(format!("placement `{name}`: {m}")));
        if plugins.is_empty() {
            return bad("needs at least one scoring plugin".into());
        }
        for (p, w) in &plugins {
            if !(w.is_finite() && *w > 0.0) {
                return bad(format!("{}: weight must be > 0, got {w}", p.name()));
            }
            if let Plugin::RequestedToCapacityRatio(shape) = p {
                let inside = shape
                    .iter()
                    .all(|(u, s)| (0.0..=100.0).contains(u) && (0.0..=10.0).contains(s));
                if shape.is_empty() || !inside || shape.windows(2).any(|w| w[0].0 >= w[1].0) {
                    return bad("RequestedToCapacityRatio: the shape needs points of increasing utilisation in [0, 100], scores in [0, 10]".into());
                }
            }
        }
        if level == Level::Task && (gang || order != JobOrder::Fifo) {
            return bad("gang and job orders are Volcano's: they need job level".into());
        }
        if let JobOrder::Sla { waiting_s: Some(w) } = order {
            if !(w.is_finite() && w >= 0.0) {
                return bad(format!("SLA waiting time must be >= 0, got {w}"));
            }
        }
        Ok(Self {
            name: name.to_string(),
            plugins,
            level,
            order,
            gang,
            resource_weights: DEFAULT_RESOURCE_WEIGHTS,
            queue: QueueOrder::Fifo,
        })
    }

    /// A named configuration ([`KUBERNETES`], [`VOLCANO`], DeepRM's `DEEPRM_TETRIS@M` and
    /// `DEEPRM_SJF@M` of [`queue`]; any case). A name of [`NOT_MODELLED`] is refused with its
    /// reason; another, with the closest known name.
    pub fn by_name(name: &str) -> Result<Self, JobsError> {
        let upper = name.trim().to_ascii_uppercase();
        if let Some(deeprm) = Self::deeprm_by_name(&upper) {
            return deeprm;
        }
        if let Some((_, why)) = NOT_MODELLED.iter().find(|(n, _)| *n == upper) {
            return Err(JobsError::Name(format!(
                "placement `{name}` is not modelled: {why} (docs/jobs.md, \"Not modelled\")"
            )));
        }
        let known = || KUBERNETES.iter().chain(VOLCANO.iter()).copied();
        let Some(canonical) = known().find(|n| *n == upper) else {
            return Err(JobsError::Name(format!(
                "unknown placement `{name}`{}; expected one of {}, DEEPRM_TETRIS@M, DEEPRM_SJF@M",
                did_you_mean(&upper, known()),
                known().collect::<Vec<_>>().join(", ")
            )));
        };
        let mut parts: Vec<&str> = canonical.split('_').collect();
        let plugin = match parts.pop() {
            Some("LRP") => Plugin::LeastAllocated,
            Some("MRP") => Plugin::MostAllocated,
            Some("BRA") => Plugin::BalancedAllocation,
            Some("EP") => Plugin::EqualPriority,
            Some("RLP") => Plugin::ResourceLimits,
            Some("RTCR") => Plugin::RequestedToCapacityRatio(RTCR_SHAPE.to_vec()),
            _ => Plugin::Binpack,
        };
        let level = if KUBERNETES.contains(&canonical) {
            Level::Task
        } else {
            Level::Job
        };
        let order = if parts.contains(&"DRF") {
            JobOrder::Drf
        } else if parts.contains(&"SLA") {
            JobOrder::Sla { waiting_s: None }
        } else {
            JobOrder::Fifo
        };
        Self::new(
            canonical,
            vec![(plugin, 1.0)],
            level,
            order,
            parts.contains(&"GANG"),
        )
    }

    /// Every named configuration of EdgeTuner's comparison, kube-scheduler's first (DeepRM's,
    /// which take their M, are not in it).
    pub fn all() -> Vec<Self> {
        KUBERNETES
            .iter()
            .chain(VOLCANO.iter())
            .map(|n| Self::by_name(n).expect("registered names build"))
            .collect()
    }

    /// The same configuration with other per-resource weights for its plugins (each ≥ 0,
    /// finite; a weight of 0 leaves the resource out of the scores).
    pub fn with_resource_weights(mut self, weights: Res) -> Result<Self, JobsError> {
        if weights.arr().iter().any(|w| !(w.is_finite() && *w >= 0.0)) {
            return Err(JobsError::Name(format!(
                "placement `{}`: resource weights must be finite and >= 0",
                self.name
            )));
        }
        self.resource_weights = weights;
        Ok(self)
    }

    /// Its stable name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its scoring plugins and their weights.
    pub fn plugins(&self) -> &[(Plugin, f64)] {
        &self.plugins
    }

    /// Task or job level.
    pub fn level(&self) -> Level {
        self.level
    }

    /// The job order (job level only).
    pub fn order(&self) -> JobOrder {
        self.order
    }

    /// Whether a job's ready tasks are placed all together or not at all.
    pub fn gang(&self) -> bool {
        self.gang
    }

    /// The per-resource weights of its plugins.
    pub fn resource_weights(&self) -> Res {
        self.resource_weights
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
