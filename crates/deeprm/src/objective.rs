//! What an agent is rewarded for in the reproduction environment, paid each time time moves on
//! (γ = 1 makes the episode's return the objective):
//!
//! | objective    | reward per timestep                              | return (γ = 1)            |
//! |--------------|--------------------------------------------------|---------------------------|
//! | `slowdown`   | −Σ_{j in system} 1/T_j (DeepRM's)                 | −Σ_j slowdown_j           |
//! | `completion` | −\|J\|, jobs in the system                         | −Σ_j completion time_j    |
//! | `utilisation`| share of the units in use during the timestep    | episode length × mean use |
//! | `makespan`   | −1 while any job is in the system                | −makespan                 |
//! | `within-2`   | −(jobs in the system whose age reaches 2·T_j)    | −#{j : slowdown_j > 2}    |
//! | `within-2-slowdown` | the sum of `slowdown`'s and `within-2`'s  | −Σ_j slowdown_j − #{j : slowdown_j > 2} |
//!
//! `within-2` pays −1 at the timestep a job still in the system has waited and run for twice
//! its duration since it arrived: a job is in the system then exactly when its slowdown will
//! exceed 2, so each such job is charged once and the return counts the jobs that miss a
//! slowdown of 2 (the share of jobs "meeting the objective" that the assignment asks to raise).
//!
//! On episodes run until every job is done, `utilisation`'s return is the total work, a
//! constant: it teaches only on fixed-length episodes (`makespan` raises utilisation there).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A reward objective.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Objective {
    /// Average slowdown (the paper's).
    Slowdown,
    /// Average completion time.
    Completion,
    /// Resource utilisation.
    Utilisation,
    /// Makespan.
    Makespan,
    /// The number of jobs whose slowdown exceeds 2.
    #[serde(rename = "within-2")]
    Within2,
    /// Average slowdown plus the number of jobs whose slowdown exceeds 2.
    #[serde(rename = "within-2-slowdown")]
    Within2Slowdown,
}

impl Objective {
    /// Every objective, in report order.
    pub const ALL: [Objective; 6] = [
        Objective::Slowdown,
        Objective::Completion,
        Objective::Utilisation,
        Objective::Makespan,
        Objective::Within2,
        Objective::Within2Slowdown,
    ];

    /// Its name in configs and reports.
    pub fn name(self) -> &'static str {
        match self {
            Objective::Slowdown => "slowdown",
            Objective::Completion => "completion",
            Objective::Utilisation => "utilisation",
            Objective::Makespan => "makespan",
            Objective::Within2 => "within-2",
            Objective::Within2Slowdown => "within-2-slowdown",
        }
    }

    /// The reward for the timestep that just ended.
    pub fn reward(self, s: &StepFacts) -> f64 {
        match self {
            Objective::Slowdown => -s.inverse_lengths,
            Objective::Completion => -(s.jobs as f64),
            Objective::Utilisation => s.used_share,
            Objective::Makespan => {
                if s.jobs > 0 {
                    -1.0
                } else {
                    0.0
                }
            }
            Objective::Within2 => -(s.past_twice as f64),
            Objective::Within2Slowdown => -s.inverse_lengths - s.past_twice as f64,
        }
    }
}

/// What the rewards are computed from, once a timestep has passed.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StepFacts {
    /// Jobs in the system (placed and unfinished, waiting, in the backlog).
    pub jobs: usize,
    /// Σ 1/T_j over those jobs.
    pub inverse_lengths: f64,
    /// Share of all units in use during the timestep.
    pub used_share: f64,
    /// Jobs in the system whose time since arrival has just reached twice their duration
    /// (each will finish with a slowdown above 2).
    pub past_twice: usize,
}

impl fmt::Display for Objective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Objective {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Objective::ALL
            .into_iter()
            .find(|o| o.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Objective::ALL.iter().map(|o| o.name()).collect();
                format!(
                    "unknown objective `{s}`; expected one of: {}",
                    names.join(", ")
                )
            })
    }
}
