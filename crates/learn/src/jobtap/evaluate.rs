//! TapFinger against the rules in its own problem (docs/tapfinger.md §1): every method on the
//! same tasks of every case and seed, greedy agents, the total completion time, mean JCT and
//! makespan per run. Runs go in parallel; the result does not depend on the thread count.

use super::agents::{JobAgents, Variant};
use continuum_infer::tapfinger::{FastTapNet, Pick};
use continuum_jobs::ml::{MlReport, MlScheduler, MlSetting, rule, run_with};
use rayon::prelude::*;
use serde::Serialize;

/// A method compared.
#[derive(Clone)]
pub enum Method {
    /// A rule baseline of [`continuum_jobs::ml::RULES`].
    Rule(String),
    /// Trained agents: their label, network and variant.
    Learned(String, Box<FastTapNet>, Variant),
}

impl Method {
    /// Its label in reports.
    pub fn label(&self) -> &str {
        match self {
            Method::Rule(n) | Method::Learned(n, ..) => n,
        }
    }

    fn scheduler(&self) -> Box<dyn MlScheduler + Send> {
        match self {
            Method::Rule(n) => rule(n).expect("rules are checked when the methods are parsed"),
            Method::Learned(_, net, v) => {
                Box::new(JobAgents::new((**net).clone(), *v, Pick::Greedy, false))
            }
        }
    }
}

/// A setting compared on, with its label.
#[derive(Debug, Clone)]
pub struct Case {
    /// Its label (`3 clusters, λ 2`).
    pub label: String,
    /// The setting.
    pub setting: MlSetting,
}

/// One method on one case, over the seeds.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The case's label.
    pub case: String,
    /// The method's label.
    pub method: String,
    /// The seeds, in order.
    pub seeds: Vec<u64>,
    /// Each seed's report.
    pub reports: Vec<MlReport>,
}

impl Row {
    /// Each seed's total completion time.
    pub fn totals(&self) -> Vec<f64> {
        self.reports.iter().map(|r| r.total_completion).collect()
    }
}

/// Every method on every case and seed; rows case by case, methods in the order given.
pub fn evaluate(cases: &[Case], seeds: &[u64], methods: &[Method]) -> Vec<Row> {
    let jobs: Vec<(usize, usize, usize)> = (0..cases.len())
        .flat_map(|c| {
            (0..methods.len()).flat_map(move |m| (0..seeds.len()).map(move |s| (c, m, s)))
        })
        .collect();
    let reports: Vec<MlReport> = jobs
        .par_iter()
        .map(|&(c, m, s)| run_with(&cases[c].setting, seeds[s], methods[m].scheduler().as_mut()))
        .collect();
    let mut rows = Vec::new();
    for (c, case) in cases.iter().enumerate() {
        for (m, method) in methods.iter().enumerate() {
            let at = (c * methods.len() + m) * seeds.len();
            rows.push(Row {
                case: case.label.clone(),
                method: method.label().to_string(),
                seeds: seeds.to_vec(),
                reports: reports[at..at + seeds.len()].to_vec(),
            });
        }
    }
    rows
}

/// Mean and sample standard deviation.
pub fn mean_sd(v: &[f64]) -> (f64, f64) {
    crate::jobtuner::evaluate::mean_sd(v)
}

/// Per seed, the change of `row`'s total completion time against `base`'s, %.
pub fn change_pct(row: &Row, base: &Row) -> Vec<f64> {
    row.totals()
        .iter()
        .zip(base.totals())
        .map(|(a, b)| 100.0 * (a - b) / b.max(f64::MIN_POSITIVE))
        .collect()
}

/// Per case, the rule with the lowest mean total completion time (the verdict's baseline).
pub fn best_rules<'a>(rows: &'a [Row], rules: &[&str]) -> Vec<&'a Row> {
    let mut best: Vec<&Row> = Vec::new();
    for r in rows.iter().filter(|r| rules.contains(&r.method.as_str())) {
        let m = mean_sd(&r.totals()).0;
        match best.iter_mut().find(|b| b.case == r.case) {
            Some(b) if mean_sd(&b.totals()).0 > m => *b = r,
            Some(_) => {}
            None => best.push(r),
        }
    }
    best
}
