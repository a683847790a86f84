//! The synthetic setting of the reproduction: a bipartite cluster and a job-arrival trace drawn
//! from OGASched's stated ranges (its Table 2), from a seed.
//!
//! The paper drives its simulations with Alibaba cluster traces; they are not available offline
//! here, so everything below is drawn from distributions:
//!
//! - Resource types (K = 6): vCPU, memory (GB), GPU, TPU, NPU, FPGA. Instance capacities are
//!   uniform integers in the ranges of the authors' public prototype (`parameter.py`): vCPU
//!   1–128, memory 2–512, GPU 0–64, TPU 0–8, NPU 0–8, FPGA 0–4 (an instance may have none of
//!   an accelerator).
//! - **Contention level** ℓ: a job type's request of each resource is ℓ times a uniform draw
//!   from that resource's capacity range, a_l^k = ℓ · U(c_min^k, c_max^k), so that one job asks
//!   about ℓ average instances' worth. Default ℓ = 10, the paper's Table 2 (its Fig. 2 uses
//!   ℓ = 11). With ℓ ≥ 1 the per-link caps a_l^k rarely bind and the instances' capacities do;
//!   ℓ < 1 (a job asks less than one instance; the authors' prototype accepts ℓ only in (0, 1)
//!   and applies it to trace-driven requests) is reported as a variant.
//! - Links ([`Links`]): by default right-d-regular (the prototype's default mode), d = 2.5:
//!   every instance serves d distinct ports chosen uniformly, a fractional d mixing ⌊d⌋ and ⌈d⌉
//!   so that the mean is d (the paper's Table 3 settings have about 2–3 ports per instance).
//!   `random`: each instance serves a uniform number in 1..=|L| (mean (|L| + 1)/2: the
//!   prototype's random-channel mode).
//! - Gains: α_r^k uniform in [α_min, α_max]; the utility of each (instance, resource) is the
//!   one asked for (default `linear`, as in the prototype's default environment), or with
//!   `mixed` one of the four drawn uniformly. β_k uniform in
//!   [β_min, β_max].
//! - Arrivals: x_l(t) = 1 with probability p (the arrival probability), independently per port
//!   and slot.

use crate::alloc::{Gain, Problem, ProblemSpec, Utility};
use continuum_core::rng::{Purpose, SimRng, stream_rng};
use rand::Rng;
use rand::seq::index::sample;

/// Resource types: name and the range of instance capacities (the authors' prototype).
pub const RESOURCES: [(&str, u32, u32); 6] = [
    ("vcpu", 1, 128),
    ("mem_gb", 2, 512),
    ("gpu", 0, 64),
    ("tpu", 0, 8),
    ("npu", 0, 8),
    ("fpga", 0, 4),
];

/// One trace task's request of each resource, per [`RESOURCES`] entry: the range b_l^k is
/// drawn from under [`Requests::Trace`]. vCPU 0.5–12 (the trace's `plan_cpu` 50–1200), memory
/// 2–60 GB, GPU 0–1 (`plan_gpu` 0–100): centred on the trace's documented example task (6
/// vCPU, 29.3 GB, 0.5 GPU), the widths an assumption; TPU, NPU and FPGA, which the trace does
/// not have, 0–0.5 of a device (an assumption, like a fractional GPU).
pub const TRACE_TASK: [(f64, f64); 6] = [
    (0.5, 12.0),
    (2.0, 60.0),
    (0.0, 1.0),
    (0.0, 0.5),
    (0.0, 0.5),
    (0.0, 0.5),
];

/// Where a job type's base request b_l comes from (a_l = ℓ · b_l).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requests {
    /// A trace task's scale ([`TRACE_TASK`]).
    Trace,
    /// The instances' capacity range (the ablation).
    Capacity,
}

impl Requests {
    /// Parses `trace` or `capacity`; the error names `--requests`.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "trace" => Ok(Requests::Trace),
            "capacity" => Ok(Requests::Capacity),
            _ => Err(format!(
                "--requests: expected `trace` or `capacity`, got `{s}`"
            )),
        }
    }

    /// `trace` or `capacity`.
    pub fn name(&self) -> &'static str {
        match self {
            Requests::Trace => "trace",
            Requests::Capacity => "capacity",
        }
    }

    /// The range b_l^k of resource `k` is drawn from.
    fn range(&self, k: usize) -> (f64, f64) {
        match self {
            Requests::Trace => TRACE_TASK[k],
            Requests::Capacity => (f64::from(RESOURCES[k].1), f64::from(RESOURCES[k].2)),
        }
    }
}

/// Which utilities the instances use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UtilityChoice {
    /// The same one everywhere.
    All(Utility),
    /// One of the four per (instance, resource), uniformly.
    Mixed,
}

impl UtilityChoice {
    /// `mixed` or a utility's name.
    pub fn parse(s: &str) -> Option<Self> {
        if s == "mixed" {
            Some(UtilityChoice::Mixed)
        } else {
            Utility::parse(s).map(UtilityChoice::All)
        }
    }

    /// Its name.
    pub fn name(&self) -> &'static str {
        match self {
            UtilityChoice::All(u) => u.name(),
            UtilityChoice::Mixed => "mixed",
        }
    }
}

/// How instances are linked to ports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Links {
    /// Each instance serves a uniform number in 1..=|L| of ports (random channels).
    Random,
    /// Each instance serves ⌊d⌋ or ⌈d⌉ ports, mean d (right-d-regular), clamped to 1..=|L|.
    Regular(f64),
}

impl Links {
    /// Parses `random` or `regular:D`; the error names `--links`.
    pub fn parse(s: &str) -> Result<Self, String> {
        if s == "random" {
            return Ok(Links::Random);
        }
        s.strip_prefix("regular:")
            .and_then(|d| d.trim().parse::<f64>().ok())
            .map(Links::Regular)
            .ok_or_else(|| format!("--links: expected `random` or `regular:D`, got `{s}`"))
    }

    /// `random` or `regular:D`.
    pub fn name(&self) -> String {
        match self {
            Links::Random => "random".into(),
            Links::Regular(d) => format!("regular:{d}"),
        }
    }

    /// How many ports one instance serves, drawn from `rng`.
    fn degree(&self, ports: usize, rng: &mut SimRng) -> usize {
        match *self {
            Links::Random => rng.random_range(1..=ports),
            Links::Regular(d) => {
                let lo = d.floor();
                let n = lo as usize + usize::from(rng.random_bool((d - lo).clamp(0.0, 1.0)));
                n.clamp(1, ports)
            }
        }
    }
}

/// The parameters of the synthetic setting (defaults: the paper's Table 2).
#[derive(Debug, Clone, PartialEq)]
pub struct SyntheticConfig {
    /// |L|.
    pub ports: usize,
    /// |R|.
    pub instances: usize,
    /// T.
    pub slots: usize,
    /// Probability that a job of a type arrives in a slot.
    pub arrival_prob: f64,
    /// Contention level ℓ (see the module doc).
    pub contention: f64,
    /// Where the base requests come from.
    pub requests: Requests,
    /// How instances are linked to ports.
    pub links: Links,
    /// α range.
    pub alpha: (f64, f64),
    /// β range.
    pub beta: (f64, f64),
    /// Utilities.
    pub utility: UtilityChoice,
    /// Seed of every draw.
    pub seed: u64,
}

impl Default for SyntheticConfig {
    fn default() -> Self {
        SyntheticConfig {
            ports: 10,
            instances: 128,
            slots: 2000,
            arrival_prob: 0.7,
            // OGASched's Table 2.
            contention: 10.0,
            requests: Requests::Trace,
            links: Links::Regular(2.5),
            alpha: (1.0, 1.5),
            beta: (0.3, 0.5),
            // The authors' prototype's default environment (`run.py`) is linear everywhere.
            utility: UtilityChoice::All(Utility::Linear),
            seed: 1,
        }
    }
}

/// A drawn setting: the cluster and the demand of every slot.
#[derive(Debug, Clone)]
pub struct Instance {
    /// The bipartite model.
    pub problem: Problem,
    /// x(t) for t = 1..=T: `arrivals[t][l]` ∈ {0, 1}.
    pub arrivals: Vec<Vec<f64>>,
}

/// Sub-streams of the seed, so that e.g. the trace does not change with the number of ports'
/// links.
#[repr(u64)]
enum Draw {
    Capacity = 1,
    Request = 2,
    Links = 3,
    Gains = 4,
    Betas = 5,
    Arrivals = 6,
}

fn rng(seed: u64, what: Draw) -> SimRng {
    // A tag of its own keeps these streams apart from other users of Purpose::Other.
    stream_rng(seed, Purpose::Other, 0x0A5C_4ED0, what as u64)
}

/// Draws the setting of `cfg` (already validated).
pub fn draw(cfg: &SyntheticConfig) -> Instance {
    let k = RESOURCES.len();
    let mut cap_rng = rng(cfg.seed, Draw::Capacity);
    let capacities: Vec<Vec<f64>> = (0..cfg.instances)
        .map(|_| {
            RESOURCES
                .iter()
                .map(|&(_, lo, hi)| f64::from(cap_rng.random_range(lo..=hi)))
                .collect()
        })
        .collect();
    let mut req_rng = rng(cfg.seed, Draw::Request);
    let requests: Vec<Vec<f64>> = (0..cfg.ports)
        .map(|_| {
            (0..k)
                .map(|j| cfg.contention * uniform(&mut req_rng, cfg.requests.range(j)))
                .collect()
        })
        .collect();
    let mut link_rng = rng(cfg.seed, Draw::Links);
    let mut links = Vec::new();
    for r in 0..cfg.instances {
        let d = cfg.links.degree(cfg.ports, &mut link_rng);
        let mut ports = sample(&mut link_rng, cfg.ports, d).into_vec();
        ports.sort_unstable();
        links.extend(ports.into_iter().map(|l| (l, r)));
    }
    let mut gain_rng = rng(cfg.seed, Draw::Gains);
    let gains: Vec<Vec<Gain>> = (0..cfg.instances)
        .map(|_| {
            (0..k)
                .map(|_| {
                    let alpha = uniform(&mut gain_rng, cfg.alpha);
                    let u = match cfg.utility {
                        UtilityChoice::All(u) => u,
                        UtilityChoice::Mixed => Utility::ALL[gain_rng.random_range(0..4)],
                    };
                    Gain::new(u, alpha)
                })
                .collect()
        })
        .collect();
    let mut beta_rng = rng(cfg.seed, Draw::Betas);
    let betas: Vec<f64> = (0..k).map(|_| uniform(&mut beta_rng, cfg.beta)).collect();
    let problem = Problem::new(&ProblemSpec {
        requests,
        capacities,
        links,
        gains,
        betas,
    })
    .expect("drawn from validated ranges");
    let mut arr_rng = rng(cfg.seed, Draw::Arrivals);
    let arrivals = (0..cfg.slots)
        .map(|_| {
            (0..cfg.ports)
                .map(|_| f64::from(u8::from(arr_rng.random_bool(cfg.arrival_prob))))
                .collect()
        })
        .collect();
    Instance { problem, arrivals }
}

/// Uniform in [lo, hi] (lo when they are equal).
fn uniform(rng: &mut SimRng, (lo, hi): (f64, f64)) -> f64 {
    if hi > lo {
        rng.random_range(lo..=hi)
    } else {
        lo
    }
}

/// Checks `cfg`; the error names the option (`--arrival-prob: …`).
pub fn validate(cfg: &SyntheticConfig) -> Result<(), String> {
    if cfg.ports == 0 {
        return Err("--ports: expected at least 1".into());
    }
    if cfg.instances == 0 {
        return Err("--instances: expected at least 1".into());
    }
    if cfg.slots == 0 {
        return Err("--slots: expected at least 1".into());
    }
    if !(cfg.arrival_prob >= 0.0 && cfg.arrival_prob <= 1.0) {
        return Err(format!(
            "--arrival-prob: expected a probability in [0, 1], got {}",
            cfg.arrival_prob
        ));
    }
    if !(cfg.contention.is_finite() && cfg.contention > 0.0) {
        return Err(format!(
            "--contention: expected a finite value > 0, got {}",
            cfg.contention
        ));
    }
    if let Links::Regular(d) = cfg.links
        && !(d.is_finite() && d >= 1.0 && d <= cfg.ports as f64)
    {
        return Err(format!(
            "--links: expected a number of ports per instance in [1, {}], got {d}",
            cfg.ports
        ));
    }
    let (a0, a1) = cfg.alpha;
    if !(a0.is_finite() && a1.is_finite() && a0 > 0.0 && a0 <= a1) {
        return Err(format!(
            "--alpha: expected MIN,MAX with 0 < MIN ≤ MAX, got {a0},{a1}"
        ));
    }
    let (b0, b1) = cfg.beta;
    if !(b0.is_finite() && b1.is_finite() && b0 >= 0.0 && b0 <= b1) {
        return Err(format!(
            "--beta: expected MIN,MAX with 0 ≤ MIN ≤ MAX, got {b0},{b1}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_follow_the_stated_ranges_and_the_seed() {
        let cfg = SyntheticConfig {
            slots: 500,
            ..Default::default()
        };
        let a = draw(&cfg);
        let p = &a.problem;
        assert_eq!((p.ports(), p.instances(), p.resources()), (10, 128, 6));
        for r in 0..p.instances() {
            let n = p.instance_links(r).len();
            assert!((2..=3).contains(&n));
            for (k, &(_, lo, hi)) in RESOURCES.iter().enumerate() {
                let c = p.capacity(r, k);
                assert!(c >= f64::from(lo) && c <= f64::from(hi) && c.fract() == 0.0);
                let g = p.gain(r, k);
                assert!((1.0..=1.5).contains(&g.alpha));
            }
        }
        for l in 0..p.ports() {
            for (k, &(lo, hi)) in TRACE_TASK.iter().enumerate() {
                // ℓ times a draw from a trace task's range.
                let a = p.request(l, k) / cfg.contention;
                assert!(a >= lo - 1e-9 && a <= hi + 1e-9);
            }
        }
        // The ablation draws from the capacity range.
        let q = draw(&SyntheticConfig {
            requests: Requests::Capacity,
            ..cfg.clone()
        })
        .problem;
        for l in 0..q.ports() {
            for (k, &(_, lo, hi)) in RESOURCES.iter().enumerate() {
                let a = q.request(l, k) / cfg.contention;
                assert!(a >= f64::from(lo) - 1e-9 && a <= f64::from(hi) + 1e-9);
            }
        }
        assert_eq!(Requests::parse("trace"), Ok(Requests::Trace));
        assert!(Requests::parse("x").unwrap_err().starts_with("--requests"));
        for k in 0..6 {
            assert!((0.3..=0.5).contains(&p.beta(k)));
        }
        let rate = a.arrivals.iter().flatten().sum::<f64>() / 5000.0;
        assert!((rate - 0.7).abs() < 0.03, "arrival rate {rate}");
        // Same seed, same draw; another seed, another.
        let b = draw(&cfg);
        assert_eq!(a.arrivals, b.arrivals);
        assert_eq!(a.problem.links(), b.problem.links());
        let c = draw(&SyntheticConfig { seed: 2, ..cfg });
        assert_ne!(a.arrivals, c.arrivals);
    }

    #[test]
    fn regular_links_give_each_instance_floor_or_ceil_of_the_degree() {
        let cfg = SyntheticConfig {
            slots: 1,
            instances: 400,
            links: Links::Regular(2.5),
            ..Default::default()
        };
        let p = draw(&cfg).problem;
        let degrees: Vec<usize> = (0..400).map(|r| p.instance_links(r).len()).collect();
        assert!(degrees.iter().all(|&d| d == 2 || d == 3), "{degrees:?}");
        let mean = degrees.iter().sum::<usize>() as f64 / 400.0;
        assert!((mean - 2.5).abs() < 0.1, "mean degree {mean}");
        let bad = SyntheticConfig {
            links: Links::Regular(11.0),
            ..Default::default()
        };
        assert!(validate(&bad).unwrap_err().starts_with("--links"));
        assert_eq!(Links::parse("regular:2.5"), Ok(Links::Regular(2.5)));
        assert_eq!(Links::parse("random"), Ok(Links::Random));
        assert!(Links::parse("regular").unwrap_err().starts_with("--links"));
    }

    #[test]
    fn validation_names_the_option() {
        let bad = [
            (
                SyntheticConfig {
                    ports: 0,
                    ..Default::default()
                },
                "--ports",
            ),
            (
                SyntheticConfig {
                    slots: 0,
                    ..Default::default()
                },
                "--slots",
            ),
            (
                SyntheticConfig {
                    arrival_prob: 1.5,
                    ..Default::default()
                },
                "--arrival-prob",
            ),
            (
                SyntheticConfig {
                    contention: -1.0,
                    ..Default::default()
                },
                "--contention",
            ),
            (
                SyntheticConfig {
                    alpha: (1.5, 1.0),
                    ..Default::default()
                },
                "--alpha",
            ),
            (
                SyntheticConfig {
                    beta: (-0.1, 0.5),
                    ..Default::default()
                },
                "--beta",
            ),
        ];
        for (cfg, opt) in bad {
            assert!(validate(&cfg).unwrap_err().starts_with(opt));
        }
        assert!(validate(&SyntheticConfig::default()).is_ok());
    }
}
