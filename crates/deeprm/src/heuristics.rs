//! The paper's baselines, as its public code has them: each picks among the visible jobs that
//! fit at the current timestep, or the void action when none does.
//! - `tetris`: the job whose demand vector best aligns with the free units (their dot product;
//!   Grandl et al., SIGCOMM 2014).
//! - `sjf`: the shortest job.
//! - `random`: uniformly among the jobs that fit.

use super::env::Env;
use continuum_core::rng::SimRng;
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// A hand-written scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Heuristic {
    /// Packing by alignment.
    Tetris,
    /// Shortest job first.
    Sjf,
    /// Random among the jobs that fit.
    Random,
}

impl Heuristic {
    /// Every heuristic, in report order.
    pub const ALL: [Heuristic; 3] = [Heuristic::Tetris, Heuristic::Sjf, Heuristic::Random];

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Heuristic::Tetris => "tetris",
            Heuristic::Sjf => "sjf",
            Heuristic::Random => "random",
        }
    }

    /// The action it takes in `env` (ties to the lower slot).
    pub fn act(self, env: &Env, rng: &mut SimRng) -> usize {
        let void = env.p.num_nw;
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
            Heuristic::Random => fitting[rng.random_range(0..fitting.len())],
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
        Heuristic::ALL
            .into_iter()
            .find(|h| h.name() == s)
            .ok_or_else(|| format!("unknown scheduler `{s}`; expected tetris, sjf or random"))
    }
}
