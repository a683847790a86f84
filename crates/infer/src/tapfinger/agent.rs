//! The TapFinger agents as a [`Puller`]: every cluster's agent encodes its graph, the shared
//! network scores its pending streams (pointer) and its workers for the chosen one (allocation),
//! and conflicts are settled by eq. 11 with the pointer's probabilities. Evaluation and the
//! gateway take the most probable choices; a draw from the policy is there for exploration
//! (training records its decisions with its own puller, in `continuum-learn`).

use super::fast::{AgentLogits, FastTapNet};
use super::features::{AGENTS_PER_THREAD, AgentObs, ClusterTotals, encode};
use continuum_core::pull::{Claim, Puller, Resolution, Round};
use continuum_core::rng::SimRng;
use rand::Rng;

/// How the agents pick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// The most probable choice (evaluation, the gateway).
    Greedy,
    /// A draw from the policy (training).
    Sample,
}

/// TapFinger's agents, one per cluster, sharing one network (in plain Rust).
pub struct TapFinger {
    net: FastTapNet,
    pick: Pick,
    /// Whether the agent points among all its pending streams (false: it considers only the
    /// oldest, the ablation without the pointer network).
    pointer: bool,
    resolution: Resolution,
    clusters: usize,
    name: String,
    /// Time spent in claims, for benchmarks: (rounds, bindings claimed).
    pub counted: (u64, u64),
    /// Confidence fallback: where an agent's most probable pointer choice has a probability
    /// below this, it claims as `prior-pull` would instead.
    fallback: Option<f64>,
    logits: AgentLogits,
}

impl TapFinger {
    /// Agents for a topology of `clusters` clusters.
    pub fn new(
        net: FastTapNet,
        pick: Pick,
        pointer: bool,
        resolution: Resolution,
        clusters: usize,
    ) -> Self {
        Self {
            net,
            pick,
            pointer,
            resolution,
            clusters,
            name: "tapfinger".into(),
            counted: (0, 0),
            fallback: None,
            logits: AgentLogits::default(),
        }
    }

    /// Agents that claim as `prior-pull` where their pointer's most probable choice has a
    /// probability below `confidence` (`None`: never).
    pub fn with_fallback(mut self, confidence: Option<f64>) -> Self {
        self.fallback = confidence;
        self
    }

    /// Names the agents in reports.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }
}

/// Each agent's observation for `round` on a topology of `clusters` clusters (without the
/// pointer, `pointer` false, each agent keeps only its oldest stream).
pub fn observe(round: &Round, clusters: usize, pointer: bool) -> Vec<AgentObs> {
    let totals = ClusterTotals::of(round, clusters);
    let mut obs = encode(round, &totals);
    if !pointer {
        for o in &mut obs {
            o.pending.truncate(1);
            o.workers.truncate(1);
            o.edges.truncate(1);
        }
    }
    obs
}

/// Softmax of `x` (masked entries are ≈ −1e9 and come out 0).
pub fn softmax(x: &[f32]) -> Vec<f64> {
    let m = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let e: Vec<f64> = x.iter().map(|v| f64::from(v - m).exp()).collect();
    let z: f64 = e.iter().sum();
    e.iter().map(|v| v / z).collect()
}

/// The index `pick` takes from probabilities `p`: the most probable (the first on ties), or a
/// draw from `rng`.
pub fn choose(p: &[f64], pick: Pick, rng: &mut SimRng) -> usize {
    match pick {
        Pick::Greedy => first_max(p),
        Pick::Sample => {
            let u: f64 = rng.random();
            let mut acc = 0.0;
            for (i, v) in p.iter().enumerate() {
                acc += v;
                if u < acc {
                    return i;
                }
            }
            p.iter().rposition(|v| *v > 0.0).unwrap_or(0)
        }
    }
}

impl Puller for TapFinger {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn resolution(&self) -> Resolution {
        self.resolution
    }

    fn claim(&mut self, round: &Round, rng: &mut SimRng, out: &mut Vec<Option<Claim>>) {
        let obs = observe(round, self.clusters, self.pointer);
        self.counted.0 += 1;
        if self.pick == Pick::Greedy {
            // The forwards first, on every core (each agent's is its own), then the claims in
            // agent order, so that the draws of the fallback come in the same order.
            let scored = score_greedy(&self.net, &obs, &mut self.logits);
            for (i, ((a, o), s)) in round.agents.iter().zip(&obs).zip(scored).enumerate() {
                if let Some(c) = self.fallback
                    && s.p < c
                {
                    self.counted.1 += 1;
                    out.push(Some(continuum_core::pull::prior_claim(round, i, rng)));
                    continue;
                }
                out.push(if s.offer == o.pending.len() {
                    None
                } else {
                    self.counted.1 += 1;
                    Some(Claim {
                        pending: a.offers[s.offer].pending,
                        cand: a.offers[s.offer].cands[s.worker],
                        p: s.p,
                    })
                });
            }
            return;
        }
        // Drawn choices: agent by agent, the allocation only where it points.
        let logits = &mut self.logits;
        for (i, (a, o)) in round.agents.iter().zip(&obs).enumerate() {
            self.net.pointer_into(o, logits);
            let pp = softmax(&logits.pointer);
            if let Some(c) = self.fallback
                && pp.iter().copied().fold(0.0, f64::max) < c
            {
                self.counted.1 += 1;
                out.push(Some(continuum_core::pull::prior_claim(round, i, rng)));
                continue;
            }
            let j = choose(&pp, self.pick, rng);
            out.push(if j == o.pending.len() {
                None
            } else {
                let pa = softmax(&self.net.alloc(logits, j));
                let k = choose(&pa, self.pick, rng);
                self.counted.1 += 1;
                Some(Claim {
                    pending: a.offers[j].pending,
                    cand: a.offers[j].cands[k],
                    p: pp[j],
                })
            });
        }
    }
}

/// One agent's most probable choice.
#[derive(Debug, Clone, Copy)]
struct Greedy {
    /// The offer it points at (the number of offers: void).
    offer: usize,
    /// Its probability, the largest of the pointer's (void included).
    p: f64,
    /// The worker the allocation head picks for that offer (0 when void).
    worker: usize,
}

/// Every agent's most probable choice, in agent order: a large round's forwards split over the
/// machine's cores (each agent's arithmetic is the same whichever thread runs it).
fn score_greedy(net: &FastTapNet, obs: &[AgentObs], logits: &mut AgentLogits) -> Vec<Greedy> {
    if obs.len() < 2 * AGENTS_PER_THREAD {
        return obs.iter().map(|o| greedy(net, o, logits)).collect();
    }
    crate::par::map(obs, AGENTS_PER_THREAD, AgentLogits::default, |o, l| {
        greedy(net, o, l)
    })
}

/// One agent's most probable choice ([`choose`] with [`Pick::Greedy`], which draws nothing).
fn greedy(net: &FastTapNet, o: &AgentObs, logits: &mut AgentLogits) -> Greedy {
    net.pointer_into(o, logits);
    let pp = softmax(&logits.pointer);
    let offer = first_max(&pp);
    let worker = if offer == o.pending.len() {
        0
    } else {
        first_max(&softmax(&net.alloc(logits, offer)))
    };
    Greedy {
        offer,
        p: pp[offer],
        worker,
    }
}

/// The first index of the largest entry.
fn first_max(p: &[f64]) -> usize {
    let mut best = 0;
    for (i, v) in p.iter().enumerate() {
        if *v > p[best] {
            best = i;
        }
    }
    best
}
