//! The hand-written pull baselines: greedy (each cluster claims the pending stream it would
//! answer earliest), random, and prior (eq. 11's prior alone settles every contested stream:
//! the pull twin of the `headroom` push rule).

use super::{Claim, Puller, Resolution, Round};
use crate::rng::SimRng;
use rand::Rng;

/// Each agent claims, among its offers, the binding with the smallest end-to-end estimate
/// e2e(v, n) = 2·net + D_v(ζ) (docs/model.md §5) — the stream it would finish earliest by the
/// core's own estimate; ties to the stream that arrived first. Conflicts go to the earliest
/// finish.
#[derive(Debug, Clone, Copy, Default)]
pub struct GreedyPull;

impl Puller for GreedyPull {
    fn name(&self) -> String {
        "greedy-pull".into()
    }

    fn resolution(&self) -> Resolution {
        Resolution::EarliestFinish
    }

    fn claim(&mut self, round: &Round, _rng: &mut SimRng, out: &mut Vec<Option<Claim>>) {
        for a in round.agents {
            let mut best: Option<(f64, Claim)> = None;
            for o in &a.offers {
                for &k in &o.cands {
                    let e2e = round.cands[o.pending as usize][k as usize].e2e_ms;
                    if best.is_none_or(|(b, _)| e2e < b) {
                        let claim = Claim {
                            pending: o.pending,
                            cand: k,
                            p: 1.0,
                        };
                        best = Some((e2e, claim));
                    }
                }
            }
            out.push(best.map(|b| b.1));
        }
    }
}

/// Each agent claims one of its offers uniformly at random, with one of its feasible workers
/// for it uniformly at random; conflicts by eq. 11 (its pick probability is 1/offers).
#[derive(Debug, Clone, Copy, Default)]
pub struct RandomPull;

impl Puller for RandomPull {
    fn name(&self) -> String {
        "random-pull".into()
    }

    fn claim(&mut self, round: &Round, rng: &mut SimRng, out: &mut Vec<Option<Claim>>) {
        for a in round.agents {
            let o = &a.offers[rng.random_range(0..a.offers.len())];
            let k = o.cands[rng.random_range(0..o.cands.len())];
            out.push(Some(Claim {
                pending: o.pending,
                cand: k,
                p: 1.0 / a.offers.len() as f64,
            }));
        }
    }
}

/// Each agent claims one of its offers uniformly at random, with its least-e2e feasible worker
/// for it, and every claimant reports the same pick probability (1), so eq. 11 hands a contested
/// stream to the claimant whose free capacity holds the most copies of its demand — the prior
/// alone decides ([`super::prior_copies`]), ties to the lowest cluster index. The pull twin of
/// the `headroom` push rule (docs/model.md §15): what TapFinger's learned pointer must beat to
/// show that it adds anything to the prior.
#[derive(Debug, Clone, Copy, Default)]
pub struct PriorPull;

impl Puller for PriorPull {
    fn name(&self) -> String {
        "prior-pull".into()
    }

    fn claim(&mut self, round: &Round, rng: &mut SimRng, out: &mut Vec<Option<Claim>>) {
        for a in 0..round.agents.len() {
            out.push(Some(prior_claim(round, a, rng)));
        }
    }
}

/// `prior-pull`'s claim for agent `a` of `round`: one of its offers uniformly, on the offer's
/// least-e2e candidate (eq. 11 then hands the stream to the claimant with the most copies of
/// its demand). Also the fallback of a learned puller where it is unsure.
pub fn prior_claim(round: &Round, a: usize, rng: &mut SimRng) -> Claim {
    let agent = &round.agents[a];
    let o = &agent.offers[rng.random_range(0..agent.offers.len())];
    let cands = &round.cands[o.pending as usize];
    let k = *o
        .cands
        .iter()
        .min_by(|&&x, &&y| {
            cands[x as usize]
                .e2e_ms
                .total_cmp(&cands[y as usize].e2e_ms)
        })
        .expect("an offer has a candidate");
    Claim {
        pending: o.pending,
        cand: k,
        p: 1.0,
    }
}

/// The names of the hand-written pull baselines, as `--policies` and the gateway's
/// `pull.puller` take them.
pub const BASELINES: [&str; 3] = ["greedy-pull", "random-pull", "prior-pull"];

/// The pull baseline registered under `name` (one of [`BASELINES`]).
pub fn baseline(name: &str) -> Option<Box<dyn Puller + Send>> {
    match name {
        "greedy-pull" => Some(Box::new(GreedyPull)),
        "random-pull" => Some(Box::new(RandomPull)),
        "prior-pull" => Some(Box::new(PriorPull)),
        _ => None,
    }
}
