//! Counterfactual credit: what each action of one stream class would change, measured by
//! forking the simulation at a window boundary.
//!
//! One fork per action: the fork applies that action to the class at every scheduler for the
//! window (or for several, `persist_windows`), then gives the class back its behaviour actions
//! and runs on for the rest of the scoring horizon, so the forks differ only by that choice. Every fork sees the
//! same clients, frames and network draws (each comes from its own seeded stream), so the
//! differences between forks measure the action rather than the luck of the window. A fork's
//! value is the success ratio of the scored queries — those emitted from the boundary to the end
//! of the horizon, at every scheduler or at one — minus the mean over the class's forks.

use crate::agent::CfScope;
use crate::policy::Policy;
use crate::sim::Simulation;
use rayon::prelude::*;

/// What a counterfactual evaluation needs besides the run.
#[derive(Clone, Copy)]
pub struct CfSettings<'a> {
    /// The actions.
    pub actions: &'a [&'static dyn Policy],
    /// Window length, ms.
    pub window_ms: f64,
    /// Windows scored from the boundary on.
    pub horizon_windows: usize,
    /// Windows the fork keeps the action for (1 ≤ persist ≤ horizon), before the class gets
    /// its behaviour actions back.
    pub persist_windows: usize,
    /// Time a fork runs past its horizon so its queries are answered, ms.
    pub settle_ms: f64,
    /// Whose queries are scored.
    pub scope: CfScope,
    /// Factor applied to success-ratio differences.
    pub scale: f64,
}

/// Values of every action of `class` for the window starting now (`sim` stands at boundary
/// `window`), per scheduler: `[scheduler][action]`. Under [`CfScope::System`] every scheduler
/// gets the same values. `behaviour[s][c]` is scheduler `s`'s action for class `c` in the
/// window. `None` when no query is scored (an empty horizon).
pub fn class_values(
    sim: &Simulation,
    window: usize,
    class: usize,
    behaviour: &[Vec<u32>],
    st: &CfSettings,
) -> Option<Vec<Vec<f32>>> {
    let schedulers = behaviour.len();
    let end = (window + st.persist_windows.clamp(1, st.horizon_windows)) as f64 * st.window_ms;
    let horizon = (window + st.horizon_windows) as f64 * st.window_ms;
    let last = window + st.horizon_windows;
    // Per fork: (success, offered) per scheduler over the scored windows.
    let scores: Vec<Vec<(u64, u64)>> = st
        .actions
        .par_iter()
        .map(|p| {
            let mut fork = sim.clone();
            for s in 0..schedulers {
                fork.set_class_policy(s, class, *p);
            }
            fork.run_until(end);
            for (s, b) in behaviour.iter().enumerate() {
                fork.set_class_policy(s, class, st.actions[b[class] as usize]);
            }
            fork.run_until(horizon + st.settle_ms);
            let m = fork.metrics();
            (0..schedulers)
                .map(|s| {
                    let c = m.sum(|w, x, _| x == s && (window..last).contains(&w));
                    (c.success, c.offered)
                })
                .collect()
        })
        .collect();
    let ratio = |per_sched: &[(u64, u64)], s: Option<usize>| -> Option<f64> {
        let (ok, n) = per_sched
            .iter()
            .enumerate()
            .filter(|(i, _)| s.is_none_or(|s| s == *i))
            .fold((0u64, 0u64), |(a, b), (_, (x, y))| (a + x, b + y));
        (n > 0).then(|| ok as f64 / n as f64)
    };
    let values_for = |s: Option<usize>| -> Option<Vec<f32>> {
        let r: Vec<f64> = scores
            .iter()
            .map(|f| ratio(f, s))
            .collect::<Option<Vec<_>>>()?;
        let mean = r.iter().sum::<f64>() / r.len() as f64;
        Some(r.iter().map(|x| ((x - mean) * st.scale) as f32).collect())
    };
    match st.scope {
        CfScope::System => {
            let v = values_for(None)?;
            Some(vec![v; schedulers])
        }
        CfScope::Scheduler => {
            let per: Vec<Option<Vec<f32>>> = (0..schedulers).map(|s| values_for(Some(s))).collect();
            if per.iter().all(Option::is_none) {
                return None;
            }
            // A scheduler that offered nothing in the horizon learns nothing: zeros, and the
            // caller gives them no weight.
            Some(
                per.into_iter()
                    .map(|v| v.unwrap_or_else(|| vec![f32::NAN; st.actions.len()]))
                    .collect(),
            )
        }
    }
}
