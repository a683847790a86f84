//! Pull dispatch in the simulator (docs/model.md §15): new streams wait in a pending set until a
//! decision step, where every cluster's agent claims streams ([`continuum_core::pull::step`]);
//! a stream no agent takes within its patience is refused, as a stream with no feasible binding
//! is under push dispatch.

use super::Simulation;
use super::stream::Stream;
use continuum_core::dispatch::Placement;
use continuum_core::pull::{Pending, Puller, StepStats, step};
use continuum_core::rng::{Purpose, SimRng, stream_rng};
use continuum_core::workload::StreamParams;

/// How pull dispatch runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PullConfig {
    /// Time between decision steps, ms (the load publication period Δ by default).
    pub step_ms: f64,
    /// Decision steps a stream may wait unclaimed before it is refused (1: refused when no
    /// agent took it at the first step after its arrival).
    pub patience: u32,
}

impl PullConfig {
    /// Checks the settings; the error names the field.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.step_ms > 0.0 && self.step_ms.is_finite()) {
            return Err(format!(
                "pull step must be a finite number of ms > 0, got {}",
                self.step_ms
            ));
        }
        if self.patience == 0 {
            return Err("patience must be at least 1 decision step".into());
        }
        Ok(())
    }
}

/// Pull state of a run: the settings, the waiting streams and the conflict-resolution stream.
#[derive(Debug, Clone)]
pub(super) struct PullState {
    cfg: PullConfig,
    waiting: Vec<Waiting>,
    rng: SimRng,
    /// Step counters summed over the run.
    totals: PullTotals,
    /// When the next decision step is due, ms.
    next_ms: f64,
}

/// A stream waiting to be pulled.
#[derive(Debug, Clone)]
struct Waiting {
    stream: Stream,
    params: StreamParams,
    class: usize,
    waited: u32,
}

/// Counters of a pulled run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PullTotals {
    /// Decision steps taken.
    pub steps: u64,
    /// Rounds played (over every step).
    pub rounds: u64,
    /// Claims made.
    pub claims: u64,
    /// Claims that lost a conflict.
    pub conflicts_lost: u64,
    /// Streams bound by agents.
    pub bound: u64,
    /// Streams refused after their patience ran out.
    pub refused: u64,
}

/// What one decision step did, in the order of the pending set the puller saw.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PullStepOutcome {
    /// Per bound stream: its index in the step's pending set and its serial
    /// ([`Simulation::stream_outcome`]), or `None` when it will emit nothing.
    pub bound: Vec<(u32, Option<u32>)>,
    /// Indices (in the step's pending set) of the streams refused at this step.
    pub refused: Vec<u32>,
    /// Clusters each refused stream was eligible at when it was last offered.
    pub refused_at: Vec<Vec<u32>>,
    /// The step's counters.
    pub stats: StepStats,
}

impl Simulation {
    /// Switches the run to pull dispatch under `cfg` (before it starts): from now on new streams
    /// wait for [`Self::pull_step`] instead of being bound by their scheduler's policy.
    pub fn enable_pull(&mut self, cfg: PullConfig) -> Result<(), String> {
        cfg.validate()?;
        self.pull = Some(PullState {
            cfg,
            waiting: Vec::new(),
            rng: stream_rng(self.cfg.seed, Purpose::Other, 0x7075_6c6c, 0),
            totals: PullTotals::default(),
            next_ms: cfg.step_ms,
        });
        Ok(())
    }

    /// The pull settings, when the run pulls.
    pub fn pull_config(&self) -> Option<PullConfig> {
        self.pull.as_ref().map(|p| p.cfg)
    }

    /// Counters of the run's decision steps so far (zero when it does not pull).
    pub fn pull_totals(&self) -> PullTotals {
        self.pull.as_ref().map(|p| p.totals).unwrap_or_default()
    }

    /// Streams waiting to be pulled.
    pub fn waiting(&self) -> usize {
        self.pull.as_ref().map_or(0, |p| p.waiting.len())
    }

    pub(super) fn wait_for_pull(&mut self, stream: Stream, params: StreamParams, class: usize) {
        let p = self.pull.as_mut().expect("only a pulled run waits");
        p.waiting.push(Waiting {
            stream,
            params,
            class,
            waited: 0,
        });
    }

    /// One decision step now: `puller` claims among the waiting streams on the published load
    /// view; the streams claimed are bound, those that have waited `patience` steps are refused.
    /// The pending set the puller sees lists the waiting streams in arrival order.
    pub fn pull_step(&mut self, puller: &mut dyn Puller) -> PullStepOutcome {
        let Some(mut ps) = self.pull.take() else {
            return PullStepOutcome::default();
        };
        let sc = self.sc.clone();
        let pending: Vec<Pending> = ps
            .waiting
            .iter()
            .map(|w| Pending {
                demand: w.params.demand,
                reach: &sc.topology.schedulers[usize::from(w.stream.sched)].reach,
                sched: w.stream.sched,
                waited: w.waited,
            })
            .collect();
        let (assigned, stats) = step(&pending, &sc.fleet, &self.view, puller, &mut ps.rng);
        let mut out = PullStepOutcome {
            stats,
            ..Default::default()
        };
        let mut taken = vec![None; ps.waiting.len()];
        for (j, c) in assigned {
            taken[j as usize] = Some(c);
        }
        // Where each unclaimed stream could still go (for credit), before the bindings change
        // the view the next step sees.
        let mut scratch = Vec::new();
        let waiting = std::mem::take(&mut ps.waiting);
        for (j, (mut w, c)) in waiting.into_iter().zip(taken).enumerate() {
            match c {
                Some(c) => {
                    let placed = Placement::of(c, pending[j].reach);
                    let serial = self.bind_stream(
                        w.stream,
                        &placed,
                        w.params.demand.rate_qps,
                        w.params.demand.min_accuracy,
                        w.class,
                    );
                    out.bound.push((j as u32, serial));
                }
                None if w.waited + 1 >= ps.cfg.patience => {
                    continuum_core::feasibility::feasible(
                        &pending[j].demand,
                        pending[j].reach,
                        &sc.fleet,
                        &self.view,
                        &mut scratch,
                    );
                    let mut at: Vec<u32> = scratch.iter().map(|c| c.cluster).collect();
                    at.dedup();
                    out.refused.push(j as u32);
                    out.refused_at.push(at);
                    self.reject_stream(w.stream, w.params.demand.rate_qps);
                }
                None => {
                    w.waited += 1;
                    ps.waiting.push(w);
                }
            }
        }
        let t = &mut ps.totals;
        t.steps += 1;
        t.rounds += u64::from(stats.rounds);
        t.claims += u64::from(stats.claims);
        t.conflicts_lost += u64::from(stats.conflicts_lost);
        t.bound += out.bound.len() as u64;
        t.refused += out.refused.len() as u64;
        self.pull = Some(ps);
        out
    }

    /// Runs a pulled run up to `t_ms`, taking a decision step at every multiple of the step
    /// period (just after the load publication of the same instant, when the two coincide).
    /// `on_step` sees each step's outcome.
    pub fn run_pulled_until(
        &mut self,
        t_ms: f64,
        puller: &mut dyn Puller,
        on_step: &mut dyn FnMut(&Simulation, &PullStepOutcome),
    ) {
        loop {
            let next = self.pull.as_ref().expect("the run pulls").next_ms;
            // Events at the step's own instant (a publication) come first.
            let t = next + STEP_AFTER_MS;
            if t > t_ms {
                break;
            }
            self.run_until(t);
            let out = self.pull_step(puller);
            let p = self.pull.as_mut().expect("the run pulls");
            p.next_ms += p.cfg.step_ms;
            on_step(self, &out);
        }
        self.run_until(t_ms);
    }

    /// Runs a pulled run to the end: decision steps until every stream that arrived has been
    /// bound or refused (its patience past the horizon), then drains in-flight queries.
    pub fn finish_pulled(
        &mut self,
        puller: &mut dyn Puller,
        on_step: &mut dyn FnMut(&Simulation, &PullStepOutcome),
    ) {
        let cfg = self.pull_config().expect("the run pulls");
        let end = self.horizon_ms + cfg.step_ms * f64::from(cfg.patience + 1);
        self.run_pulled_until(end, puller, on_step);
        debug_assert_eq!(self.waiting(), 0, "every stream is bound or refused");
        self.finish();
    }

    /// Queries of bound stream `serial` settled so far and, of those, successes.
    pub fn stream_outcome(&self, serial: u32) -> (u32, u32) {
        self.facts
            .get(serial as usize)
            .map_or((0, 0), |f| (f.settled, f.success))
    }
}

/// How long after a step's instant its decisions are made, ms: after the events of that
/// instant (a load publication at the same time), before anything later.
const STEP_AFTER_MS: f64 = 1e-6;
