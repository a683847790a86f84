//! Collecting the topology-free network's samples: one episode of one network, its
//! (scheduler, bucket) decisions made by the behaviour (the default rule, or the network fitted
//! so far) with a share drawn at random, and at every window after the warm-up one bucket's
//! counterfactual values (one fork per action, [`class_values`]) paired with the state of every
//! scheduler that bucket's streams came to. A sample is a contextual-bandit label: what each
//! rule would have changed, in pp of the scheduler's success ratio over the scoring horizon.

use crate::episode::EpisodeSpec;
use crate::train::{CF_SETTLE_MS, CfSettings, class_values};
use anyhow::{Context, Result};
use continuum_core::policy::StreamClasses;
use continuum_core::rng::{Purpose, stream_rng};
use continuum_infer::agent::{Agent, Checkpoint, DqnConfig, SituationEncoder};
use continuum_sim::{Scenario, Simulation};
use rand::Rng;
use std::path::Path;
use std::sync::Arc;

/// One label: a state and the value of every action in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The (scheduler, bucket) state.
    pub state: Vec<f32>,
    /// Value per action, pp (minus the mean over the actions).
    pub values: Vec<f32>,
}

/// What one collection episode gave.
#[derive(Debug, Clone, Default)]
pub struct Collected {
    /// Its labels.
    pub samples: Vec<Sample>,
    /// Simulated queries, the forks' included (estimated from the episode's own rate).
    pub queries: f64,
    /// Success ratio of the behaviour's episode.
    pub success_ratio: f64,
}

/// How the behaviour decides.
pub struct Behaviour<'a> {
    /// The network fitted so far (its checkpoint), or `None`: the default rule everywhere.
    pub checkpoint: Option<&'a Checkpoint>,
    /// Index of the default rule among the actions.
    pub default: usize,
    /// Share of decisions drawn at random.
    pub explore: f64,
}

/// Runs one episode of `base` under `spec` and labels it.
pub fn episode(
    base: &Scenario,
    cfg: &DqnConfig,
    spec: &EpisodeSpec,
    behaviour: &Behaviour,
) -> Result<Collected> {
    let actions = cfg.configurations();
    let classes = StreamClasses::per_bucket(&cfg.buckets);
    let sc = Arc::new(spec.scenario(base));
    let sim_cfg = spec.sim_config(cfg);
    let mut sim = Simulation::new(sc.clone(), sim_cfg, actions[behaviour.default].policy);
    sim.set_classes(Arc::new(classes));
    sim.observe(cfg.buckets.clone());
    let mut enc = SituationEncoder::new(&sc.topology, &sc.fleet, cfg);
    let names = sc.profiles.variant_names();
    let mut agent = behaviour
        .checkpoint
        .map(|ck| Agent::new(ck, Path::new("<training>"), &sc.topology, &sc.fleet, &names))
        .transpose()
        .context("the behaviour network")?;
    let (schedulers, buckets) = (enc.schedulers(), enc.buckets());
    let window_ms = cfg.window_s * 1000.0;
    let windows = (cfg.horizon_s / cfg.window_s).floor() as usize;
    let st = CfSettings {
        actions: &actions,
        window_ms,
        horizon_windows: cfg.cf_horizon_windows,
        persist_windows: cfg.cf_persist_windows,
        settle_ms: CF_SETTLE_MS,
        scope: cfg.cf_scope,
        scale: cfg.cf_scale,
        objective: cfg.objective,
        only: None,
    };
    let mut rng = stream_rng(spec.seed, Purpose::Other, 0x756e_6976, 0);
    let mut out = Collected::default();
    let mut labelled = 0usize;
    for w in 0..windows {
        let mut taken: Vec<Vec<u32>> = match agent.as_mut() {
            Some(a) => a
                .decide()
                .into_iter()
                .map(|r| r.into_iter().map(|x| x as u32).collect())
                .collect(),
            None => vec![vec![behaviour.default as u32; buckets]; schedulers],
        };
        let warm = w < cfg.warmup_windows;
        for row in &mut taken {
            for a in row.iter_mut() {
                if warm || rng.random::<f64>() < behaviour.explore {
                    *a = rng.random_range(0..actions.len()) as u32;
                }
            }
        }
        for (s, row) in taken.iter().enumerate() {
            for (c, &a) in row.iter().enumerate() {
                sim.set_class_configuration(s, c, &actions[a as usize]);
            }
        }
        if !warm && w + cfg.cf_horizon_windows <= windows {
            let active: Vec<usize> = (0..buckets)
                .filter(|&b| (0..schedulers).any(|s| enc.incoming(s, b) > 0.0))
                .collect();
            if !active.is_empty() {
                let c = active[labelled % active.len()];
                labelled += 1;
                if let Some(values) = class_values(&sim, w, c, &taken, &st) {
                    for (s, v) in values.into_iter().enumerate() {
                        if enc.incoming(s, c) > 0.0 && v.iter().all(|x| x.is_finite()) {
                            out.samples.push(Sample {
                                state: enc.state(s, c),
                                values: v,
                            });
                        }
                    }
                }
            }
        }
        sim.run_until((w + 1) as f64 * window_ms);
        let obs = sim
            .close_window()
            .context("an observed run closes its windows")?;
        enc.push(&obs);
        if let Some(a) = agent.as_mut() {
            a.observe(&obs);
        }
    }
    sim.finish();
    let queries = sim.stats().queries as f64;
    let fork_windows = cfg.cf_horizon_windows as f64 + CF_SETTLE_MS / window_ms;
    out.queries = queries
        * (1.0 + labelled as f64 * actions.len() as f64 * fork_windows / windows.max(1) as f64);
    out.success_ratio = sim.metrics().sum(|_, _, _| true).success_ratio();
    Ok(out)
}
