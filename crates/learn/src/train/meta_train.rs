//! Meta-training an initialisation of the meta-policy network that adapts to a new topology
//! fast (Reptile, [`crate::reptile`]): each meta-iteration draws `tasks` topologies from the
//! generator (antennas, fan-outs, link delays and compute per layer all drawn) and trains a copy
//! of the network on each for `task_budget_queries` from the current initialisation θ (in
//! parallel); θ moves towards the mean of the trained weights. The state must have a fixed
//! size on every topology (`state_workers` > 0) and the workload fixes the classes.

use super::{Progress, learn};
use crate::agent::{build, flat, set_flat};
use crate::reptile::{meta_train_step, step_size};
use anyhow::{Context, Result, bail};
use candle_nn::VarMap;
use continuum_core::config::Source;
use continuum_core::policy::StreamClasses;
use continuum_core::profiles::Profiles;
use continuum_core::rng::{Purpose, SimRng, mix64, stream_rng};
use continuum_core::topology::Topology;
use continuum_core::workload::Workload;
use continuum_infer::agent::{DqnConfig, NetShape};
use continuum_sim::Scenario;
use continuum_topogen::generate::{GenerateOptions, generate};
use rand::Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// The task distribution and the schedule of meta-training (defaults: assumptions, sized for
/// a 2-core machine).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MetaTrainSettings {
    /// Meta-iterations.
    pub meta_iterations: usize,
    /// Topologies per meta-iteration.
    pub tasks: usize,
    /// Simulated queries of each inner training (a tenth of config/dqn.yaml's budget).
    pub task_budget_queries: f64,
    /// Initial meta step size ε0 (falls linearly to 0).
    pub meta_step: f64,
    /// Antennas of a task, uniform in this range.
    pub antennas: [usize; 2],
    /// Antennas per central office, uniform in this range.
    pub antennas_per_co: [usize; 2],
    /// Central offices per regional DC, uniform in this range.
    pub cos_per_rdc: [usize; 2],
    /// Every layer's link delay is the generator's default times a factor uniform in this range.
    pub link_scale: [f64; 2],
    /// Every layer's cores and GPUs are the generator's defaults times a factor uniform in this
    /// range.
    pub compute_scale: [f64; 2],
    /// An inner training whose single episode would exceed `task_budget_queries` runs a
    /// shorter horizon instead (`meta-train --budget` sets it, so a small budget stays small).
    pub shorten_horizon: bool,
}

impl Default for MetaTrainSettings {
    fn default() -> Self {
        Self {
            meta_iterations: 8,
            tasks: 2,
            task_budget_queries: 3.5e8,
            meta_step: 1.0,
            antennas: [8, 64],
            antennas_per_co: [2, 6],
            cos_per_rdc: [1, 4],
            link_scale: [0.5, 2.0],
            compute_scale: [0.6, 1.5],
            shorten_horizon: false,
        }
    }
}

impl MetaTrainSettings {
    /// Checks every field, naming the first bad one.
    pub fn validate(&self) -> Result<()> {
        let bad = |f: &str, m: &str| bail!("meta-training: `{f}`: expected {m}");
        if self.meta_iterations == 0 || self.tasks == 0 {
            return bad("meta_iterations / tasks", "at least 1");
        }
        if !(self.task_budget_queries > 0.0 && self.task_budget_queries.is_finite()) {
            return bad("task_budget_queries", "a positive number");
        }
        if !(self.meta_step > 0.0 && self.meta_step <= 1.0) {
            return bad("meta_step", "a number in (0, 1]");
        }
        for (f, r) in [
            ("antennas", self.antennas),
            ("antennas_per_co", self.antennas_per_co),
            ("cos_per_rdc", self.cos_per_rdc),
        ] {
            if r[0] == 0 || r[0] > r[1] {
                return bad(f, "[low, high] with 1 <= low <= high");
            }
        }
        for (f, r) in [
            ("link_scale", self.link_scale),
            ("compute_scale", self.compute_scale),
        ] {
            if !(r[0] > 0.0 && r[0] <= r[1] && r[1].is_finite()) {
                return bad(f, "[low, high] with 0 < low <= high");
            }
        }
        Ok(())
    }

    /// The generator options of a task drawn with `rng`.
    pub fn task(&self, rng: &mut SimRng, name: String) -> GenerateOptions {
        let d = GenerateOptions::default();
        let link = rng.random_range(self.link_scale[0]..=self.link_scale[1]);
        let compute = rng.random_range(self.compute_scale[0]..=self.compute_scale[1]);
        GenerateOptions {
            name,
            antennas: rng.random_range(self.antennas[0]..=self.antennas[1]),
            antennas_per_co: rng.random_range(self.antennas_per_co[0]..=self.antennas_per_co[1]),
            cos_per_rdc: rng.random_range(self.cos_per_rdc[0]..=self.cos_per_rdc[1]),
            link_ms: d.link_ms.map(|x| x * link),
            cpu: d.cpu.map(|x| (x * compute).round().max(4.0)),
            gpu: d
                .gpu
                .map(|x| ((f64::from(x) * compute).round() as u32).max(1)),
            seed: rng.random(),
            ..d
        }
    }
}

/// One meta-iteration's log line.
#[derive(Debug, Clone, Serialize)]
pub struct MetaTrainLine {
    /// Meta-iteration (0-based).
    pub iteration: usize,
    /// The tasks' topologies (name: antennas).
    pub tasks: Vec<String>,
    /// Mean success ratio of the inner trainings' last episodes.
    pub success_ratio: f64,
    /// Seconds since meta-training began.
    pub wall_s: f64,
}

/// The initialisation θ between meta-iterations.
#[derive(Debug, Clone)]
pub struct Theta {
    /// Flat weights (as [`flat`] orders them).
    pub weights: Vec<f32>,
    /// The network's shape.
    pub shape: NetShape,
    /// The classes of its heads.
    pub classes: StreamClasses,
}

impl Theta {
    /// θ from a checkpoint's weights (in [`flat`]'s order), shape and classes.
    pub fn from_checkpoint(ck: &continuum_infer::agent::Checkpoint) -> Result<Self> {
        let mut weights = Vec::new();
        for (_, p) in ck.weights.iter() {
            weights.extend_from_slice(&p.data);
        }
        Ok(Self {
            weights,
            shape: ck.meta.shape,
            classes: ck.meta.classes.clone(),
        })
    }
}

/// One inner training: the trained weights and how well its last episode went.
#[derive(Debug, Clone)]
pub struct InnerRun {
    /// The trained weights (flat), their shape and classes.
    pub trained: Theta,
    /// Success ratio of its last episode.
    pub success_ratio: f64,
    /// The task (topology name: antennas).
    pub task: String,
}

/// The meta-trained initialisation.
pub struct MetaTrainOutput {
    /// Its weights.
    pub vars: VarMap,
    /// The network's shape.
    pub shape: NetShape,
    /// The classes of its heads.
    pub classes: StreamClasses,
    /// One line per meta-iteration.
    pub log: Vec<MetaTrainLine>,
}

/// Checks that `cfg` and `m` allow meta-training; the inner learner's settings.
pub fn inner_config(cfg: &DqnConfig, m: &MetaTrainSettings) -> Result<DqnConfig> {
    m.validate()?;
    if cfg.state_workers == 0 || cfg.identity {
        bail!(
            "meta-training needs a state of the same size on every topology: set `state_workers` \
             (e.g. 8) and leave `identity` off"
        );
    }
    // The inner loops run episodes only: no fallback tables or margin to budget for.
    Ok(DqnConfig {
        budget_queries: m.task_budget_queries,
        fallback_levels: 0,
        ..cfg.clone()
    })
}

/// Inner training `b` of meta-iteration `it`: a topology drawn from `seed`, `it` and `b`,
/// trained with `inner` from `theta` (the first iteration: from weights drawn from `seed`).
/// A unit of work on its own: it depends on nothing else of the iteration.
#[allow(clippy::too_many_arguments)]
pub fn inner_task(
    profiles: &Profiles,
    workload: &Workload,
    inner: &DqnConfig,
    m: &MetaTrainSettings,
    seed: u64,
    it: usize,
    b: usize,
    theta: Option<&Theta>,
) -> Result<InnerRun> {
    let init = match theta {
        Some(t) => {
            let (vars, _) = build(t.shape, 0)?;
            set_flat(&vars, &t.weights)?;
            Some(vars)
        }
        None => None,
    };
    let task_seed = mix64(seed ^ mix64(it as u64 + 1) ^ (b as u64 + 1));
    let mut rng = stream_rng(task_seed, Purpose::Other, 0x6d65_7461, 0);
    let name = format!("meta-task-{it}-{b}");
    let o = m.task(&mut rng, name.clone());
    let text = generate(&o);
    let topo = Topology::from_source(&Source::inline(&name, &text), profiles)
        .with_context(|| format!("generated task topology {name}"))?;
    let sc = Scenario::new(profiles.clone(), topo, workload.clone());
    let quiet: Progress = &|_| {};
    let mut fitted;
    let inner = if m.shorten_horizon {
        fitted = inner.clone();
        let classes = super::classes_for(&sc, &fitted).len();
        super::fit_horizon(&sc, &mut fitted, classes, m.task_budget_queries);
        &fitted
    } else {
        inner
    };
    let learnt = learn(&sc, inner, seed, init.as_ref(), quiet)?;
    Ok(InnerRun {
        trained: Theta {
            weights: flat(&learnt.vars)?,
            shape: learnt.shape,
            classes: learnt.classes.clone(),
        },
        success_ratio: learnt.logs.last().map_or(0.0, |x| x.success_ratio),
        task: format!("{name}: {} antennas", o.antennas),
    })
}

/// The outer step of meta-iteration `it`: θ moves towards the mean of the inner runs'
/// weights by the iteration's step size (the first iteration starts from weights drawn from
/// `seed`). Returns the new θ, the mean success ratio and the tasks' names.
pub fn outer_step(
    theta: Option<Theta>,
    runs: &[InnerRun],
    m: &MetaTrainSettings,
    seed: u64,
    it: usize,
) -> Result<(Theta, f64, Vec<String>)> {
    let first = runs
        .first()
        .context("a meta-iteration without inner runs")?;
    let mut theta = match theta {
        Some(t) => t,
        None => {
            let (vars, _) = build(first.trained.shape, seed)?;
            Theta {
                weights: flat(&vars)?,
                shape: first.trained.shape,
                classes: first.trained.classes.clone(),
            }
        }
    };
    let dirs: Vec<Vec<f32>> = runs
        .iter()
        .map(|r| {
            r.trained
                .weights
                .iter()
                .zip(&theta.weights)
                .map(|(a, t)| a - t)
                .collect()
        })
        .collect();
    let success = runs.iter().map(|r| r.success_ratio / m.tasks as f64).sum();
    meta_train_step(
        &mut theta.weights,
        &dirs,
        step_size(m.meta_step, it, m.meta_iterations),
    );
    Ok((
        theta,
        success,
        runs.iter().map(|r| r.task.clone()).collect(),
    ))
}

/// The network of θ (built from `seed`'s shape, weights set from θ).
pub fn theta_vars(theta: &Theta, seed: u64) -> Result<VarMap> {
    let (vars, _) = build(theta.shape, seed)?;
    set_flat(&vars, &theta.weights)?;
    Ok(vars)
}

/// Meta-trains the network of `cfg` over generated topologies with `profiles` and `workload`:
/// each meta-iteration's inner trainings in parallel ([`inner_task`]), then [`outer_step`].
pub fn meta_train(
    profiles: &Profiles,
    workload: &Workload,
    cfg: &DqnConfig,
    m: &MetaTrainSettings,
    seed: u64,
    progress: &(dyn Fn(&MetaTrainLine) + Sync),
) -> Result<MetaTrainOutput> {
    let inner = inner_config(cfg, m)?;
    let start = Instant::now();
    let mut theta: Option<Theta> = None;
    let mut log = Vec::with_capacity(m.meta_iterations);
    for it in 0..m.meta_iterations {
        let runs = (0..m.tasks)
            .into_par_iter()
            .map(|b| inner_task(profiles, workload, &inner, m, seed, it, b, theta.as_ref()))
            .collect::<Result<Vec<_>>>()?;
        let (next, success_ratio, tasks) = outer_step(theta.take(), &runs, m, seed, it)?;
        theta = Some(next);
        let line = MetaTrainLine {
            iteration: it,
            tasks,
            success_ratio,
            wall_s: start.elapsed().as_secs_f64(),
        };
        progress(&line);
        log.push(line);
    }
    let theta = theta.context("no meta-iteration ran")?;
    Ok(MetaTrainOutput {
        vars: theta_vars(&theta, seed)?,
        shape: theta.shape,
        classes: theta.classes,
        log,
    })
}
