//! One run of the jobs simulator with the configuration chosen every interval: observe at the
//! interval's end, choose, run the next interval, earn eqs. 3–6's reward. The chooser is the
//! caller's (an actor's ε-greedy network, the greedy tuner, a fixed configuration).

use super::TunerSettings;
use super::actions::ActionSet;
use super::reward::reward;
use super::state::Encoder;
use anyhow::Result;
use continuum_jobs::sim::Stepper;
use continuum_jobs::{JobSpec, JobsWorkload, Nodes, Report, SimSettings};

/// The problem an episode runs in: nodes, workload, actions.
pub(crate) struct Problem<'a> {
    pub(crate) nodes: &'a Nodes,
    pub(crate) workload: &'a JobsWorkload,
    pub(crate) actions: &'a ActionSet,
    pub(crate) settings: &'a TunerSettings,
}

/// One time-step: the state the action was chosen in, the action and its reward.
#[derive(Debug, Clone)]
pub(crate) struct Step {
    pub(crate) state: Vec<f32>,
    pub(crate) action: usize,
    pub(crate) reward: f32,
}

/// A run's steps, its final state and its report.
pub(crate) struct Episode {
    pub(crate) steps: Vec<Step>,
    pub(crate) last_state: Vec<f32>,
    pub(crate) report: Report,
    /// Times each action was taken.
    pub(crate) counts: Vec<u64>,
}

/// Runs `jobs` under `sim`'s settings, the action chosen at the start of every interval by
/// `choose` from the state; keeps each step when `record`.
pub(crate) fn run(
    p: &Problem,
    jobs: &[JobSpec],
    sim: &SimSettings,
    record: bool,
    choose: &mut dyn FnMut(&[f32]) -> Result<usize>,
) -> Result<Episode> {
    let s = p.settings;
    let (first, m) = p.actions.get(0);
    let mut stepper = Stepper::new(p.nodes, p.workload, jobs, first, m, sim)?;
    let mut enc = Encoder::new(p.nodes, s.waiting, s.running, s.history);
    let mut state = enc.push(&stepper.observe(0.0, s.waiting, s.running));
    let (mut steps, mut counts) = (Vec::new(), vec![0u64; p.actions.len()]);
    let (mut t, mut max_run_before) = (0.0, 0.0);
    let mut jtl = Vec::new();
    loop {
        let a = choose(&state)?;
        counts[a] += 1;
        let (placement, mitigation) = p.actions.get(a);
        stepper.set_config(placement, mitigation);
        t += s.interval_s;
        let (done, going) = stepper.advance(t);
        let o = stepper.observe(t, s.waiting, s.running);
        jtl.clear();
        jtl.extend(done.iter().map(|c| c.latency_s));
        let r = reward(
            s.alpha,
            s.beta,
            &jtl,
            max_run_before,
            o.max_elapsed_s,
            o.max_waited_s,
        );
        max_run_before = o.max_elapsed_s;
        let next = enc.push(&o);
        if record {
            steps.push(Step {
                state: std::mem::replace(&mut state, next),
                action: a,
                reward: (r * s.reward_scale) as f32,
            });
        } else {
            state = next;
        }
        if !going {
            break;
        }
    }
    Ok(Episode {
        steps,
        last_state: state,
        report: stepper.report(),
        counts,
    })
}
