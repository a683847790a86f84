//! Counterfactual credit: what each action of one stream class would change, measured by
//! forking the simulation at a window boundary.
//!
//! One fork per action: the fork applies that action to the class at every scheduler (or at
//! one, `only`, the others keeping their behaviour actions: the value of that scheduler's own
//! decision) for the window (or for several, `persist_windows`), then gives the class back its
//! behaviour actions
//! and runs on for the rest of the scoring horizon, so the forks differ only by that choice. Every fork sees the
//! same clients, frames and network draws (each comes from its own seeded stream), so the
//! differences between forks measure the action rather than the luck of the window. A fork's
//! value is the objective's score (the success ratio by default) of the scored queries — those
//! emitted from the boundary to the end of the horizon, at every scheduler or at one — minus the
//! mean over the class's forks. The tail objective's p99 is the whole system's over the
//! horizon (latencies are kept per window, not per scheduler), under either scope.

use continuum_core::metrics::{Counts, LogHistogram, Objective};
use continuum_core::mitigation::Configuration;
use continuum_infer::agent::CfScope;
use continuum_sim::Simulation;
use rayon::prelude::*;

/// What a counterfactual evaluation needs besides the run.
#[derive(Clone, Copy)]
pub struct CfSettings<'a> {
    /// The actions.
    pub actions: &'a [Configuration],
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
    /// Factor applied to score differences.
    pub scale: f64,
    /// What a fork is scored by.
    pub objective: Objective,
    /// Apply the action at this scheduler only (`None`: at every scheduler).
    pub only: Option<usize>,
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
    // Per fork: counts per scheduler over the scored windows, and the latencies of them all.
    let forks: Vec<(Vec<Counts>, LogHistogram)> = st
        .actions
        .par_iter()
        .map(|conf| {
            let mut fork = sim.clone();
            for s in 0..schedulers {
                if st.only.is_none_or(|o| o == s) {
                    fork.set_class_configuration(s, class, conf);
                }
            }
            fork.run_until(end);
            for (s, b) in behaviour.iter().enumerate() {
                fork.set_class_configuration(s, class, &st.actions[b[class] as usize]);
            }
            fork.run_until(horizon + st.settle_ms);
            let m = fork.metrics();
            let mut latency = LogHistogram::default();
            if st.objective.needs_latency() {
                (window..last.min(m.windows())).for_each(|w| latency.add(m.window_latency(w)));
            }
            let counts = (0..schedulers)
                .map(|s| m.sum(|w, x, _| x == s && (window..last).contains(&w)))
                .collect();
            (counts, latency)
        })
        .collect();
    let score = |(per_sched, latency): &(Vec<Counts>, LogHistogram), s: Option<usize>| {
        let mut t = Counts::default();
        per_sched
            .iter()
            .enumerate()
            .filter(|(i, _)| s.is_none_or(|s| s == *i))
            .for_each(|(_, c)| t.add(c));
        (t.offered > 0).then(|| st.objective.score(&t, latency))
    };
    let values_for = |s: Option<usize>| -> Option<Vec<f32>> {
        let r: Vec<f64> = forks
            .iter()
            .map(|f| score(f, s))
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

#[cfg(test)]
mod tests {
    use super::*;
    use continuum_core::fixtures;
    use continuum_sim::{Scenario, SimConfig};
    use std::sync::Arc;

    fn values(objective: Objective, actions: &[Configuration]) -> Vec<f32> {
        values_at(objective, actions, None, CfScope::System)[0].clone()
    }

    fn values_at(
        objective: Objective,
        actions: &[Configuration],
        only: Option<usize>,
        scope: CfScope,
    ) -> Vec<Vec<f32>> {
        let sc: Arc<Scenario> = Arc::new(fixtures::scenario(
            fixtures::TOPOLOGY,
            &fixtures::workload(90.0, "{uniform_ms: 3}", 60.0, 0.0),
        ));
        let cfg = SimConfig {
            duration_s: 60.0,
            seed: 9,
            ..SimConfig::default()
        };
        let mut sim = Simulation::new(sc.clone(), cfg, actions[0].policy);
        sim.run_until(20_000.0);
        let behaviour = vec![vec![0u32]; sc.topology.schedulers.len()];
        let st = CfSettings {
            actions,
            window_ms: 5000.0,
            horizon_windows: 3,
            persist_windows: 3,
            settle_ms: 2000.0,
            scope,
            scale: 100.0,
            objective,
            only,
        };
        class_values(&sim, 4, 0, &behaviour, &st).expect("queries scored")
    }

    /// Applied at one scheduler, an action changes that scheduler's queries and not (beyond
    /// what they share through common workers) the others'.
    #[test]
    fn a_fork_may_apply_the_action_at_one_scheduler() {
        let actions: Vec<Configuration> = ["closest", "closest+discard@0.5"]
            .iter()
            .map(|n| Configuration::parse(n).unwrap())
            .collect();
        let all = values_at(Objective::SuccessRatio, &actions, None, CfScope::Scheduler);
        let one = values_at(
            Objective::SuccessRatio,
            &actions,
            Some(0),
            CfScope::Scheduler,
        );
        assert!(all.len() >= 2);
        // At scheduler 0 the discard hurts whether applied everywhere or there alone.
        assert!(one[0][1] < one[0][0], "{one:?}");
        assert!(all[0][1] < all[0][0], "{all:?}");
        // Elsewhere, applied at scheduler 0 alone it changes far less than applied everywhere.
        for s in 1..all.len() {
            assert!(
                (one[s][1] - one[s][0]).abs() < (all[s][1] - all[s][0]).abs(),
                "scheduler {s}: {one:?} vs {all:?}"
            );
        }
    }

    /// Identical actions get identical values (common random numbers), values are centred on
    /// the class's mean, and the tail objective at weight 0 is the success objective.
    #[test]
    fn forks_differ_only_by_the_action() {
        let actions: Vec<Configuration> = ["closest", "closest", "closest+discard@0.5"]
            .iter()
            .map(|n| Configuration::parse(n).unwrap())
            .collect();
        let success = values(Objective::SuccessRatio, &actions);
        assert_eq!(success[0], success[1]);
        assert!(success.iter().sum::<f32>().abs() < 1e-4, "{success:?}");
        // Discarding at half the deadline (60 ms) rejects queries `closest` answers in time.
        assert!(success[2] < success[0], "{success:?}");
        assert_eq!(values(Objective::Tail { weight: 0.0 }, &actions), success);
        // With a heavy tail weight, the shorter tail of discard@0.5 wins.
        let tail = values(Objective::Tail { weight: 10.0 }, &actions);
        assert!(tail[2] > tail[0], "{tail:?}");
    }
}
