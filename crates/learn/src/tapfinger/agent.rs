//! The TapFinger agents as a [`Puller`]: every cluster's agent encodes its graph, the shared
//! network scores its pending streams (pointer) and its workers for the chosen one (allocation),
//! and conflicts are settled by eq. 11 with the pointer's probabilities. Training samples from
//! the policy and records each agent's decision; evaluation takes the most probable choices.

use super::batch::ObsBatch;
use super::fast::{AgentLogits, FastTapNet};
use super::features::{AgentObs, ClusterTotals, encode};
use super::net::TapNet;
use continuum_core::pull::{Claim, Puller, Resolution, Round};
use continuum_core::rng::SimRng;
use rand::Rng;

/// One agent's decision in one round, as training needs it.
#[derive(Debug, Clone)]
pub struct Decision {
    /// Its observation.
    pub obs: AgentObs,
    /// The chosen offer and allocation choice (indices into the observation), or `None` (void).
    pub action: Option<(u32, u32)>,
    /// Whether its claim won (false for void): the allocation term counts only then (m).
    pub won: bool,
    /// log of the pointer's probability of the choice when taken.
    pub logp_ptr: f32,
    /// log of the allocation head's probability of the choice when taken (0 for void).
    pub logp_alloc: f32,
    /// The critic's value when taken.
    pub value: f32,
    /// Its cluster.
    pub cluster: u32,
    /// The decision step it belongs to: its rank among the steps in which agents acted, from 1.
    pub step: u64,
    /// The pending stream claimed (index in the step's pending set), if any.
    pub pending: Option<u32>,
    /// Streams it could claim in the round (its offers).
    pub offers: u32,
    /// Reward credited to it (filled by the trainer).
    pub reward: f32,
}

impl Decision {
    /// log π of the decision with TapFinger's mask: a loser's allocation term is left out
    /// (m = 0), as it never took effect.
    pub fn logp(&self) -> f32 {
        self.logp_ptr + if self.won { self.logp_alloc } else { 0.0 }
    }
}

/// How the agents pick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// The most probable choice (evaluation, the gateway).
    Greedy,
    /// A draw from the policy (training).
    Sample,
}

/// TapFinger's agents, one per cluster, sharing one network.
pub struct TapFinger {
    net: TapNet,
    /// The same network in plain Rust, for decisions that are not recorded (evaluation, the
    /// gateway): equal to `net`'s forward within 1e-5; None only if its weights could not be
    /// read, in which case candle decides.
    fast: Option<FastTapNet>,
    pick: Pick,
    /// Whether the agent points among all its pending streams (false: it considers only the
    /// oldest, the ablation without the pointer network).
    pointer: bool,
    resolution: Resolution,
    clusters: usize,
    name: String,
    /// Decisions recorded (training only).
    pub record: Option<Vec<Decision>>,
    /// Steps in which the agents acted so far (one more at each step's first round).
    pub step: u64,
    round_start: usize,
    /// Time spent in claims, for benchmarks: (rounds, bindings claimed).
    pub counted: (u64, u64),
    /// Confidence fallback: where an unrecorded agent's most probable pointer choice has a
    /// probability below this, it claims as `prior-pull` would instead.
    fallback: Option<f64>,
}

impl TapFinger {
    /// Agents for a topology of `clusters` clusters.
    pub fn new(
        net: TapNet,
        pick: Pick,
        pointer: bool,
        resolution: Resolution,
        clusters: usize,
    ) -> Self {
        Self {
            fast: FastTapNet::new(&net).ok(),
            net,
            pick,
            pointer,
            resolution,
            clusters,
            name: "tapfinger".into(),
            record: None,
            step: 0,
            round_start: 0,
            counted: (0, 0),
            fallback: None,
        }
    }

    /// Agents that claim as `prior-pull` where their pointer's most probable choice has a
    /// probability below `confidence` (decisions not recorded only; `None`: never).
    pub fn with_fallback(mut self, confidence: Option<f64>) -> Self {
        self.fallback = confidence;
        self
    }

    /// Names the agents in reports.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The shared network.
    pub fn net(&self) -> &TapNet {
        &self.net
    }

    /// Each agent's observation for `round` (the ablation without the pointer keeps only its
    /// oldest stream).
    pub fn observe(&self, round: &Round) -> Vec<AgentObs> {
        let totals = ClusterTotals::of(round, self.clusters);
        let mut obs = encode(round, &totals);
        if !self.pointer {
            for o in &mut obs {
                o.pending.truncate(1);
                o.workers.truncate(1);
                o.edges.truncate(1);
            }
        }
        obs
    }
}

/// Softmax of `x` (masked entries are ≈ −1e9 and come out 0).
fn softmax(x: &[f32]) -> Vec<f64> {
    let m = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let e: Vec<f64> = x.iter().map(|v| f64::from(v - m).exp()).collect();
    let z: f64 = e.iter().sum();
    e.iter().map(|v| v / z).collect()
}

fn choose(p: &[f64], pick: Pick, rng: &mut SimRng) -> usize {
    match pick {
        Pick::Greedy => {
            let mut best = 0;
            for (i, v) in p.iter().enumerate() {
                if *v > p[best] {
                    best = i;
                }
            }
            best
        }
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
        if self.record.is_none()
            && let Some(fast) = &self.fast
        {
            // Not recorded: the plain forward, agent by agent, allocation only where it points.
            let obs = self.observe(round);
            self.counted.0 += 1;
            if round.round == 0 {
                self.step += 1;
            }
            let mut logits = AgentLogits::default();
            for (i, (a, o)) in round.agents.iter().zip(&obs).enumerate() {
                fast.pointer_into(o, &mut logits);
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
                    let pa = softmax(&fast.alloc(&logits, j));
                    let k = choose(&pa, self.pick, rng);
                    self.counted.1 += 1;
                    Some(Claim {
                        pending: a.offers[j].pending,
                        cand: a.offers[j].cands[k],
                        p: pp[j],
                    })
                });
            }
            return;
        }
        let obs = self.observe(round);
        let refs: Vec<&AgentObs> = obs.iter().collect();
        let res = ObsBatch::new(&refs).and_then(|b| {
            let o = self.net.forward(&b)?;
            Ok((
                o.pointer.to_vec2::<f32>()?,
                o.alloc.to_vec3::<f32>()?,
                o.value.to_vec1::<f32>()?,
            ))
        });
        // A network that cannot run (it never fails on well-formed inputs) leaves every agent
        // void: no stream is bound by mistake, and the refusals show in the report.
        let Ok((pointer, alloc, value)) = res else {
            out.extend(std::iter::repeat_n(None, round.agents.len()));
            return;
        };
        self.counted.0 += 1;
        if round.round == 0 {
            self.step += 1;
        }
        self.round_start = self.record.as_ref().map_or(0, Vec::len);
        for (i, (a, o)) in round.agents.iter().zip(obs).enumerate() {
            let n = o.pending.len();
            // Real streams then void: the padded columns between them are masked out.
            let row = &pointer[i];
            let mut logits: Vec<f32> = row[..n].to_vec();
            logits.push(row[row.len() - 1]);
            let pp = softmax(&logits);
            let j = choose(&pp, self.pick, rng);
            let (claim, action, logp_ptr, logp_alloc) = if j == n {
                (None, None, pp[n].ln() as f32, 0.0)
            } else {
                let k_len = o.workers[j].len();
                let pa = softmax(&alloc[i][j][..k_len]);
                let k = choose(&pa, self.pick, rng);
                let offer = &a.offers[j];
                let claim = Claim {
                    pending: offer.pending,
                    cand: offer.cands[k],
                    p: pp[j],
                };
                self.counted.1 += 1;
                (
                    Some(claim),
                    Some((j as u32, k as u32)),
                    pp[j].ln() as f32,
                    pa[k].ln() as f32,
                )
            };
            out.push(claim);
            if let Some(rec) = &mut self.record {
                rec.push(Decision {
                    obs: o,
                    action,
                    won: false,
                    logp_ptr,
                    logp_alloc,
                    value: value[i],
                    cluster: a.cluster,
                    step: self.step,
                    pending: claim.map(|c| c.pending),
                    offers: a.offers.len() as u32,
                    reward: 0.0,
                });
            }
        }
    }

    fn resolved(&mut self, _round: &Round, won: &[bool]) {
        if let Some(rec) = &mut self.record {
            for (d, w) in rec[self.round_start..].iter_mut().zip(won) {
                d.won = *w;
            }
        }
    }
}
