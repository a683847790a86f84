//! Judging a trained tuner in the paper's own terms and in stricter ones, over held-out seeds:
//! per scenario (a mitigation, as each row of the paper's Tables 2–3 fixes it) the tuner
//! choosing among the scheduler's algorithms every interval against each algorithm fixed for
//! the whole run, on the same jobs; the paper's headline form (the mean JTL change against
//! every configuration of the set, "an average of 21.66 % reductions") beside the change
//! against the best configuration chosen in hindsight. Every run goes on until its last job
//! completes, so no configuration looks better by leaving jobs unfinished.

use super::episode::{self, Problem};
use anyhow::Result;
use continuum_infer::agent::argmax;
use continuum_jobs::{Mitigation, Report, SimSettings, run_jobs};
use rayon::prelude::*;
use serde::Serialize;

/// One configuration's runs over the seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// `PLACEMENT+MITIGATION`, or `EdgeTuner` (and `EdgeTuner (any mitigation)`).
    pub config: String,
    /// Mean JTL of each seed's run, s.
    pub jtl_s: Vec<f64>,
    /// Their mean, s.
    pub mean_s: f64,
    /// Their standard deviation, s.
    pub sd_s: f64,
    /// Mean over the seeds of the runs' p99 JTL, s.
    pub p99_s: f64,
    /// Mean over the seeds of the makespan, s.
    pub makespan_s: f64,
    /// For the tuner: how often it chose each action (name, share of time-steps).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub chosen: Vec<(String, f64)>,
}

/// One scenario: a mitigation, the tuner and every algorithm under it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scenario {
    /// The mitigation.
    pub mitigation: String,
    /// The tuner restricted to this mitigation's actions.
    pub tuned: Row,
    /// Each algorithm fixed.
    pub fixed: Vec<Row>,
    /// The paper's form: the mean over `fixed` of (tuned − fixed) / fixed, %.
    pub mean_change_pct: f64,
    /// Against the best of `fixed` (lowest mean JTL), %.
    pub vs_best_pct: f64,
    /// The best of `fixed`.
    pub best: String,
    /// Fixed configurations whose mean JTL the tuner's is below.
    pub beaten: usize,
}

/// A whole evaluation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evaluation {
    /// The held-out seeds.
    pub seeds: Vec<u64>,
    /// Arrivals per run, s.
    pub duration_s: f64,
    /// Per mitigation.
    pub scenarios: Vec<Scenario>,
    /// The tuner choosing any action (algorithm and mitigation).
    pub free: Row,
    /// The best fixed configuration of every scenario (lowest mean JTL).
    pub best_fixed: String,
    /// The free tuner against it, %.
    pub free_vs_best_pct: f64,
    /// The paper's headline form over all scenarios: the mean of every (tuned − fixed) / fixed, %.
    pub headline_pct: f64,
}

pub(crate) fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len().max(1) as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (m, var.sqrt())
}

fn row(config: String, reports: &[Report], chosen: Vec<(String, f64)>) -> Row {
    let jtl: Vec<f64> = reports.iter().map(|r| r.jtl.mean_s).collect();
    let (mean_s, sd_s) = mean_sd(&jtl);
    let n = reports.len().max(1) as f64;
    Row {
        config,
        jtl_s: jtl,
        mean_s,
        sd_s,
        p99_s: reports.iter().map(|r| r.jtl.p99_s).sum::<f64>() / n,
        makespan_s: reports.iter().filter_map(|r| r.makespan_s).sum::<f64>() / n,
        chosen,
    }
}

fn pct(a: f64, b: f64) -> f64 {
    if b > 0.0 { 100.0 * (a - b) / b } else { 0.0 }
}

/// The settings of a held-out run.
fn sim(seed: u64, duration_s: f64, interval_s: f64) -> SimSettings {
    SimSettings {
        seed,
        duration_s,
        drain_s: f64::INFINITY,
        window_s: interval_s,
        ..SimSettings::default()
    }
}

/// Runs the greedy tuner, restricted to `allowed` actions, on every seed.
fn tuned(
    p: &Problem,
    values: &(dyn Fn(&[f32]) -> Result<Vec<f32>> + Sync),
    allowed: &[usize],
    seeds: &[u64],
    duration_s: f64,
    name: String,
) -> Result<Row> {
    let runs: Vec<(Report, Vec<u64>)> = seeds
        .par_iter()
        .map(|&seed| {
            let jobs = p.workload.sample_jobs(seed, duration_s);
            let s = sim(seed, duration_s, p.settings.interval_s);
            let ep = episode::run(p, &jobs, &s, false, &mut |state| {
                let q = values(state)?;
                let sub: Vec<f32> = allowed.iter().map(|&a| q[a]).collect();
                Ok(allowed[argmax(&sub)])
            })?;
            Ok((ep.report, ep.counts))
        })
        .collect::<Result<_>>()?;
    let mut counts = vec![0u64; p.actions.len()];
    for (_, c) in &runs {
        for (a, k) in c.iter().enumerate() {
            counts[a] += k;
        }
    }
    let total = counts.iter().sum::<u64>().max(1) as f64;
    let mut chosen: Vec<(String, f64)> = counts
        .iter()
        .enumerate()
        .filter(|(_, k)| **k > 0)
        .map(|(a, k)| (p.actions.name(a), *k as f64 / total))
        .collect();
    chosen.sort_by(|a, b| b.1.total_cmp(&a.1));
    let reports: Vec<Report> = runs.into_iter().map(|r| r.0).collect();
    Ok(row(name, &reports, chosen))
}

/// Each algorithm fixed under `m`, on every seed.
fn fixed(p: &Problem, m: Mitigation, seeds: &[u64], duration_s: f64) -> Result<Vec<Row>> {
    p.actions
        .placements()
        .par_iter()
        .map(|placement| {
            let reports = seeds
                .iter()
                .map(|&seed| {
                    let jobs = p.workload.sample_jobs(seed, duration_s);
                    let s = sim(seed, duration_s, p.settings.interval_s);
                    Ok(run_jobs(p.nodes, p.workload, &jobs, placement, m, &s)?)
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(row(
                format!("{}+{}", placement.name(), m.name()),
                &reports,
                Vec::new(),
            ))
        })
        .collect()
}

/// Evaluates the tuner whose Q-values `values` gives on `seeds`, runs of `duration_s` of
/// arrivals, in every scenario of `p`'s mitigations.
pub(crate) fn evaluate(
    p: &Problem,
    values: &(dyn Fn(&[f32]) -> Result<Vec<f32>> + Sync),
    seeds: &[u64],
    duration_s: f64,
) -> Result<Evaluation> {
    let mut scenarios = Vec::new();
    let mut changes = Vec::new();
    let mut best_fixed: Option<Row> = None;
    for &m in p.actions.mitigations() {
        let allowed = p.actions.with_mitigation(m);
        let tuned = tuned(p, values, &allowed, seeds, duration_s, "EdgeTuner".into())?;
        let fixed = fixed(p, m, seeds, duration_s)?;
        let per: Vec<f64> = fixed.iter().map(|f| pct(tuned.mean_s, f.mean_s)).collect();
        changes.extend_from_slice(&per);
        let best = fixed
            .iter()
            .min_by(|a, b| a.mean_s.total_cmp(&b.mean_s))
            .cloned()
            .expect("at least one algorithm");
        if best_fixed.as_ref().is_none_or(|b| best.mean_s < b.mean_s) {
            best_fixed = Some(best.clone());
        }
        scenarios.push(Scenario {
            mitigation: m.name(),
            mean_change_pct: per.iter().sum::<f64>() / per.len().max(1) as f64,
            vs_best_pct: pct(tuned.mean_s, best.mean_s),
            best: best.config.clone(),
            beaten: fixed.iter().filter(|f| tuned.mean_s < f.mean_s).count(),
            tuned,
            fixed,
        });
    }
    let all: Vec<usize> = (0..p.actions.len()).collect();
    let free = tuned(
        p,
        values,
        &all,
        seeds,
        duration_s,
        "EdgeTuner (any mitigation)".into(),
    )?;
    let best = best_fixed.expect("at least one mitigation");
    Ok(Evaluation {
        seeds: seeds.to_vec(),
        duration_s,
        free_vs_best_pct: pct(free.mean_s, best.mean_s),
        best_fixed: best.config,
        free,
        headline_pct: changes.iter().sum::<f64>() / changes.len().max(1) as f64,
        scenarios,
    })
}
