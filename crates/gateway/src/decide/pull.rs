//! Pull dispatch at the gateway (docs/model.md §15): an open waits on the *desk* until the next
//! decision step; the step runs the core's rounds ([`continuum_core::pull::step`]) over the
//! waiting streams with the published snapshot — every cluster's agent claiming for its own
//! workers, conflicts by eq. 11 — exactly as the simulator's steps do, and answers each open
//! with its binding or a refusal once its patience has run out.

use crate::config::PullSettings;
use crate::state::live::Snapshot;
use anyhow::{Context, Result};
use continuum_core::feasibility::{Candidate, Demand};
use continuum_core::pull::{Pending, Puller, StepStats, step};
use continuum_core::rng::{Purpose, SimRng, stream_rng};
use continuum_infer::tapfinger::{Pick, TapCheckpoint, TapFinger};
use std::path::Path;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// What a waiting open is answered with: its binding and the snapshot it was chosen on, or
/// `None` when no agent took it within its patience.
pub(crate) type PullAnswer = Option<(Candidate, Arc<Snapshot>)>;

struct Waiter {
    demand: Demand,
    waited: u32,
    reply: oneshot::Sender<PullAnswer>,
}

/// The waiting opens and the agents that claim them.
pub(crate) struct PullDesk {
    puller: Mutex<Box<dyn Puller + Send>>,
    waiting: Mutex<Vec<Waiter>>,
    rng: Mutex<SimRng>,
    /// Time between decision steps, ms.
    pub(crate) step_ms: u64,
    patience: u32,
    policy: &'static str,
}

/// The puller a gateway's `pull.puller` names, for a topology of `clusters` clusters.
pub(crate) fn puller_named(name: &str, clusters: usize) -> Result<Box<dyn Puller + Send>> {
    if let Some(file) = name.strip_prefix("tapfinger:") {
        let path = Path::new(file);
        let ck = TapCheckpoint::load(path)?;
        let net = ck.network(path)?;
        let c = &ck.meta.config;
        return Ok(Box::new(
            TapFinger::new(
                net,
                Pick::Greedy,
                c.pointer,
                c.resolution.resolution(),
                clusters,
            )
            .with_fallback(c.fallback),
        ));
    }
    continuum_core::pull::baseline(name)
        .with_context(|| format!("pull.puller: unknown puller `{name}`"))
}

impl PullDesk {
    /// The desk of `settings` for a topology of `clusters` clusters, publishing every
    /// `publish_ms` (the default step); `seed` seeds conflict draws.
    pub(crate) fn new(
        settings: &PullSettings,
        clusters: usize,
        publish_ms: u64,
        seed: u64,
    ) -> Result<Self> {
        let puller = puller_named(&settings.puller, clusters)
            .with_context(|| format!("pull.puller `{}`", settings.puller))?;
        let policy = continuum_core::pull::BASELINES
            .into_iter()
            .find(|n| *n == settings.puller)
            .unwrap_or("tapfinger");
        Ok(Self {
            policy,
            puller: Mutex::new(puller),
            waiting: Mutex::new(Vec::new()),
            rng: Mutex::new(stream_rng(seed, Purpose::Other, 0x7075_6c6c, 0)),
            step_ms: settings.step_ms.unwrap_or(publish_ms).max(1),
            patience: settings.patience,
        })
    }

    /// The puller's name: the `policy` of the bindings it makes (`tapfinger` or one of
    /// `continuum_core::pull::BASELINES`).
    pub(crate) fn policy(&self) -> &'static str {
        self.policy
    }

    /// Steps a stream may wait unclaimed.
    pub(crate) fn patience(&self) -> u32 {
        self.patience
    }

    /// Puts a stream of `demand` on the desk; its answer comes at a decision step.
    pub(crate) fn enqueue(&self, demand: Demand) -> oneshot::Receiver<PullAnswer> {
        let (reply, rx) = oneshot::channel();
        self.waiting.lock().expect("desk lock").push(Waiter {
            demand,
            waited: 0,
            reply,
        });
        rx
    }

    /// Streams waiting now.
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.lock().expect("desk lock").len()
    }

    /// One decision step on `snap`: the waiting streams in arrival order, the snapshot's
    /// reach, fleet and view. Answers every stream claimed, and every stream whose patience
    /// has run out; the others wait for the next step.
    pub(crate) fn step(&self, snap: &Arc<Snapshot>) -> StepStats {
        let waiting = std::mem::take(&mut *self.waiting.lock().expect("desk lock"));
        if waiting.is_empty() {
            return StepStats::default();
        }
        let pending: Vec<Pending> = waiting
            .iter()
            .map(|w| Pending {
                demand: w.demand,
                reach: &snap.reach,
                sched: 0,
                waited: w.waited,
            })
            .collect();
        let (bound, stats) = {
            let mut puller = self.puller.lock().expect("puller lock");
            let mut rng = self.rng.lock().expect("rng lock");
            step(
                &pending,
                &snap.plan.fleet,
                &snap.view,
                puller.as_mut(),
                &mut rng,
            )
        };
        let mut taken: Vec<Option<Candidate>> = vec![None; waiting.len()];
        for (j, c) in bound {
            taken[j as usize] = Some(c);
        }
        let mut keep = Vec::new();
        for (mut w, c) in waiting.into_iter().zip(taken) {
            match c {
                Some(c) => {
                    let _ = w.reply.send(Some((c, snap.clone())));
                }
                None if w.waited + 1 >= self.patience || w.reply.is_closed() => {
                    let _ = w.reply.send(None);
                }
                None => {
                    w.waited += 1;
                    keep.push(w);
                }
            }
        }
        // Opens that arrived during the step wait behind the ones kept.
        let mut waiting = self.waiting.lock().expect("desk lock");
        keep.append(&mut waiting);
        *waiting = keep;
        stats
    }
}
