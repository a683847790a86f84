//! Which waiting tasks a task-level step offers to the filter, and in what order (docs/jobs.md,
//! "DeepRM's environment as a special case"). kube-scheduler's order is the queue's: every
//! waiting task, first queued first placed. DeepRM's (Mao et al., "Resource Management with Deep
//! Reinforcement Learning", HotNets 2016) sees only its first M waiting tasks, held in M *visible
//! slots* (the rest is its backlog), and repeatedly places the visible task with the best score
//! that fits, as its baselines (`other_agents.py`, here `crates/deeprm/src/heuristics.rs`) do.

use super::{Level, Placement};
use crate::error::JobsError;
use crate::resources::Res;

/// The prefix of DeepRM's named configurations: `DEEPRM_TETRIS@M`, `DEEPRM_SJF@M`.
pub const DEEPRM_PREFIX: &str = "DEEPRM_";

/// How a DeepRM step ranks its visible tasks (the highest value wins; ties go to the lower
/// slot, as DeepRM's heuristics break them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VisibleScore {
    /// Tetris (Grandl et al., SIGCOMM 2014) as DeepRM computes it: the alignment, the dot
    /// product of the node's free amounts and the task's request, cpu·cpu + gpu·gpu + mem·mem in
    /// the nodes' own units (cores, GPUs, GB), unweighted and unnormalised.
    Tetris,
    /// Shortest job first: the shortest nominal run time, work / allocated cores (on a node of
    /// speed 1, without a straggler's slowdown: what DeepRM's job length is).
    Sjf,
}

impl VisibleScore {
    /// Its name in DeepRM's named configurations (`TETRIS`, `SJF`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Tetris => "TETRIS",
            Self::Sjf => "SJF",
        }
    }

    /// The value of a task with `request` and nominal run time `duration_s` on a node with
    /// `free` amounts (higher is better).
    pub(crate) fn value(self, free: &Res, request: &Res, duration_s: f64) -> f64 {
        match self {
            Self::Tetris => free
                .arr()
                .iter()
                .zip(request.arr())
                .map(|(f, r)| f * r)
                .sum(),
            Self::Sjf => -duration_s,
        }
    }
}

/// The order in which a task-level step visits the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueueOrder {
    /// kube-scheduler's (the default): every waiting task in queue order, each placed on its
    /// own or left waiting.
    #[default]
    Fifo,
    /// DeepRM's: the first `slots` waiting tasks sit in `slots` visible slots; the step places
    /// the visible task of best `score` that fits on a node (the node its plugins choose),
    /// fills the slot with the first waiting task beyond them (DeepRM's backlog front), and
    /// repeats until no visible task fits. A task entering the queue takes the lowest empty
    /// slot, if any.
    Visible {
        /// Visible slots M (at least 1).
        slots: usize,
        /// How the visible tasks are ranked.
        score: VisibleScore,
    },
}

impl Placement {
    /// DeepRM's scheduler `score` with `slots` visible slots, named `DEEPRM_TETRIS@M` or
    /// `DEEPRM_SJF@M`: task level, EqualPriority (the node is the lowest-index one the task fits
    /// on; DeepRM has one machine). Refused: `slots` = 0.
    pub fn deeprm(score: VisibleScore, slots: usize) -> Result<Self, JobsError> {
        let name = format!("{DEEPRM_PREFIX}{}@{slots}", score.name());
        Self::new(
            &name,
            vec![(super::Plugin::EqualPriority, 1.0)],
            Level::Task,
            super::JobOrder::Fifo,
            false,
        )?
        .with_queue_order(QueueOrder::Visible { slots, score })
    }

    /// A DeepRM name (`DEEPRM_TETRIS@M`, `DEEPRM_SJF@M`, upper case), or `None` when `upper`
    /// does not start with [`DEEPRM_PREFIX`].
    pub(crate) fn deeprm_by_name(upper: &str) -> Option<Result<Self, JobsError>> {
        let rest = upper.strip_prefix(DEEPRM_PREFIX)?;
        let bad = || {
            Err(JobsError::Name(format!(
                "placement `{upper}`: expected DEEPRM_TETRIS@M or DEEPRM_SJF@M, M the visible \
                 slots (at least 1)"
            )))
        };
        let Some((score, m)) = rest.split_once('@') else {
            return Some(bad());
        };
        let score = match score {
            "TETRIS" => VisibleScore::Tetris,
            "SJF" => VisibleScore::Sjf,
            _ => return Some(bad()),
        };
        Some(match m.parse::<usize>() {
            Ok(slots) if slots > 0 => Self::deeprm(score, slots),
            _ => bad(),
        })
    }

    /// The same configuration visiting the queue in `order`. Refused: a DeepRM order at job
    /// level (Volcano visits jobs, not tasks) or with 0 slots.
    pub fn with_queue_order(mut self, order: QueueOrder) -> Result<Self, JobsError> {
        if let QueueOrder::Visible { slots, .. } = order {
            let bad = |m: &str| Err(JobsError::Name(format!("placement `{}`: {m}", self.name)));
            if self.level != Level::Task {
                return bad("DeepRM's visible slots need task level");
            }
            if slots == 0 {
                return bad("DeepRM's visible slots must be at least 1");
            }
        }
        self.queue = order;
        Ok(self)
    }

    /// The order in which a task-level step visits the queue.
    pub fn queue_order(&self) -> QueueOrder {
        self.queue
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deeprm_names_build_their_configurations() {
        let t = Placement::by_name("deeprm_tetris@10").unwrap();
        assert_eq!(t.name(), "DEEPRM_TETRIS@10");
        assert_eq!(
            t.queue_order(),
            QueueOrder::Visible {
                slots: 10,
                score: VisibleScore::Tetris
            }
        );
        assert_eq!(t, Placement::deeprm(VisibleScore::Tetris, 10).unwrap());
        let s = Placement::by_name("DEEPRM_SJF@3").unwrap();
        assert_eq!(s.level(), Level::Task);
        for bad in [
            "DEEPRM_SJF",
            "DEEPRM_SJF@0",
            "DEEPRM_FIFO@2",
            "DEEPRM_SJF@x",
        ] {
            let e = Placement::by_name(bad).unwrap_err().to_string();
            assert!(e.contains("DEEPRM_TETRIS@M"), "{e}");
        }
        // The default is kube-scheduler's queue order; job level refuses DeepRM's.
        let lrp = Placement::by_name("LRP").unwrap();
        assert_eq!(lrp.queue_order(), QueueOrder::Fifo);
        let visible = QueueOrder::Visible {
            slots: 2,
            score: VisibleScore::Sjf,
        };
        assert!(
            Placement::by_name("GANG_LRP")
                .unwrap()
                .with_queue_order(visible)
                .is_err()
        );
        assert_eq!(
            lrp.with_queue_order(visible).unwrap().queue_order(),
            visible
        );
    }

    #[test]
    fn scores_are_deeprms() {
        let free = Res::new(6.0, 0.0, 3.0);
        let req = Res::new(2.0, 0.0, 5.0);
        assert_eq!(VisibleScore::Tetris.value(&free, &req, 4.0), 27.0);
        assert_eq!(VisibleScore::Sjf.value(&free, &req, 4.0), -4.0);
    }
}
