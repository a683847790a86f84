//! Each bound stream's slowest answer (the stream tail), updated in batches: an answer
//! appends (stream, latency) to a log, and the log is folded into the streams' facts every
//! [`BATCH`] answers. Folding many independent updates in one tight loop lets the processor
//! overlap their memory accesses, where one update per answer, amid the answer's other work,
//! waits on memory whenever the streams outgrow the caches. A maximum does not depend on the
//! order of its terms, so the tails are exactly those of updating at once.

use super::{Simulation, StreamFacts};

/// Answers logged before they are folded in.
const BATCH: usize = 1024;

/// Answers not yet folded into the streams' tails.
#[derive(Debug, Clone, Default)]
pub(super) struct TailLog {
    log: Vec<(u32, f32)>,
}

impl TailLog {
    /// Stream `serial` answered a query in `ms`.
    #[inline]
    pub(crate) fn push(&mut self, serial: u32, ms: f32, facts: &mut [StreamFacts]) {
        self.log.push((serial, ms));
        if self.log.len() >= BATCH {
            self.fold(facts);
        }
    }

    /// Folds every logged answer into `facts`.
    pub(crate) fn fold(&mut self, facts: &mut [StreamFacts]) {
        for (s, ms) in self.log.drain(..) {
            let f = &mut facts[s as usize];
            f.tail_ms = f.tail_ms.max(ms);
        }
    }

    /// Each stream's tail, ms (0: no answer yet), logged answers included.
    pub(crate) fn tails(&self, facts: &[StreamFacts]) -> Vec<f32> {
        let mut t: Vec<f32> = facts.iter().map(|f| f.tail_ms).collect();
        for &(s, ms) in &self.log {
            let x = &mut t[s as usize];
            *x = x.max(ms);
        }
        t
    }
}

impl Simulation {
    /// Each bound stream's slowest answered query, ms; streams with no answered query are left
    /// out. (The per-job tail, a job being a stream's queries in one window, is in
    /// [`Self::jobs`].)
    pub fn stream_tails_ms(&self) -> Vec<f64> {
        self.tails
            .tails(&self.facts)
            .into_iter()
            .filter(|t| *t > 0.0)
            .map(f64::from)
            .collect()
    }
}
