//! The `current` load view (docs/model.md §8): every worker's present load, the demand of every
//! stream bound to it now by any scheduler, kept up to date at every binding and unbinding, so
//! a scheduler decides on what ASET's model calls L_vn(t) rather than on the published 1 s
//! average. Under `published` only the stream counts are kept here, as they always were.

use super::Simulation;
use continuum_core::load::LoadViewMode;

/// The demand bound to each worker now, under the `current` view.
#[derive(Debug, Clone)]
pub(crate) struct PresentLoad {
    /// Per worker, the demand of the streams bound to it now, normalised qps.
    qps: Vec<f64>,
    /// Per stream (by serial), the demand it brought to its worker when bound.
    demand: Vec<f64>,
}

impl PresentLoad {
    /// The present loads of `workers` workers under `mode` (`None` under `published`).
    pub(crate) fn for_mode(mode: LoadViewMode, workers: usize) -> Option<Self> {
        (mode == LoadViewMode::Current).then(|| Self {
            qps: vec![0.0; workers],
            demand: Vec::new(),
        })
    }
}

impl Simulation {
    /// Stream `serial` is bound to `worker` from now on, bringing it `demand_qps`; under the
    /// `current` view the worker's seen load and stream count change at once.
    pub(super) fn attach(&mut self, serial: u32, worker: u32, demand_qps: f64) {
        let w = worker as usize;
        self.workers[w].streams += 1;
        if let Some(p) = &mut self.present {
            let s = serial as usize;
            if p.demand.len() <= s {
                p.demand.resize(s + 1, 0.0);
            }
            p.demand[s] = demand_qps;
            p.qps[w] += demand_qps;
            let seen = &mut self.view.workers[w];
            seen.load_qps = p.qps[w];
            seen.streams = self.workers[w].streams;
        }
    }

    /// Stream `serial` leaves `worker` (it ended, or is re-bound elsewhere).
    pub(super) fn detach(&mut self, serial: u32, worker: u32) {
        let w = worker as usize;
        self.workers[w].streams -= 1;
        if let Some(p) = &mut self.present {
            let streams = self.workers[w].streams;
            let d = p.demand.get(serial as usize).copied().unwrap_or(0.0);
            // Exactly 0 once the last stream has left: no rounding residue is left behind.
            p.qps[w] = if streams == 0 {
                0.0
            } else {
                (p.qps[w] - d).max(0.0)
            };
            let seen = &mut self.view.workers[w];
            seen.load_qps = p.qps[w];
            seen.streams = streams;
        }
    }

    /// Whether schedulers see the workers' present load (`current`) rather than the published
    /// measurement.
    pub(super) fn sees_present_load(&self) -> bool {
        self.present.is_some()
    }
}
