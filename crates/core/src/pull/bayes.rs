//! Conflict resolution between agents that claim the same stream in one round (TapFinger,
//! eq. 11): Pr(n | j) = Pr(j | n) · Pr(n) / Σ_n' Pr(j | n') · Pr(n'), where Pr(j | n) is the
//! probability with which agent n picked stream j and Pr(n) is proportional to how many copies
//! of j's demand cluster n's free capacity could hold. The agent with the largest posterior
//! binds j; the others are void for the round.

use super::{Claim, Round};
use crate::feasibility::Candidate;

/// How a round's conflicting claims are settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// Eq. 11 with Pr(n) from free capacity (the default).
    Bayes,
    /// Eq. 11 with a uniform Pr(n): the most confident pick wins (an ablation).
    UniformPrior,
    /// The claim of the lowest-indexed cluster wins (an ablation: no resolution at all).
    FirstClaim,
    /// The claim whose binding would answer earliest (smallest e2e) wins (the greedy baseline).
    EarliestFinish,
}

/// Copies of stream `j`'s demand that cluster `cluster`'s free capacity could hold: the sum,
/// over its feasible workers for `j`, of ⌊(C_w − L_w) / (η ρ items)⌋ (at least 1 for a feasible
/// candidate) — the cluster score of the `headroom` push rule ([`Candidate::copies`]).
pub fn prior_copies(round: &Round, j: usize, cluster: u32) -> f64 {
    round.cands[j]
        .iter()
        .filter(|c| c.cluster == cluster)
        .map(Candidate::copies)
        .sum()
}

/// Which claims win: per claimed stream, the claimant with the largest posterior (ties to the
/// lowest cluster index, so the result never depends on order). `claims[a]` is agent
/// `round.agents[a]`'s claim.
pub fn resolve(round: &Round, claims: &[Option<Claim>], how: Resolution) -> Vec<bool> {
    let mut won = vec![false; claims.len()];
    // Claims grouped by stream: every claimant of stream j.
    let mut by_stream: Vec<(u32, usize)> = claims
        .iter()
        .enumerate()
        .filter_map(|(a, c)| c.map(|c| (c.pending, a)))
        .collect();
    by_stream.sort_unstable();
    let mut i = 0;
    while i < by_stream.len() {
        let j = by_stream[i].0;
        let end = i + by_stream[i..].iter().take_while(|x| x.0 == j).count();
        let group = &by_stream[i..end];
        let winner = if group.len() == 1 {
            group[0].1
        } else {
            let score = |a: usize| -> f64 {
                let c = claims[a].expect("grouped claims are claims");
                let n = round.agents[a].cluster;
                match how {
                    Resolution::Bayes => c.p * prior_copies(round, j as usize, n),
                    Resolution::UniformPrior => c.p,
                    Resolution::FirstClaim => -f64::from(n),
                    Resolution::EarliestFinish => -round.cands[j as usize][c.cand as usize].e2e_ms,
                }
            };
            // Agents are in cluster order, so the first maximum is the lowest cluster index.
            let mut best = group[0].1;
            let mut best_score = score(best);
            for &(_, a) in &group[1..] {
                let s = score(a);
                if s > best_score {
                    best = a;
                    best_score = s;
                }
            }
            best
        };
        won[winner] = true;
        i = end;
    }
    won
}

/// The posterior Pr(n | j) of eq. 11 for each claimant of a stream, from the claimants' pick
/// probabilities `p` and priors `prior` (any non-negative weights; normalised here). All zero
/// when every product is zero.
pub fn posterior(p: &[f64], prior: &[f64]) -> Vec<f64> {
    let joint: Vec<f64> = p.iter().zip(prior).map(|(a, b)| a * b).collect();
    let z: f64 = joint.iter().sum();
    if z > 0.0 {
        joint.iter().map(|x| x / z).collect()
    } else {
        vec![0.0; p.len()]
    }
}
