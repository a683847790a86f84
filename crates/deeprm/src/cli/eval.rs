//! `continuum deeprm eval`: every scheduler at every load on the held-out seeds, as a table,
//! JSON, and figures: the paper's two (slowdown vs load, slowdown CDF at one load), the share of
//! jobs with a small slowdown vs load, and, at a single load, every objective.

use crate::EnvParams;
use crate::eval::{EvalFigures, Scheduler, eval_jobsets, evaluate};
use crate::{Heuristic, PgCheckpoint};
use anyhow::{Context, Result, bail};
use clap::Args;
use continuum_plot::{Axis, Emphasis, Figure, Format, Panel, Series};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Options of `deeprm eval`.
#[derive(Debug, Args)]
pub struct DeepRmEvalArgs {
    /// A checkpoint to measure, `name=path` (repeatable); `name@load=path` measures it at that
    /// load only, so checkpoints trained one per load form one row.
    #[arg(long)]
    pub agent: Vec<String>,
    /// Comma-separated offered loads (at most one job per timestep: just under 1.85 with the
    /// default environment).
    #[arg(long, default_value = "0.1,0.3,0.5,0.7,0.9,1.1,1.3,1.5,1.7")]
    pub loads: String,
    /// Comma-separated held-out seeds (never used in training).
    #[arg(long, default_value = "101,102,103,104,105")]
    pub seeds: String,
    /// Jobsets per seed.
    #[arg(long, default_value_t = 20)]
    pub jobsets: usize,
    /// Share of short jobs (default: the environment's).
    #[arg(long)]
    pub small_job_chance: Option<f64>,
    /// Visible job slots M (`num_nw`; default: the first agent's, else the environment's 5).
    /// The authors' experiment mains use 10. An agent trained with another M is refused.
    #[arg(long)]
    pub slots: Option<usize>,
    /// Agents take their most likely action (default: they sample, as the public code).
    #[arg(long)]
    pub greedy: bool,
    /// Also run `tetris-sjf` (the paper's Tetris★) with this knob in [0, 1] (1: Tetris, 0:
    /// SJF), or `auto`: at each load, the knob of TETRIS_SJF_KNOBS with the lowest mean
    /// slowdown on --jobsets jobsets of --tune-seed (choose one no evaluation uses).
    #[arg(long)]
    pub tetris_sjf_knob: Option<String>,
    /// Seed of the jobsets `--tetris-sjf-knob auto` tunes on.
    #[arg(long, default_value_t = 1)]
    pub tune_seed: u64,
    /// Load at which every job's slowdown is kept for the CDF.
    #[arg(long)]
    pub cdf_load: Option<f64>,
    /// Also write into this folder: `results.json`, `deeprm-load.svg` (slowdown vs load),
    /// `deeprm-share.svg` (share of jobs with slowdown ≤ 2 and ≤ 1.5 vs load),
    /// `deeprm-cdf.svg` (with --cdf-load) and, when one load is measured,
    /// `deeprm-objectives.svg` (every objective, relative to the best).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Former form of `--out`: the JSON file alone (accepted, with a warning).
    #[arg(long, hide = true)]
    pub json: Option<PathBuf>,
    /// Former form of `--out`: the SVGs' prefix (accepted, with a warning).
    #[arg(long, hide = true)]
    pub svg_prefix: Option<PathBuf>,
    /// Worker threads (default: one per core); results do not depend on it.
    #[arg(long)]
    pub threads: Option<usize>,
}

/// One measured cell: a scheduler at a load on one seed.
#[derive(Debug, Serialize)]
pub(crate) struct EvalRow {
    /// Scheduler name.
    pub scheduler: String,
    /// Offered load.
    pub load: f64,
    /// Held-out seed.
    pub seed: u64,
    /// What it achieved.
    pub figures: EvalFigures,
}

/// The knobs `--tetris-sjf-knob auto` tries. Alignment scores reach 2 × 10 × 10 = 200 and
/// 1 / duration at most 1, so the knobs that mix the two are small (assumption: this grid,
/// not a value from the paper, which does not print its knob).
pub(crate) const TETRIS_SJF_KNOBS: [f64; 12] = [
    0.0, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0,
];

/// What a row of an evaluation runs.
pub(crate) enum Kind {
    /// A heuristic.
    Rule(Heuristic),
    /// `tetris-sjf` with this knob, or tuned at each load (none).
    TetrisSjf(Option<f64>),
    /// A checkpoint, and whether it masks.
    Agent(Box<PgCheckpoint>, bool),
}

/// A scheduler of an evaluation: its row name, the one load it is measured at (all if none),
/// and what it runs.
pub(crate) type Who = (String, Option<f64>, Kind);

/// Every scheduler of an evaluation: the heuristics then the agents.
pub(crate) fn schedulers(a: &DeepRmEvalArgs) -> Result<Vec<Who>> {
    let mut out: Vec<Who> = Heuristic::ALL
        .iter()
        .map(|h| (h.name().to_string(), None, Kind::Rule(*h)))
        .collect();
    match a.tetris_sjf_knob.as_deref() {
        None => {}
        Some("auto") => out.push(("tetris-sjf".into(), None, Kind::TetrisSjf(None))),
        Some(k) => match format!("tetris-sjf:{k}").parse::<Heuristic>() {
            Ok(Heuristic::TetrisSjf { knob }) => {
                out.push(("tetris-sjf".into(), None, Kind::TetrisSjf(Some(knob))));
            }
            _ => bail!("--tetris-sjf-knob: expected a number in [0, 1] or `auto`, got `{k}`"),
        },
    }
    for spec in &a.agent {
        let (name, path) = spec.split_once('=').ok_or_else(|| {
            anyhow::anyhow!("--agent: expected name=path or name@load=path, got `{spec}`")
        })?;
        let (name, load) = match name.split_once('@') {
            Some((n, l)) => (
                n,
                Some(
                    l.parse::<f64>()
                        .map_err(|_| anyhow::anyhow!("--agent: `{l}` in `{spec}` is not a load"))?,
                ),
            ),
            None => (name, None),
        };
        let ck = PgCheckpoint::load(Path::new(path))?;
        let mask = ck.meta.config.variant.mask;
        out.push((name.to_string(), load, Kind::Agent(Box::new(ck), mask)));
    }
    Ok(out)
}

/// Measures `who` (a heuristic, or a checkpoint and whether it masks) at `env` on `seed`'s
/// held-out jobsets.
pub(crate) fn measure(
    env: crate::EnvParams,
    who: Result<Heuristic, (&PgCheckpoint, bool)>,
    name: &str,
    seed: u64,
    jobsets: usize,
    greedy: bool,
) -> Result<(EvalFigures, Vec<f64>)> {
    let sets = eval_jobsets(&env, seed, jobsets);
    Ok(match who {
        Ok(h) => evaluate(env, &sets, Scheduler::Heuristic(h), seed),
        Err((ck, mask)) => {
            if ck.meta.config.env.input_len() != env.input_len() {
                bail!("agent `{name}`: trained on another environment size");
            }
            let (_, net) = ck.network()?;
            let snap = net.snapshot()?;
            evaluate(env, &sets, Scheduler::Agent(&snap, mask, greedy), seed)
        }
    })
}

/// The knob of [`TETRIS_SJF_KNOBS`] with the lowest mean slowdown on `jobsets` jobsets of
/// `seed` at `env` (ties: the first).
fn tune_knob(env: crate::EnvParams, seed: u64, jobsets: usize) -> Result<f64> {
    let mut best = (f64::INFINITY, TETRIS_SJF_KNOBS[0]);
    for knob in TETRIS_SJF_KNOBS {
        let h = Heuristic::TetrisSjf { knob };
        let (f, _) = measure(env, Ok(h), "tetris-sjf", seed, jobsets, false)?;
        if f.mean_slowdown < best.0 {
            best = (f.mean_slowdown, knob);
        }
    }
    Ok(best.1)
}

/// The JSON an evaluation writes.
#[derive(Debug, Serialize)]
struct EvalReport {
    /// Visible job slots M.
    slots: usize,
    loads: Vec<f64>,
    seeds: Vec<u64>,
    jobsets_per_seed: usize,
    greedy: bool,
    rows: Vec<EvalRow>,
    /// `tetris-sjf`'s knob at each load (tuned or given), as (load, knob).
    tetris_sjf_knobs: Vec<(f64, f64)>,
    /// Seed of the jobsets the knob was tuned on.
    tune_seed: Option<u64>,
    cdf_load: Option<f64>,
    /// Scheduler → every finished job's slowdown at `cdf_load`, pooled over the seeds.
    cdf: BTreeMap<String, Vec<f64>>,
}

fn list<T: std::str::FromStr>(flag: &str, s: &str) -> Result<Vec<T>> {
    s.split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(|x| {
            x.parse::<T>()
                .map_err(|_| anyhow::anyhow!("{flag}: `{x}` is not a number"))
        })
        .collect()
}

/// Runs `deeprm eval`.
/// Where `deeprm eval` writes its JSON and its SVGs' prefix: into `--out`, or where the former
/// `--json` / `--svg-prefix` say (each with a warning). The folders are checked before the run.
fn outputs(a: &DeepRmEvalArgs) -> Result<(Option<PathBuf>, Option<PathBuf>)> {
    let mut json = None;
    let mut svg = None;
    if let Some(dir) = &a.out {
        continuum_core::config::writable_dir(dir).map_err(anyhow::Error::msg)?;
        json = Some(dir.join("results.json"));
        svg = Some(dir.join("deeprm"));
    }
    for (flag, path, slot) in [
        ("--json", &a.json, &mut json),
        ("--svg-prefix", &a.svg_prefix, &mut svg),
    ] {
        if let Some(p) = path {
            eprintln!(
                "warning: {flag} {}: the former form of --out, still accepted; --out <folder> \
                 writes results.json and the deeprm-*.svg plots into the folder",
                p.display()
            );
            if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
                continuum_core::config::writable_dir(dir).map_err(anyhow::Error::msg)?;
            }
            *slot = Some(p.clone());
        }
    }
    Ok((json, svg))
}

pub(crate) fn eval_cmd(a: &DeepRmEvalArgs) -> Result<()> {
    let (json_out, svg_out) = outputs(a)?;
    let loads: Vec<f64> = list("--loads", &a.loads)?;
    let seeds: Vec<u64> = list("--seeds", &a.seeds)?;
    if loads.is_empty() || seeds.is_empty() || a.jobsets == 0 {
        bail!("--loads, --seeds and --jobsets must not be empty");
    }
    let who = schedulers(a)?;
    let mut base = who
        .iter()
        .find_map(|(_, _, w)| match w {
            Kind::Agent(ck, _) => Some(ck.meta.config.env),
            _ => None,
        })
        .unwrap_or_default();
    if let Some(s) = a.small_job_chance {
        base.small_job_chance = s;
    }
    if let Some(m) = a.slots {
        base.num_nw = m;
        base.validate()
            .map_err(|e| anyhow::anyhow!("--slots: {m} is not a valid M ({e})"))?;
    }
    let mut rows = Vec::new();
    let mut cdf = BTreeMap::new();
    let mut knobs = Vec::new();
    for &load in &loads {
        let rate = base.rate_for_load(load);
        if !(load > 0.0 && rate <= 1.0) {
            bail!("--loads: {load} cannot be offered (at most one job per timestep)");
        }
        let env = EnvParams {
            new_job_rate: rate,
            ..base
        };
        env.validate().map_err(anyhow::Error::msg)?;
        for (name, only, w) in &who {
            if only.is_some_and(|o| (o - load).abs() > 1e-9) {
                continue;
            }
            let run = match w {
                Kind::Rule(h) => Ok(*h),
                Kind::TetrisSjf(k) => {
                    let knob = match k {
                        Some(k) => *k,
                        None => tune_knob(env, a.tune_seed, a.jobsets)?,
                    };
                    eprintln!("tetris-sjf at load {load:.2}: knob {knob}");
                    knobs.push((load, knob));
                    Ok(Heuristic::TetrisSjf { knob })
                }
                Kind::Agent(ck, mask) => Err((&**ck, *mask)),
            };
            for &seed in &seeds {
                let (f, slow) = measure(env, run, name, seed, a.jobsets, a.greedy)?;
                if a.cdf_load.is_some_and(|c| (c - load).abs() < 1e-9) {
                    cdf.entry(name.clone())
                        .or_insert_with(Vec::new)
                        .extend(slow);
                }
                rows.push(EvalRow {
                    scheduler: name.clone(),
                    load,
                    seed,
                    figures: f,
                });
            }
        }
    }
    let mut names: Vec<String> = Vec::new();
    for (n, _, _) in &who {
        if !names.contains(n) {
            names.push(n.clone());
        }
    }
    print_table(&rows, &names, &loads)?;
    if let Some(prefix) = &svg_out {
        plots(prefix, &rows, &names, &loads, &cdf, a.cdf_load)?;
    }
    if let Some(path) = &json_out {
        let report = EvalReport {
            slots: base.num_nw,
            loads,
            seeds,
            jobsets_per_seed: a.jobsets,
            greedy: a.greedy,
            rows,
            tune_seed: (a.tetris_sjf_knob.as_deref() == Some("auto")).then_some(a.tune_seed),
            tetris_sjf_knobs: knobs,
            cdf_load: a.cdf_load,
            cdf,
        };
        std::fs::write(path, continuum_core::config::versioned_json(&report)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len().max(1) as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (m, var.sqrt())
}

fn cell(rows: &[EvalRow], name: &str, load: f64) -> Vec<f64> {
    cell_of(rows, name, load, |f| f.mean_slowdown)
}

fn cell_of(rows: &[EvalRow], name: &str, load: f64, f: impl Fn(&EvalFigures) -> f64) -> Vec<f64> {
    rows.iter()
        .filter(|r| r.scheduler == name && r.load == load)
        .map(|r| f(&r.figures))
        .collect()
}

/// The mean slowdown ± its standard deviation over seeds, a row per scheduler and a column per
/// load, laid out by `comfy-table` (borderless, columns two spaces apart, the same text
/// whatever the scheduler names' lengths and the terminal's width).
fn slowdown_table(rows: &[EvalRow], names: &[String], loads: &[f64]) -> String {
    let mut header = vec!["mean slowdown".to_string()];
    header.extend(loads.iter().map(|l| format!("load {l:.2}")));
    let mut t = continuum_term::text_table::new_table(&header);
    for n in names {
        let mut cells = vec![n.clone()];
        cells.extend(loads.iter().map(|&l| {
            let v = cell(rows, n, l);
            if v.is_empty() {
                "—".to_string()
            } else {
                let (m, s) = mean_sd(&v);
                format!("{m:.2} ± {s:.2}")
            }
        }));
        t.add_row(cells);
    }
    continuum_term::text_table::render(&mut t, 0, &[0])
}

fn print_table(rows: &[EvalRow], names: &[String], loads: &[f64]) -> std::io::Result<()> {
    let t = slowdown_table(rows, names, loads);
    let mut out = std::io::stdout().lock();
    std::io::Write::write_all(&mut out, t.as_bytes())?;
    std::io::Write::flush(&mut out)
}

fn plots(
    prefix: &std::path::Path,
    rows: &[EvalRow],
    names: &[String],
    loads: &[f64],
    cdf: &BTreeMap<String, Vec<f64>>,
    cdf_load: Option<f64>,
) -> Result<()> {
    let with = |suffix: &str| {
        let mut p = prefix.as_os_str().to_owned();
        p.push(suffix);
        std::path::PathBuf::from(p)
    };
    let emph = |n: &str| {
        if Heuristic::ALL.iter().any(|h| h.name() == n) || n == "tetris-sjf" {
            Emphasis::Normal
        } else {
            Emphasis::Bold
        }
    };
    let by_load = |f: &dyn Fn(&EvalFigures) -> f64| -> Vec<Series> {
        names
            .iter()
            .map(|n| {
                let pts = loads
                    .iter()
                    .filter(|&&l| !cell(rows, n, l).is_empty())
                    .map(|&l| (l * 100.0, mean_sd(&cell_of(rows, n, l, f)).0))
                    .collect();
                Series::new(n.clone(), pts, emph(n))
            })
            .collect()
    };
    let fig = Figure {
        title: "Average job slowdown vs cluster load (held-out jobsets)".into(),
        x: Axis::new("offered load (%)", Format::Number),
        panels: vec![Panel {
            y: Axis::new("average slowdown", Format::Number),
            series: by_load(&|f| f.mean_slowdown),
        }],
    };
    continuum_plot::line_chart(&with("-load.svg"), &fig).map_err(anyhow::Error::msg)?;
    let fig = Figure {
        title: "Jobs meeting a slowdown target vs cluster load (held-out jobsets)".into(),
        x: Axis::new("offered load (%)", Format::Number),
        panels: vec![
            Panel {
                y: Axis::new("jobs with slowdown ≤ 2", Format::Percent),
                series: by_load(&|f| f.share_slowdown_le2),
            },
            Panel {
                y: Axis::new("jobs with slowdown ≤ 1.5", Format::Percent),
                series: by_load(&|f| f.share_slowdown_le1_5),
            },
        ],
    };
    continuum_plot::line_chart(&with("-share.svg"), &fig).map_err(anyhow::Error::msg)?;
    if let [load] = loads {
        objectives_chart(&with("-objectives.svg"), rows, names, *load, &emph)?;
    }
    if let Some(l) = cdf_load {
        let series = names
            .iter()
            .filter_map(|n| cdf.get(n).map(|v| (n, v)))
            .map(|(n, v)| {
                let mut s = v.clone();
                s.sort_by(f64::total_cmp);
                let k = s.len().max(1) as f64;
                let pts = s
                    .iter()
                    .enumerate()
                    .map(|(i, x)| (*x, (i + 1) as f64 / k))
                    .collect();
                Series::new(n.clone(), pts, emph(n))
            })
            .collect();
        let fig = Figure {
            title: format!("Job slowdown CDF at load {:.0} %", l * 100.0),
            x: Axis::new("job slowdown", Format::Number),
            panels: vec![Panel {
                y: Axis::new("share of jobs", Format::Percent),
                series,
            }],
        };
        continuum_plot::line_chart(&with("-cdf.svg"), &fig).map_err(anyhow::Error::msg)?;
    }
    Ok(())
}

/// Every scheduler on every objective at `load`: its mean over the seeds relative to the best
/// scheduler's on that objective (1 = the best, 1.2 = 20 % worse; for utilisation, where more
/// is better, the best's over its own).
fn objectives_chart(
    path: &Path,
    rows: &[EvalRow],
    names: &[String],
    load: f64,
    emph: &dyn Fn(&str) -> Emphasis,
) -> Result<()> {
    type Figure1 = fn(&EvalFigures) -> f64;
    let objectives: [(&str, Figure1, bool); 4] = [
        ("mean slowdown", |f| f.mean_slowdown, false),
        ("mean completion", |f| f.mean_completion, false),
        ("utilisation", |f| f.utilisation, true),
        ("makespan", |f| f.makespan, false),
    ];
    let mean = |n: &str, f: Figure1| mean_sd(&cell_of(rows, n, load, f)).0;
    let series = names
        .iter()
        .map(|n| {
            let pts = objectives
                .iter()
                .enumerate()
                .map(|(k, &(_, f, more_is_better))| {
                    let all = names.iter().map(|m| mean(m, f));
                    let (v, best) = if more_is_better {
                        (1.0 / mean(n, f), 1.0 / all.fold(f64::MIN, f64::max))
                    } else {
                        (mean(n, f), all.fold(f64::MAX, f64::min))
                    };
                    (k as f64, v / best)
                })
                .collect();
            Series::new(n.clone(), pts, emph(n))
        })
        .collect();
    let fig = Figure {
        title: format!(
            "Every scheduler on every objective at load {:.0} % (held-out jobsets)",
            load * 100.0
        ),
        x: Axis::new("objective", Format::Number),
        panels: vec![Panel {
            y: Axis::new(
                "relative to the best (1 = best, lower is better)",
                Format::Number,
            ),
            series,
        }],
    };
    let cats: Vec<String> = objectives.iter().map(|o| o.0.to_string()).collect();
    continuum_plot::category_chart(path, &fig, &cats).map_err(anyhow::Error::msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_slowdown_table_lines_up_whatever_the_names() {
        let row = |name: &str, load: f64, seed: u64, s: f64| EvalRow {
            scheduler: name.to_string(),
            load,
            seed,
            figures: EvalFigures {
                mean_slowdown: s,
                ..Default::default()
            },
        };
        let long = "deeprm, training seed 5 (/tmp/a/long/path/agent.deeprm)";
        let rows = [
            row("sjf", 0.5, 1, 2.0),
            row("sjf", 0.5, 2, 4.0),
            row("sjf", 1.1, 1, 9.0),
            row(long, 0.5, 1, 1.5),
        ];
        let names = ["sjf".to_string(), long.to_string()];
        let text = slowdown_table(&rows, &names, &[0.5, 1.1]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        // Every row's cells end where their load's header ends (in characters: ± and — are one).
        let end = |l: &str, label: &str| l[..l.find(label).unwrap() + label.len()].chars().count();
        for (label, cells) in [
            ("load 0.50", ["3.00 ± 1.41", "1.50 ± 0.00"]),
            ("load 1.10", ["9.00 ± 0.00", "—"]),
        ] {
            let e = end(lines[0], label);
            for (line, cell) in lines[1..].iter().zip(cells) {
                assert_eq!(end(line, cell), e, "{text}");
            }
        }
        assert!(lines[2].starts_with(long), "{text}");
    }
}
