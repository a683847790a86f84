//! `continuum meta-train` split into units of work for a distributed driver: the plan, one
//! inner training, one outer step. They call the functions the whole run calls
//! ([`inner_task`], [`outer_step`]) and pass θ and the inner weights as checkpoints (exact
//! f32), so the last outer step writes the checkpoint the whole run writes, bit for bit.

use super::meta_train::{LOG_HEADER, Loaded, MetaTrainArgs, log_line, log_path, whole};
use anyhow::{Context, Result, bail};
use continuum_infer::agent::Checkpoint;
use continuum_learn::train::meta_train::{
    InnerRun, MetaTrainLine, Theta, inner_config, inner_task, outer_step, theta_vars,
};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What `--inner` prints, and `--outer` reads beside each inner checkpoint.
#[derive(Debug, Serialize, Deserialize)]
struct InnerSummary {
    iteration: usize,
    task_index: usize,
    task: String,
    success_ratio: f64,
}

/// Runs `continuum meta-train`: the whole run, or one of its units of work.
pub(super) fn execute(a: &MetaTrainArgs) -> Result<()> {
    let l = Loaded::from(a)?;
    let pool = crate::thread_pool(a.threads)?;
    if a.plan || a.inner.is_some() || a.outer.is_some() {
        pool.install(|| split(a, &l))
    } else {
        whole(a, &l, &pool)
    }
}

/// Runs `--plan`, `--inner` or `--outer`.
fn split(a: &MetaTrainArgs, l: &Loaded) -> Result<()> {
    let inner_cfg = inner_config(&l.cfg, &l.m)?;
    if a.plan {
        let plan = serde_json::json!({
            "meta_iterations": l.m.meta_iterations,
            "tasks": l.m.tasks,
            "seed": a.seed,
        });
        crate::print(&plan.to_string())?;
        return Ok(());
    }
    let out = a
        .out
        .as_ref()
        .context("--out: expected the checkpoint to write")?;
    let theta = match &a.theta {
        Some(p) => Some(Theta::from_checkpoint(&Checkpoint::load(p)?)?),
        None => None,
    };
    if let Some(spec) = &a.inner {
        let (it, b) = spec
            .split_once(':')
            .and_then(|(i, b)| Some((i.parse::<usize>().ok()?, b.parse::<usize>().ok()?)))
            .with_context(|| format!("--inner: expected `<iteration>:<task>`, got `{spec}`"))?;
        check_iteration(it, l.m.meta_iterations, "--inner")?;
        if b >= l.m.tasks {
            bail!("--inner: task {b} of {} per iteration", l.m.tasks);
        }
        check_theta(it, theta.is_some(), "--inner")?;
        let run = inner_task(
            &l.profiles,
            &l.workload,
            &inner_cfg,
            &l.m,
            a.seed,
            it,
            b,
            theta.as_ref(),
        )?;
        save(out, &run.trained, l, None)?;
        let s = InnerSummary {
            iteration: it,
            task_index: b,
            task: run.task,
            success_ratio: run.success_ratio,
        };
        crate::print(&serde_json::to_string(&s)?)?;
        return Ok(());
    }
    let it = a.outer.context("expected --plan, --inner or --outer")?;
    check_iteration(it, l.m.meta_iterations, "--outer")?;
    check_theta(it, theta.is_some(), "--outer")?;
    if a.inner_runs.len() != l.m.tasks {
        bail!(
            "--inner-runs: expected {} inner checkpoints (one per task), got {}",
            l.m.tasks,
            a.inner_runs.len()
        );
    }
    let mut runs = Vec::with_capacity(l.m.tasks);
    for (b, p) in a.inner_runs.iter().enumerate() {
        let side = p.with_extension("json");
        let text = std::fs::read_to_string(&side)
            .with_context(|| format!("--inner-runs: cannot read {}", side.display()))?;
        let s: InnerSummary = serde_json::from_str(&text)
            .with_context(|| format!("{}: not what --inner prints", side.display()))?;
        if (s.iteration, s.task_index) != (it, b) {
            bail!(
                "--inner-runs: {} is inner run {}:{}, expected {it}:{b}",
                p.display(),
                s.iteration,
                s.task_index
            );
        }
        runs.push(InnerRun {
            trained: Theta::from_checkpoint(&Checkpoint::load(p)?)?,
            success_ratio: s.success_ratio,
            task: s.task,
        });
    }
    let (next, success_ratio, tasks) = outer_step(theta, &runs, &l.m, a.seed, it)?;
    let line = MetaTrainLine {
        iteration: it,
        tasks,
        success_ratio,
        wall_s: a.wall_s,
    };
    save(out, &next, l, Some(a.seed))?;
    // The log: restarted at iteration 0, one line appended per iteration.
    let csv = log_path(out);
    let before = if it == 0 {
        LOG_HEADER.to_string()
    } else {
        let prev = a.theta.as_ref().map(|t| log_path(t)).context("--theta")?;
        std::fs::read_to_string(&prev).unwrap_or_else(|_| LOG_HEADER.to_string())
    };
    std::fs::write(&csv, before + &log_line(&line))
        .with_context(|| format!("cannot write {}", csv.display()))?;
    crate::print(&serde_json::to_string(&line)?)?;
    Ok(())
}

/// Writes θ (or inner weights) as a checkpoint: built as the whole run builds its result (the
/// shape's variables drawn from `seed`, then set), so the bytes match.
fn save(out: &Path, t: &Theta, l: &Loaded, seed: Option<u64>) -> Result<()> {
    let vars = theta_vars(t, seed.unwrap_or(0))?;
    continuum_learn::agent::save(out, &vars, &l.checkpoint_meta(t.shape, &t.classes))?;
    Ok(())
}

fn check_iteration(it: usize, n: usize, flag: &str) -> Result<()> {
    if it >= n {
        bail!("{flag}: iteration {it} of {n}");
    }
    Ok(())
}

fn check_theta(it: usize, given: bool, flag: &str) -> Result<()> {
    match (it, given) {
        (0, true) => bail!("{flag}: iteration 0 starts from no θ: leave out --theta"),
        (i, false) if i > 0 => bail!("{flag}: iteration {i} needs --theta (the previous θ)"),
        _ => Ok(()),
    }
}
