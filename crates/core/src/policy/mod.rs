//! Dispatch policies (docs/model.md §6): each picks one binding among the feasible candidates.
//! A policy is a value implementing [`Policy`]; adding one means adding its file and one line in
//! [`REGISTRY`]. Streams may be grouped into classes ([`StreamClasses`]) with one policy each
//! ([`PolicyTable`]).

mod balanced_allocation;
mod cheaper;
pub mod choices;
pub mod classes;
mod closest;
mod farthest;
pub mod headroom;
mod headroom_packing;
mod least_allocated;
mod least_impedance;
pub mod least_predicted;
mod load_balancing;
mod most_allocated;
mod random;
mod random_latency;
mod random_load;
mod rank;
pub mod table;
mod tetris;
mod worker_headroom;

use crate::feasibility::Candidate;
use crate::rng::SimRng;

pub use classes::StreamClasses;
pub use rank::{pick_max, pick_min, pick_min2, pick_weighted};
pub use table::PolicyTable;

/// A dispatch policy: a rule choosing among feasible bindings.
pub trait Policy: Send + Sync {
    /// Its registered name (kebab-case).
    fn name(&self) -> &'static str;

    /// The index in `candidates` (never empty) of the chosen binding. Randomised policies draw
    /// only from `rng`, the scheduler's own stream.
    fn choose(&self, candidates: &[Candidate], rng: &mut SimRng) -> usize;

    /// Whether it reads [`Candidate::cluster_shares`], which the binding step then fills (a
    /// sum over each candidate cluster's workers, paid only by the policies that need it).
    fn uses_cluster_shares(&self) -> bool {
        false
    }
}

/// Every policy, in the order reports list them.
pub static REGISTRY: &[&dyn Policy] = &[
    &closest::Closest,
    &load_balancing::LoadBalancing,
    &farthest::Farthest,
    &cheaper::Cheaper,
    &random_latency::RandomProportionalLatency,
    &random_load::RandomProportionalLoad,
    &least_impedance::LeastImpedance,
    &random::Random,
    &tetris::Tetris,
    // The heuristic suite (docs/model.md §6): rules a reviewer of learned dispatch would try.
    &least_allocated::LeastAllocated,
    &most_allocated::MostAllocated,
    &worker_headroom::WorkerHeadroom,
    &headroom::Headroom,
    &headroom_packing::HeadroomPacking,
    &choices::FAMILY[1],
    &least_predicted::LeastPredicted,
    &balanced_allocation::BalancedAllocation,
];

/// Every policy a name can give: the registry, then the members of the power-of-d family it
/// does not hold (`choices:1`, `choices:3` … `choices:16`), in that order. The gateway numbers
/// policies by their place here.
pub fn every() -> &'static [&'static dyn Policy] {
    static EVERY: std::sync::OnceLock<Vec<&'static dyn Policy>> = std::sync::OnceLock::new();
    EVERY.get_or_init(|| {
        let mut all = REGISTRY.to_vec();
        for p in &choices::FAMILY {
            if !all.iter().any(|q| q.name() == p.name()) {
                all.push(p);
            }
        }
        all
    })
}

/// The policy registered under `name`, or a member of the power-of-d family
/// (`choices:<d>`, [`choices::by_name`]).
pub fn by_name(name: &str) -> Option<&'static dyn Policy> {
    REGISTRY
        .iter()
        .copied()
        .find(|p| p.name() == name)
        .or_else(|| choices::by_name(name).map(|p| p as &dyn Policy))
}

/// The names of every registered policy.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|p| p.name()).collect()
}

/// Parses a comma-separated list of policy names; the error names the unknown one and lists
/// the known ones.
pub fn parse_list(list: &str) -> Result<Vec<&'static dyn Policy>, String> {
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|n| by_name(n).ok_or_else(|| unknown(n)))
        .collect()
}

/// The message for an unknown policy name: the closest known name of a policy or pull row when
/// it looks like a typo, and the known policies.
pub fn unknown(name: &str) -> String {
    let rows = names()
        .into_iter()
        .chain(crate::pull::BASELINES)
        .chain(["per-class", "tapfinger"]);
    format!(
        "unknown policy `{name}`{}; known policies: {}, and `choices:<d>` (d from 1 to {})",
        crate::config::did_you_mean(name.split(':').next().unwrap_or(name), rows),
        names().join(", "),
        choices::MAX_D
    )
}

#[cfg(test)]
mod tests;
