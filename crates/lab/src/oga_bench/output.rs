//! The bench's report: a serialisable summary, its text table and its JSON.

use continuum_alloc::alloc::StepSize;
use continuum_alloc::oga_bench::synthetic::{Instance, RESOURCES};
use continuum_alloc::oga_bench::{BenchConfig, BenchResult, RegretPoint};
use serde::Serialize;
use std::fmt::Write;

/// OGASched's reported average-reward gains over each heuristic, % (the paper's abstract).
pub(crate) const PAPER_GAINS: [(&str, f64); 4] = [
    ("drf", 11.33),
    ("fairness", 7.75),
    ("binpacking", 13.89),
    ("spreading", 13.44),
];

/// The setting, echoed in the report.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Setting {
    /// Where the demand comes from.
    pub(crate) trace: String,
    /// |L|.
    pub(crate) ports: usize,
    /// |R|.
    pub(crate) instances: usize,
    /// The K resource types.
    pub(crate) resources: Vec<&'static str>,
    /// Links in the bipartite graph.
    pub(crate) links: usize,
    /// T.
    pub(crate) slots: usize,
    /// Arrival probability per port and slot.
    pub(crate) arrival_prob: f64,
    /// Contention level ℓ: a_l^k = ℓ · b_l^k.
    pub(crate) contention: f64,
    /// Where the base requests b_l^k come from: `trace` or `capacity`.
    pub(crate) requests: &'static str,
    /// How instances are linked to ports: `random` or `regular:D`.
    pub(crate) links_mode: String,
    /// α range.
    pub(crate) alpha: [f64; 2],
    /// β range.
    pub(crate) beta: [f64; 2],
    /// Utilities.
    pub(crate) utility: &'static str,
    /// OGA's η0.
    pub(crate) eta0: f64,
    /// OGA's decay per slot.
    pub(crate) decay: f64,
    /// Gradient steps of the hindsight comparator.
    pub(crate) hindsight_iterations: usize,
    /// The seed.
    pub(crate) seed: u64,
}

/// One allocator's figures.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct AllocatorSummary {
    /// Its name.
    pub(crate) name: &'static str,
    /// Average reward per slot over T.
    pub(crate) average_reward: f64,
    /// Its regret at T divided by T.
    pub(crate) regret_per_slot: f64,
}

/// OGA's gain over one heuristic.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct GainRow {
    /// The heuristic.
    pub(crate) baseline: &'static str,
    /// (OGA − baseline) / |baseline| of the average reward, % (`oga`: the paper's order, the
    /// allocation played before the slot's arrivals are seen).
    pub(crate) gain_pct: f64,
    /// The same for `oga-lookahead` (the step sees the slot's arrivals first), %.
    pub(crate) lookahead_gain_pct: f64,
    /// The paper's figure, %.
    pub(crate) paper_gain_pct: f64,
}

/// Average reward over time (1/t) Σ_{s ≤ t} q(s) of one allocator, sampled.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Series {
    /// The allocator.
    pub(crate) name: &'static str,
    /// (t, average reward up to t).
    pub(crate) points: Vec<(usize, f64)>,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct BenchReport {
    /// The setting.
    pub(crate) setting: Setting,
    /// Per allocator.
    pub(crate) allocators: Vec<AllocatorSummary>,
    /// OGA's gains.
    pub(crate) gains: Vec<GainRow>,
    /// Regret at each horizon.
    pub(crate) regret: Vec<RegretPoint>,
    /// Average reward over time (at most 200 points per allocator; every slot in the SVG).
    pub(crate) average_reward_over_time: Vec<Series>,
    /// Wall-clock time of the run, s.
    pub(crate) wall_s: f64,
    /// Threads used (results do not depend on it).
    pub(crate) threads: usize,
}

/// (1/t) Σ_{s ≤ t} q(s) for every t.
pub(crate) fn running_average(rewards: &[f64]) -> Vec<f64> {
    let mut sum = 0.0;
    rewards
        .iter()
        .enumerate()
        .map(|(i, q)| {
            sum += q;
            sum / (i + 1) as f64
        })
        .collect()
}

fn gain(oga: f64, base: f64) -> f64 {
    (oga - base) / base.abs() * 100.0
}

/// Assembles the report.
pub(crate) fn build(
    cfg: &BenchConfig,
    inst: &Instance,
    res: &BenchResult,
    wall_s: f64,
    threads: usize,
) -> BenchReport {
    let s = &cfg.synthetic;
    let (eta0, decay) = match cfg.step {
        StepSize::Geometric { eta0, decay } => (eta0, decay),
        StepSize::InvSqrt { eta0 } => (eta0, f64::NAN),
    };
    let setting = Setting {
        trace: "synthetic: drawn from the paper's stated ranges (the Alibaba traces are not \
                available offline)"
            .into(),
        ports: s.ports,
        instances: s.instances,
        resources: RESOURCES.iter().map(|r| r.0).collect(),
        links: inst.problem.links().len(),
        slots: s.slots,
        arrival_prob: s.arrival_prob,
        contention: s.contention,
        requests: s.requests.name(),
        links_mode: s.links.name(),
        alpha: [s.alpha.0, s.alpha.1],
        beta: [s.beta.0, s.beta.1],
        utility: s.utility.name(),
        eta0,
        decay,
        hindsight_iterations: cfg.hindsight_iterations,
        seed: s.seed,
    };
    let last = res.regret.last();
    let allocators: Vec<AllocatorSummary> = res
        .runs
        .iter()
        .map(|r| AllocatorSummary {
            name: r.name,
            average_reward: r.average(),
            regret_per_slot: last.map_or(f64::NAN, |p| p.regret[r.name] / p.t as f64),
        })
        .collect();
    let avg = |n: &str| {
        allocators
            .iter()
            .find(|a| a.name == n)
            .map_or(f64::NAN, |a| a.average_reward)
    };
    let gains = PAPER_GAINS
        .iter()
        .map(|&(b, paper)| GainRow {
            baseline: b,
            gain_pct: gain(avg("oga"), avg(b)),
            lookahead_gain_pct: gain(avg("oga-lookahead"), avg(b)),
            paper_gain_pct: paper,
        })
        .collect();
    let average_reward_over_time = res
        .runs
        .iter()
        .map(|r| {
            let avg = running_average(&r.rewards);
            let every = avg.len().div_ceil(200).max(1);
            Series {
                name: r.name,
                points: avg
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| (i + 1) % every == 0 || i + 1 == avg.len())
                    .map(|(i, v)| (i + 1, *v))
                    .collect(),
            }
        })
        .collect();
    BenchReport {
        setting,
        allocators,
        gains,
        regret: res.regret.clone(),
        average_reward_over_time,
        wall_s,
        threads,
    }
}

/// The report as a text table.
pub(crate) fn to_text_table(r: &BenchReport) -> String {
    let s = &r.setting;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "OGASched reproduction; trace {}\n|L| {}  |R| {}  K {}  links {} ({})  T {}  arrival p {}  contention {}  requests {}  \
         α [{}, {}]  β [{}, {}]  utility {}  η0 {}  decay {}  seed {}",
        s.trace,
        s.ports,
        s.instances,
        s.resources.len(),
        s.links,
        s.links_mode,
        s.slots,
        s.arrival_prob,
        s.contention,
        s.requests,
        s.alpha[0],
        s.alpha[1],
        s.beta[0],
        s.beta[1],
        s.utility,
        s.eta0,
        s.decay,
        s.seed
    );
    let _ = writeln!(o);
    o.push_str(&continuum_term::text_table::text_table(
        &["allocator", "avg reward", "regret(T)/T"],
        1,
        r.allocators.iter().map(|a| {
            vec![
                a.name.to_string(),
                format!("{:.3}", a.average_reward),
                format!("{:.3}", a.regret_per_slot),
            ]
        }),
    ));
    let _ = writeln!(o);
    let pct = |x: f64| format!("{x:.2}%");
    o.push_str(&continuum_term::text_table::text_table(
        &["OGA gain over", "oga", "oga-lookahead", "paper"],
        1,
        r.gains.iter().map(|g| {
            vec![
                g.baseline.to_string(),
                pct(g.gain_pct),
                pct(g.lookahead_gain_pct),
                pct(g.paper_gain_pct),
            ]
        }),
    ));
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "regret per slot against the best fixed allocation in hindsight ({} ascent steps at T, \
         then {} per horizon)",
        4 * s.hindsight_iterations,
        s.hindsight_iterations
    );
    let per_slot = |v: Option<&f64>, t: f64| format!("{:.3}", v.map_or(f64::NAN, |v| v / t));
    o.push_str(&continuum_term::text_table::text_table(
        &["t", "best fixed / t", "oga", "oga-lookahead"],
        0,
        r.regret.iter().map(|p| {
            let t = p.t as f64;
            vec![
                p.t.to_string(),
                format!("{:.3}", p.best_fixed / t),
                per_slot(p.regret.get("oga"), t),
                per_slot(p.regret.get("oga-lookahead"), t),
            ]
        }),
    ));
    let negative = r.allocators.iter().any(|a| a.regret_per_slot < 0.0)
        || r.regret.iter().any(|p| p.regret.values().any(|v| *v < 0.0));
    if negative {
        let _ = writeln!(
            o,
            "(a negative regret is no error: the allocator earned more than the best *fixed* \
             allocation, since it follows the demand slot by slot and a fixed one cannot)"
        );
    }
    let _ = writeln!(o);
    let _ = write!(o, "wall {:.2} s on {} threads", r.wall_s, r.threads);
    o
}

/// The report as JSON.
pub(crate) fn to_json(r: &BenchReport) -> String {
    continuum_core::config::versioned_json(r).expect("the report serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_average_by_hand() {
        assert_eq!(running_average(&[2.0, 4.0, 0.0]), vec![2.0, 3.0, 2.0]);
    }

    #[test]
    fn gains_are_relative_to_the_baseline() {
        assert!((gain(110.0, 100.0) - 10.0).abs() < 1e-12);
        assert!((gain(-90.0, -100.0) - 10.0).abs() < 1e-12);
    }
}
