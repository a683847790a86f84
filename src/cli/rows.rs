//! The rows of a `compare` run, built from its arguments: configurations, per-class tables,
//! pull rows, agents and their parts, the oracle, and allocators above them. `compare` and the
//! sweep's cells build them the same way, so that a cell's row is the row `compare` runs.

use super::args::Command;
use anyhow::{Context, Result, bail};
use continuum_core::mitigation::{Configuration, MitigationKind};
use continuum_core::policy::{self, StreamClasses};
use continuum_lab::runner::{OracleChoices, PullRow, Runner};

/// The rows of `command` when it is `compare` (in the report's order), `None` otherwise.
pub fn compare_rows(command: &Command) -> Result<Option<Vec<Runner>>> {
    let Command::Compare {
        policies,
        configs,
        grid,
        ratios,
        kinds,
        run,
        agent,
        agent_tables,
        agent_network,
        oracle,
        allocators,
        alloc_slot_s,
        alloc_units,
        alloc_eta0,
    } = command
    else {
        return Ok(None);
    };
    let mut runners = match (policies, configs, grid) {
        (_, _, true) => grid_rows(policies.as_deref(), ratios.as_deref(), kinds.as_deref())?,
        (None, None, false) => policy::REGISTRY
            .iter()
            .map(|&p| Runner::Static(Configuration::plain(p)))
            .collect(),
        (p, c, false) => {
            let mut rows = parse_rows(p.as_deref().unwrap_or(""))?;
            rows.extend(parse_rows(c.as_deref().unwrap_or(""))?);
            rows
        }
    };
    for path in agent {
        let name = if agent.len() == 1 {
            "dqn".to_string()
        } else {
            format!(
                "dqn:{}",
                path.file_stem().and_then(|s| s.to_str()).unwrap_or("agent")
            )
        };
        runners.push(Runner::dqn(name, path)?);
    }
    let stem = |p: &std::path::Path| {
        p.file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("agent")
            .to_string()
    };
    for path in agent_tables {
        runners.push(Runner::dqn_with_margin(
            format!("tables:{}", stem(path)),
            path,
            f64::INFINITY,
        )?);
    }
    for path in agent_network {
        runners.push(Runner::dqn_with_margin(
            format!("network:{}", stem(path)),
            path,
            0.0,
        )?);
    }
    if *oracle {
        let choices = match runners.iter().find_map(Runner::agent_choices) {
            Some(c) => c,
            None => {
                let w = continuum_core::workload::Workload::load(
                    &run.workload,
                    &continuum_core::profiles::Profiles::load(&run.profiles)?,
                )?;
                OracleChoices {
                    candidates: continuum_learn::meta::default_oracle_policies(),
                    classes: StreamClasses::from_workload(
                        &w,
                        &continuum_core::observe::DemandBuckets::default(),
                    ),
                    objective: continuum_core::metrics::Objective::SuccessRatio,
                }
            }
        };
        runners.push(Runner::Oracle(choices));
    }
    if let Some(list) = allocators {
        let units = continuum_alloc::placement::Units::parse(alloc_units)
            .map_err(|m| anyhow::anyhow!("--alloc-units: {m}"))?;
        if let Some(e) = alloc_eta0 {
            if !(*e > 0.0 && e.is_finite()) {
                bail!("--alloc-eta0: expected a learning rate > 0, got {e}");
            }
        }
        let model = continuum_alloc::placement::ModelOptions {
            units,
            eta0: *alloc_eta0,
        };
        runners = allocated_rows(runners, list, *alloc_slot_s, model)?;
    }
    Ok(Some(runners))
}

/// Every configuration row under every allocator of `list` (comma-separated).
fn allocated_rows(
    rows: Vec<Runner>,
    list: &str,
    slot_s: f64,
    model: continuum_alloc::placement::ModelOptions,
) -> Result<Vec<Runner>> {
    if !(slot_s > 0.0 && slot_s.is_finite()) {
        bail!("--alloc-slot-s: expected a slot in s > 0, got {slot_s}");
    }
    let names: Vec<&str> = list
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if names.is_empty() {
        bail!("--allocators: expected at least one allocator name");
    }
    for n in &names {
        continuum_lab::allocated::check_allocator(n)?;
    }
    let mut out = Vec::new();
    for r in rows {
        let Runner::Static(config) = r else {
            bail!(
                "--allocators: row `{}` is not a configuration (agents, oracles and per-class tables run on the file's deployment only)",
                r.name()
            );
        };
        for n in &names {
            out.push(Runner::Allocated {
                config,
                allocator: n.to_string(),
                slot_s,
                model,
            });
        }
    }
    Ok(out)
}

/// Rows from a comma-separated list: configurations (`policy` or `policy+mitigation`),
/// `per-class:<file>` tables, and pull rows (`greedy-pull`, `random-pull`, `prior-pull`,
/// `tapfinger:<checkpoint>`, or `tapfinger[<resolution>]:<checkpoint>` to resolve its conflicts
/// otherwise: `bayes`, `uniform-prior`, `first-claim`).
pub(super) fn parse_rows(list: &str) -> Result<Vec<Runner>> {
    let mut rows = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if let Some(file) = item.strip_prefix("per-class:") {
            rows.push(Runner::table(file)?);
        } else if let Some(file) = item.strip_prefix("tapfinger:") {
            rows.push(Runner::tapfinger(file, None)?);
        } else if let Some(rest) = item.strip_prefix("tapfinger[") {
            let (how, file) = rest.split_once("]:").with_context(|| {
                format!("`{item}`: expected `tapfinger[<resolution>]:<checkpoint>`")
            })?;
            rows.push(Runner::tapfinger(file, Some(how))?);
        } else if let Some(name) = continuum_core::pull::BASELINES
            .into_iter()
            .find(|n| *n == item)
        {
            rows.push(Runner::Pull(PullRow::Baseline(name)));
        } else {
            // The other rows are listed only when the name itself is unknown, not when a known
            // policy's mitigation is out of range.
            rows.push(Runner::Static(Configuration::parse(item).map_err(|e| {
                if e.starts_with("unknown policy") {
                    anyhow::anyhow!("{e}; other rows: {}", super::names::other_rows())
                } else {
                    anyhow::anyhow!("{e}")
                }
            })?));
        }
    }
    Ok(rows)
}

/// The rows of `--grid`: every policy of `policies` (default: all) × none, and each mitigation
/// kind of `kinds` (default: reissue and discard) at every ratio of `ratios` (default:
/// EdgeTuner's 0.70, 0.72, …, 0.90).
fn grid_rows(
    policies: Option<&str>,
    ratios: Option<&str>,
    kinds: Option<&str>,
) -> Result<Vec<Runner>> {
    let policies = match policies {
        Some(p) => policy::parse_list(p).map_err(anyhow::Error::msg)?,
        None => policy::REGISTRY.to_vec(),
    };
    let ratios = match ratios {
        Some(r) => r
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|x| match x.parse::<f64>() {
                Ok(v) if v > 0.0 && v <= 1.0 => Ok(v),
                _ => bail!("--ratios: expected numbers in (0, 1], got `{x}`"),
            })
            .collect::<Result<Vec<_>>>()?,
        None => continuum_core::mitigation::grid_ratios(),
    };
    let kinds = match kinds {
        Some(k) => {
            let kinds = k
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|x| MitigationKind::parse(x).map_err(|e| anyhow::anyhow!("--kinds: {e}")))
                .collect::<Result<Vec<_>>>()?;
            if kinds.is_empty() {
                bail!("--kinds: expected at least one of `reissue`, `discard`, `restart`, `tdp`");
            }
            kinds
        }
        None => vec![MitigationKind::Reissue, MitigationKind::Discard],
    };
    Ok(Configuration::grid_of(&policies, &ratios, &kinds)
        .into_iter()
        .map(Runner::Static)
        .collect())
}
