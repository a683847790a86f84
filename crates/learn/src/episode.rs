//! What a training or validation episode is: its client rate λ over time and its seed, drawn
//! from the configuration's range and profile. Dynamic episodes move λ inside the episode —
//! random steps or a sine with a random period and phase — so the agent sees load change as it
//! does under a diurnal workload (ASET's "episodes with dynamic client rates"). With a capacity
//! spread, each episode also draws how fast its workers really are against their profiles; with
//! a mix spread (ASET's protocol: each episode its own tasks' requirements), the mix of
//! application classes its clients come from.

use continuum_core::rng::{Purpose, SimRng, stream_rng};
use continuum_core::scenario::Scenario;
use continuum_core::workload::{Lambda, Workload};
use continuum_infer::agent::{DqnConfig, LambdaProfile};
use continuum_sim::{CapacityScale, SimConfig};
use rand::Rng;

/// Shortest and longest time between two steps of a stepped λ, s (assumption: load shifts
/// over minutes, several times per episode).
const STEP_S: [f64; 2] = [30.0, 120.0];
/// Shortest and longest period of a sine λ, s (assumption: from two minutes to twice the
/// default 300 s episode, so an episode sees a rise, a fall, or both).
const PERIOD_S: [f64; 2] = [120.0, 600.0];
/// Resolution at which a sine with a random phase is laid out as steps, s.
const SINE_STEP_S: f64 = 5.0;

/// One episode's workload: λ over time, the seed of every random stream, and the workers'
/// actual capacity against their profiles.
#[derive(Debug, Clone, PartialEq)]
pub struct EpisodeSpec {
    /// Client rate over time, clients/min/antenna.
    pub lambda: Lambda,
    /// Seed of the episode's simulation.
    pub seed: u64,
    /// Actual worker capacity against the profiles.
    pub capacity: CapacityScale,
    /// The episode's mix of application classes, as (seed, spread): every class's share is
    /// multiplied by its own factor drawn uniformly from `[1 − spread, 1 + spread]` from the
    /// seed ([`Self::scenario`]). `None`: the workload's mix.
    pub mix: Option<(u64, f64)>,
}

impl EpisodeSpec {
    /// An episode at constant or profiled `lambda` with `seed`, workers as profiled.
    pub fn new(lambda: Lambda, seed: u64) -> Self {
        Self {
            lambda,
            seed,
            capacity: CapacityScale::default(),
            mix: None,
        }
    }

    /// `base` with this episode's λ and mix of classes. A mix needs every class's share to be
    /// constant (checked when training starts, [`check_mix`]).
    pub fn scenario(&self, base: &Scenario) -> Scenario {
        let sc = base.clone().with_lambda_profile(self.lambda.clone());
        let Some((seed, spread)) = self.mix else {
            return sc;
        };
        let mut rng = stream_rng(seed, Purpose::Other, 0x6d_6978, 0);
        let w = &sc.workload;
        let apps = w
            .apps
            .iter()
            .map(|a| {
                let share = a.share * rng.random_range(1.0 - spread..=1.0 + spread);
                let mut a = a.clone();
                a.share = share;
                a.share_over_time = Lambda::Constant(share);
                a
            })
            .collect();
        let workload = Workload::new(w.lambda.clone(), w.jitter, apps);
        Scenario::new(sc.profiles, sc.topology, workload)
    }

    /// Draws an episode of `horizon_s` from `cfg`'s λ range and profile, and its capacity from
    /// `cfg`'s scale and spread (no draw without a spread, so the λ and seed sequence is the same
    /// as before spreads existed).
    pub fn draw(cfg: &DqnConfig, horizon_s: f64, rng: &mut SimRng) -> Self {
        let mut spec = Self::draw_in(cfg.lambda_range, cfg.lambda_profile, horizon_s, rng);
        spec.capacity = draw_capacity(cfg, rng);
        if cfg.mix_spread > 0.0 {
            spec.mix = Some((rng.random(), cfg.mix_spread));
        }
        spec
    }

    /// Draws an episode of `horizon_s` with λ in `[lo, hi]` under `profile`.
    pub fn draw_in(
        [lo, hi]: [f64; 2],
        profile: LambdaProfile,
        horizon_s: f64,
        rng: &mut SimRng,
    ) -> Self {
        let uniform = |rng: &mut SimRng| {
            if hi > lo {
                rng.random_range(lo..=hi)
            } else {
                lo
            }
        };
        let kind = match profile {
            LambdaProfile::Constant => 0,
            LambdaProfile::Dynamic if hi > lo => rng.random_range(0..3u32),
            LambdaProfile::Dynamic => 0,
        };
        let lambda = match kind {
            0 => Lambda::Constant(uniform(rng)),
            1 => {
                let mut steps = Vec::new();
                let mut t = 0.0;
                while t < horizon_s {
                    steps.push((t * 1000.0, uniform(rng)));
                    t += rng.random_range(STEP_S[0]..=STEP_S[1]);
                }
                Lambda::Step(steps)
            }
            _ => {
                let period = rng.random_range(PERIOD_S[0]..=PERIOD_S[1]);
                let phase = rng.random_range(0.0..std::f64::consts::TAU);
                let (mean, amp) = ((lo + hi) / 2.0, (hi - lo) / 2.0);
                let n = (horizon_s / SINE_STEP_S).ceil() as usize;
                Lambda::Step(
                    (0..n)
                        .map(|i| {
                            let t = i as f64 * SINE_STEP_S;
                            let x = std::f64::consts::TAU * (t + SINE_STEP_S / 2.0) / period;
                            (t * 1000.0, (mean + amp * (x + phase).sin()).clamp(lo, hi))
                        })
                        .collect(),
                )
            }
        };
        Self::new(lambda, rng.random())
    }

    /// Time-average of λ over `horizon_s`, clients/min/antenna.
    pub fn mean_lambda(&self, horizon_s: f64) -> f64 {
        self.lambda.mean_over(horizon_s * 1000.0)
    }

    /// The simulation settings of this episode under `cfg`: its horizon and windows, this
    /// episode's seed and worker capacity, `cfg`'s queue bound and load view, the rest at
    /// their defaults.
    pub fn sim_config(&self, cfg: &DqnConfig) -> SimConfig {
        SimConfig {
            duration_s: cfg.horizon_s,
            window_s: cfg.window_s,
            seed: self.seed,
            capacity: self.capacity,
            queue_bound: cfg.queue_bound,
            load_view: cfg.load_view,
            ..SimConfig::default()
        }
    }
}

/// Checks that `cfg`'s mix spread can apply to `workload`: the factors multiply constant shares
/// (a workload whose mix moves over time is refused, naming the option).
pub fn check_mix(cfg: &DqnConfig, workload: &Workload) -> Result<(), String> {
    if cfg.mix_spread > 0.0 && workload.shifting_mix() {
        return Err(format!(
            "mix_spread: {} draws each episode's mix of classes around the workload's shares, \
             but this workload's mix moves over time (a `share` given as a step or sine): use \
             a workload with constant shares, or mix_spread: 0",
            cfg.mix_spread
        ));
    }
    Ok(())
}

/// The capacity of one episode under `cfg`: `capacity_scale`, times a uniform draw from
/// `[1 − spread, 1 + spread]` when `capacity_spread` > 0 (the only case that uses `rng`).
pub fn draw_capacity(cfg: &DqnConfig, rng: &mut SimRng) -> CapacityScale {
    let spread = cfg.capacity_spread;
    let factor = if spread > 0.0 {
        1.0 + spread * rng.random_range(-1.0..=1.0)
    } else {
        1.0
    };
    CapacityScale::Uniform(cfg.capacity_scale * factor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use continuum_core::rng::{Purpose, stream_rng};

    #[test]
    fn dynamic_episodes_stay_in_range_and_vary() {
        let cfg = DqnConfig {
            lambda_range: [20.0, 100.0],
            ..DqnConfig::default()
        };
        let mut rng = stream_rng(3, Purpose::Other, 0, 0);
        let mut kinds = [0; 2];
        for _ in 0..60 {
            let e = EpisodeSpec::draw(&cfg, 300.0, &mut rng);
            for i in 0..300 {
                let l = e.lambda.at(f64::from(i) * 1000.0);
                assert!((20.0..=100.0).contains(&l), "{l}");
            }
            match e.lambda {
                Lambda::Constant(_) => kinds[0] += 1,
                _ => kinds[1] += 1,
            }
        }
        assert!(kinds[0] > 5 && kinds[1] > 20, "{kinds:?}");
        let fixed = DqnConfig {
            lambda_range: [60.0, 60.0],
            ..cfg
        };
        let e = EpisodeSpec::draw(&fixed, 300.0, &mut rng);
        assert_eq!(e.lambda, Lambda::Constant(60.0));
        assert_eq!(e.mean_lambda(300.0), 60.0);
        assert_eq!(e.capacity, CapacityScale::Uniform(1.0));
    }

    #[test]
    fn a_mix_spread_draws_each_episodes_mix_and_none_without() {
        let sc = continuum_core::fixtures::scenario(
            continuum_core::fixtures::TOPOLOGY,
            "lambda_per_min: 60\njitter: periodic\naccess_delay_ms: 2\napps:\n  - {name: a, share: 3, task: detect, rate_qps: 10, frame_kb: 10, uplink_mbps: 80, max_delay_ms: 100, min_accuracy: 0, duration_s: 30}\n  - {name: b, share: 1, task: detect, rate_qps: 5, frame_kb: 10, uplink_mbps: 80, max_delay_ms: 500, min_accuracy: 0, duration_s: 30}\n",
        );
        let cfg = DqnConfig {
            lambda_range: [20.0, 100.0],
            lambda_profile: LambdaProfile::Constant,
            mix_spread: 0.5,
            ..DqnConfig::default()
        };
        let mut rng = stream_rng(7, Purpose::Other, 0, 0);
        let mut ratios = Vec::new();
        for _ in 0..50 {
            let e = EpisodeSpec::draw(&cfg, 300.0, &mut rng);
            let Lambda::Constant(l) = e.lambda else {
                panic!("{:?}", e.lambda)
            };
            assert!((20.0..=100.0).contains(&l));
            let w = e.scenario(&sc).workload;
            assert_eq!(w.lambda, Lambda::Constant(l));
            // Each share within its factor range; the mix moves from episode to episode.
            assert!(
                (1.5..=4.5).contains(&w.apps[0].share),
                "{}",
                w.apps[0].share
            );
            assert!(
                (0.5..=1.5).contains(&w.apps[1].share),
                "{}",
                w.apps[1].share
            );
            ratios.push(w.apps[0].share / w.apps[1].share);
        }
        let (lo, hi) = ratios
            .iter()
            .fold((f64::MAX, 0.0f64), |(a, b), r| (a.min(*r), b.max(*r)));
        assert!(lo < 2.0 && hi > 4.5, "{lo} … {hi}");
        // The same draw gives the same mix; without a spread the workload is untouched.
        let e = EpisodeSpec::draw(&cfg, 300.0, &mut stream_rng(8, Purpose::Other, 0, 0));
        let again = EpisodeSpec::draw(&cfg, 300.0, &mut stream_rng(8, Purpose::Other, 0, 0));
        assert_eq!(e, again);
        let plain = EpisodeSpec::new(Lambda::Constant(60.0), 1)
            .scenario(&sc)
            .workload;
        assert_eq!(plain.apps[0].share, 3.0);
        assert!(check_mix(&cfg, &sc.workload).is_ok());
    }

    #[test]
    fn a_spread_draws_capacities_across_its_range_and_none_without() {
        let cfg = DqnConfig {
            capacity_spread: 0.5,
            ..DqnConfig::default()
        };
        let mut rng = stream_rng(5, Purpose::Other, 0, 0);
        let scales: Vec<f64> = (0..200)
            .map(
                |_| match EpisodeSpec::draw(&cfg, 300.0, &mut rng).capacity {
                    CapacityScale::Uniform(x) => x,
                    other => panic!("{other:?}"),
                },
            )
            .collect();
        assert!(scales.iter().all(|x| (0.5..=1.5).contains(x)));
        assert!(scales.iter().any(|x| *x < 0.6) && scales.iter().any(|x| *x > 1.4));
        // Without a spread the sequence of λ and seeds is unchanged by the capacity.
        let plain = DqnConfig::default();
        let (mut a, mut b) = (
            stream_rng(6, Purpose::Other, 0, 0),
            stream_rng(6, Purpose::Other, 0, 0),
        );
        let with = EpisodeSpec::draw(&plain, 300.0, &mut a);
        let without = EpisodeSpec::draw_in(plain.lambda_range, plain.lambda_profile, 300.0, &mut b);
        assert_eq!(with, without);
    }
}
