//! Volcano's job-level policies (docs/jobs.md, "Placement"): the order in which a session visits
//! jobs (`drf`: lowest dominant resource share first; `sla`: earliest creation + waiting time
//! first; otherwise first come, first served, Volcano's fallback by creation time) and `gang`
//! (a job's ready tasks are placed together in one session or not at all: Volcano's allocate
//! action commits a job's statement only when the job is ready, and discards it otherwise).

use super::Placement;
use super::filter::Slot;
use crate::resources::Res;
use std::cmp::Ordering;

/// The order in which a Volcano session visits jobs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum JobOrder {
    /// By arrival (Volcano orders jobs by creation time when no plugin decides).
    Fifo,
    /// Volcano's `drf` plugin: by dominant resource share — max over resources of the job's
    /// allocated amount over the cluster's total — lowest first ("Dominant Resource Fairness",
    /// Ghodsi et al., NSDI 2011).
    Drf,
    /// Volcano's `sla` plugin: by creation time + SLA waiting time, earliest first; a job with
    /// no waiting time (its own, else `waiting_s`) comes after every job that has one.
    Sla {
        /// The plugin's global `sla-waiting-time`, s (`None`: only jobs' own).
        waiting_s: Option<f64>,
    },
}

/// What the job order sees of a job.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct JobView {
    pub(crate) id: u32,
    pub(crate) arrival_s: f64,
    pub(crate) allocated: Res,
    pub(crate) sla_waiting_s: Option<f64>,
}

impl JobOrder {
    /// Sorts `jobs` into visiting order; ties go to the earlier arrival, then the lower id.
    pub(crate) fn sort(&self, total: &Res, jobs: &mut [JobView]) {
        let fallback = |a: &JobView, b: &JobView| {
            a.arrival_s
                .total_cmp(&b.arrival_s)
                .then_with(|| a.id.cmp(&b.id))
        };
        match *self {
            Self::Fifo => jobs.sort_by(fallback),
            Self::Drf => jobs.sort_by(|a, b| {
                dominant_share(&a.allocated, total)
                    .total_cmp(&dominant_share(&b.allocated, total))
                    .then_with(|| fallback(a, b))
            }),
            Self::Sla { waiting_s } => {
                let deadline = |j: &JobView| j.sla_waiting_s.or(waiting_s).map(|w| j.arrival_s + w);
                jobs.sort_by(|a, b| {
                    let by_deadline = match (deadline(a), deadline(b)) {
                        (Some(x), Some(y)) => x.total_cmp(&y),
                        (Some(_), None) => Ordering::Less,
                        (None, Some(_)) => Ordering::Greater,
                        (None, None) => Ordering::Equal,
                    };
                    by_deadline.then_with(|| fallback(a, b))
                })
            }
        }
    }
}

/// DRF's dominant share: the largest share of any resource the cluster has.
pub(crate) fn dominant_share(allocated: &Res, total: &Res) -> f64 {
    let (a, t) = (allocated.arr(), total.arr());
    (0..3)
        .filter(|&r| t[r] > 0.0)
        .map(|r| a[r] / t[r])
        .fold(0.0, f64::max)
}

/// A task of a job being placed: its request and limits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Need {
    pub(crate) request: Res,
    pub(crate) limit: Res,
}

impl Placement {
    /// Places one job's ready tasks (`needs`, in task order) on `slots`, each by the filter and
    /// the scores, and writes the chosen node of each into `out` (`None`: left waiting). Under
    /// gang, a job whose tasks do not all find a node places none: its tentative placements are
    /// taken back from `slots`. Returns how many were placed.
    pub(crate) fn place_job(
        &self,
        slots: &mut [Slot],
        needs: &[Need],
        out: &mut Vec<Option<usize>>,
    ) -> usize {
        out.clear();
        // What each tentative placement overwrote, to take it back exactly (no rounding drift).
        let mut undo: Vec<(usize, Res)> = Vec::new();
        for n in needs {
            let node = self.choose(slots, &n.request, &n.limit);
            if let Some(i) = node {
                undo.push((i, slots[i].used));
                slots[i].used = slots[i].used.add(&n.request);
            } else if self.gang {
                break;
            }
            out.push(node);
        }
        let placed = undo.len();
        if self.gang && placed < needs.len() {
            for (i, used) in undo.into_iter().rev() {
                slots[i].used = used;
            }
            out.clear();
            out.resize(needs.len(), None);
            return 0;
        }
        placed
    }
}
