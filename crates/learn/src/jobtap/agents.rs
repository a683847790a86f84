//! TapFinger's agents in its own problem, as a scheduler of a run (docs/tapfinger.md §1): at
//! every timestep, logical rounds ([`pull_rounds`], TapFinger §IV-D's multi-task scheduling) in
//! which each cluster's agent scores its graph with the shared network (plain Rust), points at
//! one of its pending tasks or passes, and picks an allocation for it among the feasible ones;
//! conflicts are settled by eq. 11 with the pointer's probabilities. Training records every
//! decision with what PPO needs.

use super::encode::{JobsObs, observe_agent};
use crate::tapfinger::recorder::Decision;
use continuum_core::rng::SimRng;
use continuum_infer::tapfinger::{FastTapNet, Pick, choose, softmax};
use continuum_jobs::ml::{Claim, Interval, MlRun, MlScheduler, Settle, pull_rounds};
use rand::Rng;
use std::cell::RefCell;

/// Which pending tasks an agent's pointer chooses among.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    /// All its fitting pending tasks (TapFinger).
    Pointer,
    /// One drawn uniformly (the ablation without the pointer network, TapFinger §V-D).
    Random,
    /// The earliest (the vanilla MARL of TapFinger §V-B1: "chooses the task from the queue in
    /// a First-In First-Out manner").
    Fifo,
}

/// A variant of the agents: the network's encoder, how tasks are offered to the pointer and
/// how conflicts are settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    /// Its name in reports.
    pub name: &'static str,
    /// The HAN encoder (false: the MLP of the ablation).
    pub han: bool,
    /// The tasks offered.
    pub offer: Offer,
    /// Conflict resolution.
    pub settle: Settle,
}

/// TapFinger and its ablations (TapFinger §V-B1 "Comparing With Vanilla MARL", §V-D).
pub const VARIANTS: [Variant; 4] = [
    Variant {
        name: "tapfinger",
        han: true,
        offer: Offer::Pointer,
        settle: Settle::Bayes,
    },
    Variant {
        name: "no-han",
        han: false,
        offer: Offer::Pointer,
        settle: Settle::Bayes,
    },
    Variant {
        name: "no-pointer",
        han: true,
        offer: Offer::Random,
        settle: Settle::Bayes,
    },
    Variant {
        name: "vanilla-marl",
        han: false,
        offer: Offer::Fifo,
        settle: Settle::First,
    },
];

/// The variant called `name`.
pub fn variant(name: &str) -> Option<Variant> {
    VARIANTS.iter().copied().find(|v| v.name == name)
}

/// The agents of one variant, sharing one network.
pub struct JobAgents {
    net: FastTapNet,
    variant: Variant,
    pick: Pick,
    /// Decisions recorded (when recording).
    pub record: Option<Vec<Decision>>,
    /// Decisions taken (rounds × agents that chose), for the decision-time bench.
    pub decisions: u64,
}

impl JobAgents {
    /// Agents of `variant` on `net`, picking as `pick`; `record` keeps every decision.
    pub fn new(net: FastTapNet, variant: Variant, pick: Pick, record: bool) -> Self {
        Self {
            net,
            variant,
            pick,
            record: record.then(Vec::new),
            decisions: 0,
        }
    }
}

/// What one round's claims leave to record.
struct Pending {
    decision: Option<Decision>,
}

impl MlScheduler for JobAgents {
    fn name(&self) -> String {
        self.variant.name.into()
    }

    fn schedule(&mut self, iv: &mut Interval<'_>, rng: &mut SimRng) {
        let step = iv.run().now();
        let n = iv.run().clusters();
        let state = RefCell::new((Vec::<Pending>::new(), 0u64));
        let (net, variant, pick, recording) =
            (&self.net, self.variant, self.pick, self.record.is_some());
        let record = RefCell::new(self.record.take());
        let claim = |run: &MlRun, c: u32, fit: &[u32], rng: &mut SimRng| {
            let offered = match variant.offer {
                Offer::Pointer => fit.to_vec(),
                Offer::Fifo => fit[..1].to_vec(),
                Offer::Random => vec![fit[rng.random_range(0..fit.len())]],
            };
            let g = observe_agent(run, c, &offered);
            let (claim, decision) = decide(net, &g, pick, rng, c, step, recording);
            let mut st = state.borrow_mut();
            st.1 += 1;
            if st.0.is_empty() {
                st.0.resize_with(n, || Pending { decision: None });
            }
            st.0[c as usize].decision = decision;
            claim
        };
        let settled = |_: &[Option<Claim>], won: &[bool]| {
            let mut st = state.borrow_mut();
            let mut rec = record.borrow_mut();
            for (p, w) in st.0.iter_mut().zip(won) {
                if let Some(mut d) = p.decision.take() {
                    d.won = *w;
                    if let Some(r) = rec.as_mut() {
                        r.push(d);
                    }
                }
            }
        };
        pull_rounds(iv, variant.settle, rng, claim, settled);
        // The last round's passes (no claim, so no settling round) are decisions too.
        let (pending, count) = state.into_inner();
        let mut rec = record.into_inner();
        for p in pending {
            if let (Some(d), Some(r)) = (p.decision, rec.as_mut()) {
                r.push(d);
            }
        }
        self.record = rec;
        self.decisions += count;
    }
}

/// One agent's choice on its graph `g`: the claim, and the decision to record.
fn decide(
    net: &FastTapNet,
    g: &JobsObs,
    pick: Pick,
    rng: &mut SimRng,
    cluster: u32,
    step: u64,
    recording: bool,
) -> (Option<Claim>, Option<Decision>) {
    let logits = net.pointer(&g.obs);
    // The void logit is masked (≈ −1e9): its probability is 0 and it is never chosen.
    let pp = softmax(&logits.pointer);
    let offers = g.tasks.len();
    let j = choose(&pp[..offers], pick, rng);
    let (claim, action, logp_alloc) = if j == offers {
        (None, None, 0.0)
    } else {
        let pa = softmax(&net.alloc(&logits, j));
        let k = choose(&pa, pick, rng);
        let claim = Claim {
            task: g.tasks[j],
            alloc: g.allocs[j][k],
            p: pp[j],
        };
        (Some(claim), Some((j as u32, k as u32)), pa[k].ln() as f32)
    };
    let decision = recording.then(|| Decision {
        obs: g.obs.clone(),
        action,
        won: false,
        logp_ptr: pp[j].ln() as f32,
        logp_alloc,
        value: 0.0,
        cluster,
        step,
        pending: claim.map(|c| c.task),
        offers: offers as u32,
        reward: 0.0,
    });
    (claim, decision)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::weights_of;
    use crate::jobtap::train::{JobTapSettings, shape_of};
    use crate::tapfinger::net::build;
    use continuum_core::rng::{Purpose, stream_rng};
    use continuum_jobs::ml::{MlSetting, run_with};

    fn net(v: Variant) -> FastTapNet {
        let shape = shape_of(v, &JobTapSettings::default());
        let (vm, _) = build(shape, 9).unwrap();
        FastTapNet::read(shape, &weights_of(&vm).unwrap()).unwrap()
    }

    /// Every variant, untrained, completes every task; recorded, each placement is one won
    /// decision and every decision points inside its graph.
    #[test]
    fn every_variant_serves_every_task_and_records_its_decisions() {
        let mut s = MlSetting::synthetic(3, 2.0);
        s.tasks = 60;
        for v in VARIANTS {
            let r = run_with(&s, 5, &mut JobAgents::new(net(v), v, Pick::Greedy, false));
            assert_eq!((r.completed, r.unfinished), (60, 0), "{}", v.name);
            let mut agents = JobAgents::new(net(v), v, Pick::Sample, true);
            let mut run = MlRun::new(s.clone(), 5);
            let mut rng = stream_rng(5, Purpose::Policy, 0, 0);
            while !run.finished() {
                run.admit();
                agents.schedule(&mut run.interval(), &mut rng);
                run.advance();
            }
            let rec = agents.record.take().unwrap();
            assert_eq!(rec.iter().filter(|d| d.won).count(), 60, "{}", v.name);
            assert_eq!(agents.decisions as usize, rec.len());
            for d in &rec {
                assert!(d.won <= d.action.is_some());
                if let Some((j, k)) = d.action {
                    assert!((j as usize) < d.obs.pending.len());
                    assert!((k as usize) < d.obs.workers[j as usize].len());
                }
                if v.offer != Offer::Pointer {
                    assert_eq!(d.offers, 1);
                }
            }
        }
    }
}
