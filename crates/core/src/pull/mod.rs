//! Pull dispatch (docs/model.md §15): instead of a scheduler pushing each new stream to one
//! worker, the stream's open request is offered to every cluster in its feasible set, and at
//! each decision step every cluster's *agent* claims pending streams for its own workers. Several
//! agents may claim the same stream in one round; the conflict is resolved ([`bayes`]) and the
//! losers take a void action for that round. Rounds repeat until every agent is void
//! (TapFinger's Algorithm 1: several logical decisions per real interval).
//!
//! The step ([`step`]) is sans-IO: the simulator calls it with its pending streams and published
//! load view at each decision step; the gateway calls it with its own. A [`Puller`] says what
//! each agent claims: the hand-written baselines ([`GreedyPull`], [`RandomPull`],
//! [`PriorPull`]) live here, the learned agents elsewhere.

pub mod bayes;
mod greedy;

pub use bayes::{Resolution, prior_copies, resolve};
pub use greedy::{BASELINES, GreedyPull, PriorPull, RandomPull, baseline, prior_claim};

use crate::feasibility::{Candidate, Demand, Fleet, feasible};
use crate::load::LoadView;
use crate::rng::SimRng;
use crate::topology::Reach;

/// A stream waiting to be pulled.
#[derive(Debug, Clone, Copy)]
pub struct Pending<'a> {
    /// What it asks for.
    pub demand: Demand,
    /// Its scheduler's reach list (ordered by network distance).
    pub reach: &'a [Reach],
    /// Its scheduler.
    pub sched: u16,
    /// Decision steps it has already waited through unclaimed.
    pub waited: u32,
}

/// One pending stream as one agent sees it: the stream and its feasible candidates on the
/// agent's cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct Offer {
    /// Index of the stream among the step's pending streams.
    pub pending: u32,
    /// Indices into the stream's candidates ([`Round::cands`]) that lie on the agent's cluster.
    pub cands: Vec<u32>,
}

/// An agent that can act in a round: a cluster with at least one offer.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentView {
    /// Its cluster.
    pub cluster: u32,
    /// The open pending streams it may claim, in pending order.
    pub offers: Vec<Offer>,
}

/// What one agent claims in a round.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Claim {
    /// The pending stream (index among the step's pending streams).
    pub pending: u32,
    /// The binding: an index into that stream's candidates, on the agent's cluster.
    pub cand: u32,
    /// The probability Pr(j | n) with which the agent picked the stream (its pointer's; 1 for a
    /// deterministic rule). Conflicts are resolved with it ([`bayes`]).
    pub p: f64,
}

/// One round of a decision step, as every agent sees it.
#[derive(Debug)]
pub struct Round<'a> {
    /// The step's pending streams (taken ones included; they have no candidates left).
    pub pending: &'a [Pending<'a>],
    /// Per pending stream, its feasible candidates now (empty once taken).
    pub cands: &'a [Vec<Candidate>],
    /// The agents that can act, by cluster index.
    pub agents: &'a [AgentView],
    /// Static facts of every worker.
    pub fleet: &'a Fleet,
    /// The published view plus what this step has bound so far.
    pub view: &'a LoadView,
    /// Round number within the step, from 0.
    pub round: u32,
}

/// What decides the claims of every cluster's agent.
pub trait Puller {
    /// The name reports use.
    fn name(&self) -> String;

    /// How conflicting claims are resolved.
    fn resolution(&self) -> Resolution {
        Resolution::Bayes
    }

    /// One entry per agent of `round.agents`, in order: its claim, or `None` (void).
    fn claim(&mut self, round: &Round, rng: &mut SimRng, out: &mut Vec<Option<Claim>>);

    /// After resolution: whether each agent's claim won (false for void agents).
    fn resolved(&mut self, _round: &Round, _won: &[bool]) {}
}

/// A binding made by a step: pending stream index and candidate.
pub type Assignment = (u32, Candidate);

/// Counters of one step, for reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StepStats {
    /// Rounds played.
    pub rounds: u32,
    /// Claims made (non-void).
    pub claims: u32,
    /// Claims that lost a conflict.
    pub conflicts_lost: u32,
}

/// The load a stream brings to worker `c`: η ρ items (docs/model.md §5).
#[inline]
pub fn demand_load(d: &Demand, fleet: &Fleet, c: &Candidate) -> f64 {
    let w = &fleet.workers[c.worker as usize];
    d.frame_kb / w.ref_kb * d.rate_qps * f64::from(d.items)
}

/// One decision step: rounds of claims, conflict resolution and binding until every agent is
/// void. Returns the bindings made (each pending stream at most once, each feasible against
/// the view as updated by the step's earlier bindings) and the step's counters. `view` is the
/// published view; the step works on a copy to which each binding adds its load.
pub fn step(
    pending: &[Pending],
    fleet: &Fleet,
    view: &LoadView,
    puller: &mut dyn Puller,
    rng: &mut SimRng,
) -> (Vec<Assignment>, StepStats) {
    let mut work = view.clone();
    let mut taken = vec![false; pending.len()];
    let mut cands: Vec<Vec<Candidate>> = vec![Vec::new(); pending.len()];
    let mut out = Vec::new();
    let mut stats = StepStats::default();
    let mut claims = Vec::new();
    let resolution = puller.resolution();
    loop {
        for (j, p) in pending.iter().enumerate() {
            cands[j].clear();
            if !taken[j] {
                feasible(&p.demand, p.reach, fleet, &work, &mut cands[j]);
            }
        }
        let agents = agents_of(&cands);
        if agents.is_empty() {
            break;
        }
        let round = Round {
            pending,
            cands: &cands,
            agents: &agents,
            fleet,
            view: &work,
            round: stats.rounds,
        };
        claims.clear();
        puller.claim(&round, rng, &mut claims);
        assert_eq!(claims.len(), agents.len(), "one claim (or void) per agent");
        for (a, c) in agents.iter().zip(&claims) {
            if let Some(c) = c {
                let cand = cands[c.pending as usize].get(c.cand as usize);
                assert!(
                    cand.is_some_and(|x| x.cluster == a.cluster),
                    "a claim names a candidate of its own cluster"
                );
            }
        }
        let won = resolve(&round, &claims, resolution);
        puller.resolved(&round, &won);
        stats.rounds += 1;
        let made = claims.iter().filter(|c| c.is_some()).count() as u32;
        stats.claims += made;
        if made == 0 {
            break;
        }
        for (c, w) in claims.iter().zip(&won) {
            let Some(c) = c else { continue };
            if !*w {
                stats.conflicts_lost += 1;
                continue;
            }
            let j = c.pending as usize;
            let cand = cands[j][c.cand as usize];
            let seen = &mut work.workers[cand.worker as usize];
            seen.load_qps += demand_load(&pending[j].demand, fleet, &cand);
            seen.streams += 1;
            taken[j] = true;
            out.push((c.pending, cand));
        }
    }
    (out, stats)
}

/// The agents of a round: every cluster with a candidate for some open stream, by cluster
/// index, each with its offers in pending order.
pub fn agents_of(cands: &[Vec<Candidate>]) -> Vec<AgentView> {
    let mut agents: Vec<AgentView> = Vec::new();
    for (j, cs) in cands.iter().enumerate() {
        for (k, c) in cs.iter().enumerate() {
            let a = match agents.binary_search_by_key(&c.cluster, |a| a.cluster) {
                Ok(a) => a,
                Err(at) => {
                    agents.insert(
                        at,
                        AgentView {
                            cluster: c.cluster,
                            offers: Vec::new(),
                        },
                    );
                    at
                }
            };
            let offers = &mut agents[a].offers;
            match offers.last_mut() {
                Some(o) if o.pending == j as u32 => o.cands.push(k as u32),
                _ => offers.push(Offer {
                    pending: j as u32,
                    cands: vec![k as u32],
                }),
            }
        }
    }
    agents
}

#[cfg(test)]
mod tests;
