//! The paper's baselines, as its public code has them (`other_agents.py`). The first four pick
//! among the visible jobs that fit at the current timestep for their whole duration, or the
//! void action when none does:
//! - `tetris`: the job whose demand vector best aligns with the free units (their dot product;
//!   Grandl et al., SIGCOMM 2014).
//! - `sjf`: the shortest job.
//! - `tetris-sjf` (the paper's Tetris★, `get_packer_sjf_action`): the highest
//!   knob × alignment + (1 − knob) / duration; knob 1 is Tetris, 0 is SJF.
//! - `random-fit`: uniformly among the jobs that fit (work-conserving).
//!
//! and the authors' `random` (`get_random_action`): uniformly among the M + 1 actions, the void
//! action and empty slots included; a job that does not fit now is placed at its first free
//! future time, as the environment places any job.

use super::env::Env;
use continuum_core::rng::SimRng;
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// A hand-written scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Heuristic {
    /// Packing by alignment.
    Tetris,
    /// Shortest job first.
    Sjf,
    /// The authors' random: uniform over every action.
    Random,
    /// Random among the jobs that fit.
    RandomFit,
    /// Packing and SJF mixed: knob × alignment + (1 − knob) / duration.
    TetrisSjf {
        /// 1 favours packing, 0 SJF.
        knob: f64,
    },
}

impl Heuristic {
    /// The heuristics without a knob, in report order (`tetris-sjf` needs its knob).
    pub const ALL: [Heuristic; 4] = [
        Heuristic::Tetris,
        Heuristic::Sjf,
        Heuristic::Random,
        Heuristic::RandomFit,
    ];

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Heuristic::Tetris => "tetris",
            Heuristic::Sjf => "sjf",
            Heuristic::Random => "random",
            Heuristic::RandomFit => "random-fit",
            Heuristic::TetrisSjf { .. } => "tetris-sjf",
        }
    }

    /// The action it takes in `env` (ties to the lower slot).
    pub fn act(self, env: &Env, rng: &mut SimRng) -> usize {
        let void = env.p.num_nw;
        if self == Heuristic::Random {
            return rng.random_range(0..=void);
        }
        let fitting: Vec<usize> = (0..env.p.num_nw)
            .filter(|&i| env.slot(i).is_some_and(|j| env.fits_now(j)))
            .collect();
        if fitting.is_empty() {
            return void;
        }
        let best = |score: &dyn Fn(usize) -> f64| {
            let mut b = fitting[0];
            for &i in &fitting[1..] {
                if score(i) > score(b) {
                    b = i;
                }
            }
            b
        };
        match self {
            Heuristic::Tetris => {
                best(&|i| alignment(env.free_now(), env.slot(i).map_or(&[][..], |j| &j.res)))
            }
            Heuristic::Sjf => best(&|i| -f64::from(env.slot(i).map_or(u32::MAX, |j| j.len))),
            Heuristic::TetrisSjf { knob } => best(&|i| {
                env.slot(i).map_or(f64::NEG_INFINITY, |j| {
                    knob * alignment(env.free_now(), &j.res) + (1.0 - knob) / f64::from(j.len)
                })
            }),
            Heuristic::RandomFit | Heuristic::Random => fitting[rng.random_range(0..fitting.len())],
        }
    }
}

/// Tetris's alignment score: the dot product of the free units and the demand.
pub fn alignment(free: &[u32], demand: &[u32]) -> f64 {
    free.iter()
        .zip(demand)
        .map(|(f, d)| f64::from(*f) * f64::from(*d))
        .sum()
}

impl FromStr for Heuristic {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if let Some(k) = s.strip_prefix("tetris-sjf:") {
            return match k.parse::<f64>() {
                Ok(knob) if (0.0..=1.0).contains(&knob) => Ok(Heuristic::TetrisSjf { knob }),
                _ => Err(format!("`{s}`: the knob must be a number in [0, 1]")),
            };
        }
        Heuristic::ALL.into_iter().find(|h| h.name() == s).ok_or_else(|| {
            format!(
                "unknown scheduler `{s}`; expected tetris, sjf, random, random-fit or tetris-sjf:KNOB"
            )
        })
    }
}
