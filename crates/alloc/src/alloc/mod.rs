//! Online allocation of multi-resource capacity to demand: OGASched (H. Zhao, S. Deng et al.,
//! "Scheduling Multi-Server Jobs with Sublinear Regrets via Online Learning", arXiv 2305.06572)
//! and the four heuristics it is compared with. Sans-IO: no clock, no file, no thread.
//!
//! # Model ([`Problem`])
//!
//! A bipartite graph: ports (job types) l ∈ L on one side, computing instances r ∈ R on the
//! other, resource types k ∈ K. A job of type l requests a_l^k of resource k; instance r has
//! c_r^k; a link (l, r) says that r can serve l. In slot t the demand is x_l(t) ≥ 0 (in the
//! paper 1 if a job of type l arrived, else 0) and an allocation y(t) gives y_(l,r)^k ≥ 0 of
//! resource k on instance r to port l, within the polytope
//!
//! Y = { 0 ≤ y_(l,r)^k ≤ a_l^k,  Σ_{l ∈ L_r} y_(l,r)^k ≤ c_r^k }.
//!
//! (The cap a_l^k applies per link: a multi-server job may take up to its request from each
//! instance it runs on.)
//!
//! # Reward ([`reward`])
//!
//! q(x, y) = Σ_l x_l · ( Σ_{r ∈ R_l} Σ_k f_r^k(y_(l,r)^k) − max_k β_k Σ_{r ∈ R_l} y_(l,r)^k ):
//! the computation gain of each resource on each instance (a concave [`Utility`] with
//! coefficient α_r^k) minus the dominant communication overhead (β_k per unit of resource k the
//! job holds in total, the largest over k). The cumulative reward Σ_t q(x(t), y(t)) is what
//! OGASched maximises and every allocator is scored on.
//!
//! # Allocators ([`Allocator`])
//!
//! Every slot an allocator maps (problem, demand) to an allocation in Y:
//! `oga` (the paper's Algorithm 1: the allocation is played before the slot's arrivals are
//! seen) and `oga-lookahead` (the authors' prototype's order: the step sees them first) —
//! [`Oga`] with its two [`Timing`]s: a projected gradient step per slot, [`project`]; learning
//! rate [`StepSize`] —, and the four baselines as OGASched's §4 defines them, each in its file
//! with its exact rule: `drf` (a job's total request, ports by dominant share), `fairness`
//! (request-proportional shares among the ports with a job), `binpacking` / `spreading`
//! (each job whole on the one instance kube-scheduler's `MostAllocated` / `LeastAllocated`
//! scoring favours). [`ABLATIONS`] keeps this reproduction's previous readings (channels up to
//! the request on every instance; shares over every linked port). [`best_fixed`] computes the
//! best fixed allocation in hindsight, the comparator of the regret.
//!
//! Where the paper is not explicit we follow the authors' public prototype and say so in the
//! item's documentation.

mod binpacking;
mod drf;
mod fairness;
mod hindsight;
mod oga;
mod problem;
mod project;
mod reward;
mod spreading;
mod step;
mod utility;

pub use binpacking::BinPacking;
pub use drf::{Drf, dominant_share};
pub use fairness::{Fairness, ShareOver};
pub use hindsight::{BestFixed, best_fixed};
pub use oga::{Oga, Timing};
pub use problem::{Allocation, Link, Problem, ProblemError, ProblemSpec};
pub use project::{Projector, project_block};
pub use reward::{RewardScratch, gradient, reward};
pub use spreading::Spreading;
pub use step::StepSize;
pub use utility::{Gain, Utility};

/// An allocation policy: each slot, the demand of every port → an allocation in Y.
///
/// `demand` has one entry per port (x_l ≥ 0); `out` is sized for `problem`
/// ([`Allocation::zeros`]) and overwritten. Allocators may keep state between slots (OGA keeps
/// its iterate); one value serves one sequence of slots.
pub trait Allocator: Send {
    /// Its registered name.
    fn name(&self) -> &'static str;

    /// Allocates for one slot.
    fn allocate(&mut self, problem: &Problem, demand: &[f64], out: &mut Allocation);
}

/// The registered allocator names, in the order reports list them.
pub const NAMES: [&str; 6] = [
    "oga",
    "oga-lookahead",
    "drf",
    "fairness",
    "binpacking",
    "spreading",
];

/// This reproduction's previous readings of the four baselines, kept as named ablations (not
/// in [`NAMES`]): DRF, BINPACKING and SPREADING taking up to the request on every channel
/// (the three then allocate alike), FAIRNESS sharing among every linked port.
pub const ABLATIONS: [&str; 4] = [
    "drf-per-channel",
    "fairness-linked",
    "binpacking-per-channel",
    "spreading-per-channel",
];

/// Names of earlier versions, accepted with a warning: (old, current).
pub const RENAMED: [(&str, &str); 3] = [
    ("oga-oblivious", "oga"),
    ("fairness-present", "fairness"),
    ("drf-port-total", "drf"),
];

/// A fresh allocator called `name` (one of [`NAMES`] or [`ABLATIONS`]); OGA's learning rate is
/// `step`. The error lists the known names.
pub fn by_name(name: &str, step: StepSize) -> Result<Box<dyn Allocator>, String> {
    if let Some(&(old, new)) = RENAMED.iter().find(|(old, _)| *old == name) {
        tracing::warn!("allocator `{old}` is now called `{new}`");
        return by_name(new, step);
    }
    Ok(match name {
        "oga" => Box::new(Oga::new(step, Timing::Oblivious)),
        "oga-lookahead" => Box::new(Oga::new(step, Timing::Observed)),
        "drf" => Box::new(Drf::port_total()),
        "drf-per-channel" => Box::new(Drf::per_channel()),
        "fairness" => Box::new(Fairness::present()),
        "fairness-linked" => Box::new(Fairness::linked()),
        "binpacking" => Box::new(BinPacking::scored()),
        "binpacking-per-channel" => Box::new(BinPacking::per_channel()),
        "spreading" => Box::new(Spreading::scored()),
        "spreading-per-channel" => Box::new(Spreading::per_channel()),
        _ => {
            return Err(format!(
                "unknown allocator `{name}`; known allocators: {} (ablations: {})",
                NAMES.join(", "),
                ABLATIONS.join(", ")
            ));
        }
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Two ports, two instances, one resource (β 0.3, linear gains): port 0 linked to instance
    /// 0, port 1 to both. Links: 0 = (port 0, inst 0), 1 = (port 1, inst 0), 2 = (port 1, inst 1).
    pub(crate) fn two_by_two(requests: &[f64; 2], capacities: &[f64; 2]) -> Problem {
        let g = Gain::new(Utility::Linear, 1.0);
        Problem::new(&ProblemSpec {
            requests: requests.iter().map(|&a| vec![a]).collect(),
            capacities: capacities.iter().map(|&c| vec![c]).collect(),
            links: vec![(0, 0), (1, 0), (1, 1)],
            gains: vec![vec![g]; 2],
            betas: vec![0.3],
        })
        .unwrap()
    }

    #[test]
    fn registry_builds_every_name_and_refuses_others() {
        for n in NAMES.iter().chain(&ABLATIONS) {
            assert_eq!(by_name(n, StepSize::PAPER).unwrap().name(), *n);
        }
        for (old, new) in RENAMED {
            assert_eq!(by_name(old, StepSize::PAPER).unwrap().name(), new);
        }
        let e = by_name("greedy", StepSize::PAPER).err().unwrap();
        assert!(e.contains("greedy") && e.contains("binpacking"), "{e}");
    }

    #[test]
    fn every_allocator_stays_in_the_polytope_on_random_problems() {
        use continuum_core::rng::{Purpose, stream_rng};
        use rand::Rng;
        let mut rng = stream_rng(5, Purpose::Other, 9, 0);
        for case in 0..30 {
            let (nl, nr, nk) = (4, 5, 3);
            let mut links = Vec::new();
            for l in 0..nl {
                for r in 0..nr {
                    if rng.random_bool(0.5) {
                        links.push((l, r));
                    }
                }
            }
            let u = Utility::ALL[case % 4];
            let p = Problem::new(&ProblemSpec {
                requests: (0..nl)
                    .map(|_| (0..nk).map(|_| rng.random_range(0.0..20.0)).collect())
                    .collect(),
                capacities: (0..nr)
                    .map(|_| (0..nk).map(|_| rng.random_range(0.0..10.0)).collect())
                    .collect(),
                links,
                gains: (0..nr)
                    .map(|_| {
                        (0..nk)
                            .map(|_| Gain::new(u, rng.random_range(1.0..1.5)))
                            .collect()
                    })
                    .collect(),
                betas: (0..nk).map(|_| rng.random_range(0.3..0.5)).collect(),
            })
            .unwrap();
            for &name in NAMES.iter().chain(&ABLATIONS) {
                let mut a = by_name(name, StepSize::PAPER).unwrap();
                let mut y = Allocation::zeros(&p);
                for _ in 0..20 {
                    let x: Vec<f64> = (0..nl)
                        .map(|_| if rng.random_bool(0.7) { 1.0 } else { 0.0 })
                        .collect();
                    a.allocate(&p, &x, &mut y);
                    let mask = (name != "oga").then_some(x.as_slice());
                    if let Err(e) = p.check_feasible(&y, mask, 1e-9) {
                        panic!("{name}, case {case}: {e}");
                    }
                }
            }
        }
    }
}
