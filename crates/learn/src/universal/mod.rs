//! The topology-free meta-policy (docs/model.md §9.9): one network that picks, per scheduler
//! and demand bucket, one of the strong rules from a state every network has
//! ([`SituationEncoder`]), trained across many generated networks so it can be pointed at a
//! topology it never saw. Training is a contextual bandit over counterfactual labels
//! ([`collect`]): rounds of episodes on freshly drawn networks ([`networks`]), each window
//! labelled by forking the run once per action, then a regression of every action's value on
//! the state ([`fit`]); the default rule and the margin the network must beat it by are chosen
//! on validation networks drawn apart ([`select`]). [`adapt`] continues from such a checkpoint
//! on one network, with a small budget.

pub mod collect;
pub mod fit;
pub mod networks;
pub mod select;

pub use networks::UniversalSettings;

use crate::agent::{fill_vars, weights_of};
use crate::episode::EpisodeSpec;
use anyhow::{Context, Result, bail};
use candle_nn::VarMap;
use collect::{Behaviour, Sample};
use continuum_core::policy::StreamClasses;
use continuum_core::profiles::Profiles;
use continuum_core::rng::{Purpose, SimRng, stream_rng};
use continuum_core::workload::{Lambda, Workload};
use continuum_infer::agent::{
    Checkpoint, CheckpointMeta, DqnConfig, Fallback, NetShape, SituationEncoder, StateKind,
};
use continuum_sim::Scenario;
use rand::Rng;
use rayon::prelude::*;
use select::{Candidate, Episode};
use std::time::Instant;

/// The fingerprint a topology-free checkpoint carries instead of a topology's.
pub const ANY_TOPOLOGY: &str = "any";

/// One line of a training or adaptation run, for the user and the log.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RoundLine {
    /// Round (0-based); adaptation is one round.
    pub round: usize,
    /// Episodes of the round.
    pub episodes: usize,
    /// Samples collected so far.
    pub samples: usize,
    /// Mean success ratio of the round's behaviour episodes.
    pub success_ratio: f64,
    /// Mean loss of the fit's last pass.
    pub loss: f32,
    /// Simulated queries so far (forks estimated).
    pub queries: f64,
    /// Seconds since the run began.
    pub wall_s: f64,
}

/// A trained or adapted topology-free checkpoint.
pub struct Universal {
    /// Its weights and metadata (default rule and margin chosen).
    pub checkpoint: Checkpoint,
    /// The network's variables (to save).
    pub vars: VarMap,
    /// One line per round.
    pub log: Vec<RoundLine>,
    /// The selection's candidates and scores.
    pub selected: select::Selected,
    /// Simulated queries of the whole run.
    pub queries: f64,
}

/// The network's shape for `cfg`.
pub fn shape(cfg: &DqnConfig) -> NetShape {
    NetShape {
        features: SituationEncoder::features_for(cfg),
        history: 1,
        conv_channels: cfg.conv_channels,
        conv_kernel: 1,
        hidden: cfg.hidden,
        actions: cfg.actions.len(),
        classes: 1,
    }
}

/// Checks that `cfg` describes a topology-free network.
pub fn check_config(cfg: &DqnConfig) -> Result<()> {
    if cfg.state != StateKind::Situation {
        bail!("a topology-free network needs `state: situation` in its config");
    }
    Ok(())
}

/// The metadata of a topology-free checkpoint of `cfg` trained on `trained_on`.
pub fn meta_for(cfg: &DqnConfig, trained_on: String) -> CheckpointMeta {
    let classes = StreamClasses::per_bucket(&cfg.buckets);
    CheckpointMeta {
        actions: cfg.actions.clone(),
        fallback: Fallback::single(vec![0; classes.len()]),
        classes,
        topology: trained_on,
        fingerprint: ANY_TOPOLOGY.into(),
        shape: shape(cfg),
        config: cfg.clone(),
        margin: 0.0,
    }
}

/// Trains across generated networks with `settings`, from `seed`; `progress` gets a line per
/// round and phase.
pub fn train(
    profiles: &Profiles,
    cfg: &DqnConfig,
    settings: &UniversalSettings,
    seed: u64,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Universal> {
    check_config(cfg)?;
    let workloads: Vec<Workload> = settings
        .workloads
        .iter()
        .map(|p| Workload::load(p, profiles).with_context(|| p.display().to_string()))
        .collect::<Result<_>>()?;
    let started = Instant::now();
    let meta = meta_for(
        cfg,
        format!(
            "any (trained over {} generated networks × {} rounds)",
            settings.networks, settings.rounds
        ),
    );
    let mut rng = stream_rng(seed, Purpose::Other, 0x756e_6976, 1);
    let mut samples: Vec<Sample> = Vec::new();
    let mut log = Vec::new();
    let mut queries = 0.0;
    let mut vars: Option<VarMap> = None;
    for round in 0..settings.rounds {
        let scenarios = draw_scenarios(profiles, &workloads, settings, &mut rng, round)?;
        let specs: Vec<EpisodeSpec> = scenarios
            .iter()
            .map(|_| EpisodeSpec::draw(cfg, cfg.horizon_s, &mut rng))
            .collect();
        let behaviour_ck = vars
            .as_ref()
            .map(|v| -> Result<Checkpoint> {
                let w = weights_of(v)?;
                Ok(select::checkpoint_with(
                    &meta,
                    &w,
                    Candidate {
                        default: 0,
                        margin: 0.0,
                    },
                ))
            })
            .transpose()?;
        let behaviour = Behaviour {
            checkpoint: behaviour_ck.as_ref(),
            default: 0,
            explore: settings.explore,
        };
        let got: Vec<collect::Collected> = scenarios
            .par_iter()
            .zip(&specs)
            .map(|(sc, spec)| collect::episode(sc, cfg, spec, &behaviour))
            .collect::<Result<_>>()?;
        let success = got.iter().map(|g| g.success_ratio).sum::<f64>() / got.len().max(1) as f64;
        for g in got {
            queries += g.queries;
            samples.extend(g.samples);
        }
        progress(&format!(
            "round {round}: {} samples, behaviour success {:.2} %, fitting",
            samples.len(),
            100.0 * success
        ));
        let fitted = fit::fit(&samples, meta.shape, cfg, settings.epochs, seed, None)?;
        log.push(RoundLine {
            round,
            episodes: specs.len(),
            samples: samples.len(),
            success_ratio: success,
            loss: fitted.loss,
            queries,
            wall_s: started.elapsed().as_secs_f64(),
        });
        vars = Some(fitted.vars);
    }
    let vars = vars.expect("at least one round");
    progress("choosing the default rule and the margin on the validation networks");
    let mut vrng = stream_rng(seed, Purpose::Other, 0x0076_616c, 0);
    let val = validation_scenarios(profiles, &workloads, settings, &mut vrng)?;
    let episodes = validation_episodes(&val, settings, &mut vrng);
    let weights = weights_of(&vars)?;
    let selected = select::select(&meta, &weights, &episodes, &settings.margins)?;
    queries += selected.queries;
    let checkpoint = select::checkpoint_with(&meta, &weights, selected.chosen);
    Ok(Universal {
        checkpoint,
        vars,
        log,
        selected,
        queries,
    })
}

/// Adapts the topology-free checkpoint `init` to `scenario` with `episodes` labelled episodes
/// (its behaviour: `init` itself, with `explore` of its decisions at random), a fit from its
/// weights, and the default rule and margin chosen again on `validation` episodes of this
/// network (seeds drawn from `seed`, never the evaluation's).
pub fn adapt(
    scenario: &Scenario,
    init: &Checkpoint,
    settings: &UniversalSettings,
    episodes: usize,
    validation: usize,
    seed: u64,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Universal> {
    let cfg = &init.meta.config;
    check_config(cfg)?;
    let started = Instant::now();
    let mut rng = stream_rng(seed, Purpose::Other, 0x6164_6170, 0);
    let specs: Vec<EpisodeSpec> = (0..episodes)
        .map(|_| EpisodeSpec::draw(cfg, cfg.horizon_s, &mut rng))
        .collect();
    let behaviour = Behaviour {
        checkpoint: Some(init),
        default: init.meta.fallback.tables[0].first().copied().unwrap_or(0),
        explore: settings.explore,
    };
    let got: Vec<collect::Collected> = specs
        .par_iter()
        .map(|spec| collect::episode(scenario, cfg, spec, &behaviour))
        .collect::<Result<_>>()?;
    let mut queries: f64 = got.iter().map(|g| g.queries).sum();
    let success = got.iter().map(|g| g.success_ratio).sum::<f64>() / got.len().max(1) as f64;
    let samples: Vec<Sample> = got.into_iter().flat_map(|g| g.samples).collect();
    progress(&format!(
        "adapting: {} samples from {episodes} episodes, fitting",
        samples.len()
    ));
    let (vm, _) = crate::agent::build(init.meta.shape, seed)?;
    fill_vars(&vm, &init.weights).map_err(anyhow::Error::msg)?;
    let epochs = settings.epochs.div_ceil(4).max(1);
    let fitted = fit::fit(&samples, init.meta.shape, cfg, epochs, seed, Some(&vm))?;
    let log = vec![RoundLine {
        round: 0,
        episodes,
        samples: samples.len(),
        success_ratio: success,
        loss: fitted.loss,
        queries,
        wall_s: started.elapsed().as_secs_f64(),
    }];
    progress("choosing the default rule and the margin on this network's validation episodes");
    let val: Vec<Episode> = settings
        .validation_lambdas
        .iter()
        .flat_map(|&l| (0..validation).map(move |_| l))
        .map(|l| Episode {
            scenario,
            spec: EpisodeSpec::new(Lambda::Constant(l), rng.random()),
        })
        .collect();
    let weights = weights_of(&fitted.vars)?;
    let meta = CheckpointMeta {
        topology: format!(
            "{} (adapted on {})",
            init.meta.topology, scenario.topology.name
        ),
        ..init.meta.clone()
    };
    let selected = select::select(&meta, &weights, &val, &settings.margins)?;
    queries += selected.queries;
    let checkpoint = select::checkpoint_with(&meta, &weights, selected.chosen);
    Ok(Universal {
        checkpoint,
        vars: fitted.vars,
        log,
        selected,
        queries,
    })
}

/// One training scenario per network of round `round`.
fn draw_scenarios(
    profiles: &Profiles,
    workloads: &[Workload],
    settings: &UniversalSettings,
    rng: &mut SimRng,
    round: usize,
) -> Result<Vec<Scenario>> {
    (0..settings.networks)
        .map(|i| {
            let o = settings.draw(rng, format!("train-{round}-{i}"));
            let w = &workloads[rng.random_range(0..workloads.len())];
            let topo = networks::topology(&o, profiles)?;
            Ok(Scenario::new(profiles.clone(), topo, w.clone()))
        })
        .collect()
}

/// The validation networks.
fn validation_scenarios(
    profiles: &Profiles,
    workloads: &[Workload],
    settings: &UniversalSettings,
    rng: &mut SimRng,
) -> Result<Vec<Scenario>> {
    (0..settings.validation_networks)
        .map(|i| {
            let o = settings.draw(rng, format!("validation-{i}"));
            let w = &workloads[rng.random_range(0..workloads.len())];
            Ok(Scenario::new(
                profiles.clone(),
                networks::topology(&o, profiles)?,
                w.clone(),
            ))
        })
        .collect()
}

/// Every validation network at every validation λ, a seed each.
fn validation_episodes<'a>(
    scenarios: &'a [Scenario],
    settings: &UniversalSettings,
    rng: &mut SimRng,
) -> Vec<Episode<'a>> {
    let mut out = Vec::new();
    for sc in scenarios {
        for &l in &settings.validation_lambdas {
            out.push(Episode {
                scenario: sc,
                spec: EpisodeSpec::new(Lambda::Constant(l), rng.random()),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests;
