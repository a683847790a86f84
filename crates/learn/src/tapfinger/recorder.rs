//! The TapFinger agents as training runs them: a [`Puller`] that scores every agent's graph with
//! the candle network in one batch, draws (or takes the most probable) choices, and records each
//! agent's decision with what PPO needs (its observation, the log probabilities and the critic's
//! value). Decisions that are not recorded run on the plain forward
//! ([`continuum_infer::tapfinger::TapFinger`]).

use super::batch::ObsBatch;
use super::net::TapNet;
use continuum_core::pull::{Claim, Puller, Resolution, Round};
use continuum_core::rng::SimRng;
use continuum_infer::tapfinger::features::AgentObs;
use continuum_infer::tapfinger::{Pick, choose, observe, softmax};

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

/// TapFinger's agents with the training network, recording every decision.
pub struct Recorder {
    net: TapNet,
    pick: Pick,
    pointer: bool,
    resolution: Resolution,
    clusters: usize,
    /// Decisions recorded so far.
    pub record: Vec<Decision>,
    /// Steps in which the agents acted so far (one more at each step's first round).
    pub step: u64,
    round_start: usize,
}

impl Recorder {
    /// Agents of `net` for a topology of `clusters` clusters.
    pub fn new(
        net: TapNet,
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
            record: Vec::new(),
            step: 0,
            round_start: 0,
        }
    }
}

impl Puller for Recorder {
    fn name(&self) -> String {
        "tapfinger".into()
    }

    fn resolution(&self) -> Resolution {
        self.resolution
    }

    fn claim(&mut self, round: &Round, rng: &mut SimRng, out: &mut Vec<Option<Claim>>) {
        let obs = observe(round, self.clusters, self.pointer);
        let refs: Vec<&AgentObs> = obs.iter().collect();
        let res = ObsBatch::new(&refs, self.net.shape().features).and_then(|b| {
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
        if round.round == 0 {
            self.step += 1;
        }
        self.round_start = self.record.len();
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
                (
                    Some(claim),
                    Some((j as u32, k as u32)),
                    pp[j].ln() as f32,
                    pa[k].ln() as f32,
                )
            };
            out.push(claim);
            self.record.push(Decision {
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

    fn resolved(&mut self, _round: &Round, won: &[bool]) {
        for (d, w) in self.record[self.round_start..].iter_mut().zip(won) {
            d.won = *w;
        }
    }
}
