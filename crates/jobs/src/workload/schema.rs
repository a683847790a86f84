//! The YAML shape of a jobs workload file and its validation into a [`JobsWorkload`]; every
//! refusal says `file:line:col: field: what is wrong`, as the streams workload's does.

use super::{Arrivals, DagShape, DagSpec, JobKind, JobsWorkload, MAX_TASKS_PER_JOB, Work};
use crate::nodes::{DEFAULT_SHAPE, NodeDecl, NodeShape, NodeSplit, Origin, cluster_key, layer_key};
use crate::resources::Res;
use continuum_core::config::{ConfigError, Dist, DistSpec, Source, TaggedDist, check_schema};
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::collections::BTreeMap;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    schema: Option<Spanned<u64>>,
    arrivals: Spanned<ArrivalsSpec>,
    #[serde(default)]
    nodes: Option<NodesSpec>,
    kinds: Vec<KindSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ArrivalsSpec {
    #[serde(default)]
    per_min: Option<f64>,
    #[serde(default)]
    day_per_min: Option<f64>,
    #[serde(default)]
    night_per_min: Option<f64>,
    #[serde(default)]
    night_from_h: Option<f64>,
    #[serde(default)]
    night_to_h: Option<f64>,
    #[serde(default)]
    start_h: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NodesSpec {
    #[serde(default)]
    default: Option<Spanned<ShapeSpec>>,
    #[serde(default)]
    per_layer: BTreeMap<String, Spanned<DeclSpec>>,
    #[serde(default)]
    per_cluster: BTreeMap<String, Spanned<DeclSpec>>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
struct ShapeSpec {
    #[serde(default)]
    cpu: f64,
    #[serde(default)]
    gpu: f64,
    #[serde(default)]
    mem_gb: f64,
    #[serde(default)]
    speed: Option<f64>,
}

#[derive(Deserialize)]
#[serde(
    untagged,
    expecting = "expected a node shape `{cpu, gpu, mem_gb, speed}` or a list of them"
)]
enum DeclSpec {
    Shape(ShapeSpec),
    List(Vec<ShapeSpec>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DagSpecFile {
    stages: Spanned<DistSpec>,
    #[serde(default)]
    shape: Option<Spanned<DagShapeSpec>>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum DagShapeSpec {
    Chain,
    Tree,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum WorkPer {
    Task,
    Stage,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KindSpec {
    name: Spanned<String>,
    share: Spanned<f64>,
    tasks: Spanned<DistSpec>,
    #[serde(default)]
    dag: Option<DagSpecFile>,
    cpu_request: Spanned<DistSpec>,
    #[serde(default)]
    cpu_limit: Option<Spanned<DistSpec>>,
    mem_request_gb: Spanned<DistSpec>,
    #[serde(default)]
    mem_limit_gb: Option<Spanned<DistSpec>>,
    #[serde(default)]
    gpu: Option<Spanned<DistSpec>>,
    #[serde(default)]
    work_cpu_s: Option<Spanned<DistSpec>>,
    #[serde(default)]
    duration_s: Option<Spanned<DistSpec>>,
    #[serde(default)]
    work_per: Option<WorkPer>,
    #[serde(default)]
    slowdown: Option<Spanned<DistSpec>>,
    #[serde(default)]
    sla_waiting_s: Option<Spanned<DistSpec>>,
}

pub(super) fn build(src: &Source) -> Result<JobsWorkload, ConfigError> {
    let file: File = src.parse()?;
    check_schema(src, &file.schema)?;
    let arrivals = arrivals(src, &file.arrivals)?;
    let nodes = match &file.nodes {
        Some(n) => nodes(src, n)?,
        None => NodeSplit {
            file: src.path.clone(),
            ..NodeSplit::default()
        },
    };
    if file.kinds.is_empty() {
        return Err(src.error_file("kinds", "a jobs workload needs at least one job kind"));
    }
    let mut kinds: Vec<JobKind> = Vec::with_capacity(file.kinds.len());
    for (i, k) in file.kinds.iter().enumerate() {
        let kind = kind(src, i, k)?;
        if kinds.iter().any(|x| x.name == kind.name) {
            return Err(src.error_at(
                &k.name,
                format!("kinds[{i}].name"),
                format!("duplicate kind `{}`", kind.name),
            ));
        }
        kinds.push(kind);
    }
    if kinds.iter().all(|k| k.share <= 0.0) {
        return Err(src.error_file(
            "kinds",
            "every kind's share is 0: give at least one kind a share > 0",
        ));
    }
    Ok(JobsWorkload {
        arrivals,
        kinds,
        nodes,
    })
}

fn arrivals(src: &Source, a: &Spanned<ArrivalsSpec>) -> Result<Arrivals, ConfigError> {
    let bad = |field: &str, m: String| src.error_at(a, format!("arrivals.{field}"), m);
    let rate = |field: &str, x: f64| {
        if x >= 0.0 && x.is_finite() {
            Ok(x)
        } else {
            Err(bad(
                field,
                format!("expected jobs per minute >= 0, got {x}"),
            ))
        }
    };
    let hour = |field: &str, x: Option<f64>, default: f64| {
        let h = x.unwrap_or(default);
        if (0.0..24.0).contains(&h) {
            Ok(h)
        } else {
            Err(bad(field, format!("expected an hour in [0, 24), got {h}")))
        }
    };
    let v = &a.value;
    match (v.per_min, v.day_per_min, v.night_per_min) {
        (Some(p), None, None) => {
            if v.night_from_h.is_some() || v.night_to_h.is_some() || v.start_h.is_some() {
                return Err(bad(
                    "per_min",
                    "a constant rate takes no hours: give `day_per_min` and `night_per_min` for a day-night pattern".into(),
                ));
            }
            Ok(Arrivals::Constant {
                per_min: rate("per_min", p)?,
            })
        }
        (None, Some(d), Some(n)) => {
            let from = hour("night_from_h", v.night_from_h, 0.0)?;
            let to = hour("night_to_h", v.night_to_h, 6.0)?;
            if from == to {
                return Err(bad(
                    "night_to_h",
                    format!("the night starts and ends at hour {from}: it would be empty"),
                ));
            }
            Ok(Arrivals::Diurnal {
                day_per_min: rate("day_per_min", d)?,
                night_per_min: rate("night_per_min", n)?,
                night_from_h: from,
                night_to_h: to,
                start_h: hour("start_h", v.start_h, 0.0)?,
            })
        }
        _ => Err(bad(
            "per_min",
            "give either `per_min` (a constant rate) or both `day_per_min` and `night_per_min` (EdgeTuner's Daytime and Night)".into(),
        )),
    }
}

fn shape(
    src: &Source,
    s: &ShapeSpec,
    at: &Spanned<impl Sized>,
    field: &str,
) -> Result<NodeShape, ConfigError> {
    let c = Res::new(s.cpu, s.gpu, s.mem_gb);
    if c.arr().iter().any(|x| !(x.is_finite() && *x >= 0.0)) {
        return Err(src.error_at(at, field, "expected amounts >= 0"));
    }
    if c.arr().iter().all(|x| *x <= 0.0) {
        return Err(src.error_at(at, field, "a node needs some cpu, gpu or mem_gb"));
    }
    let speed = s.speed.unwrap_or(1.0);
    if !(speed.is_finite() && speed > 0.0) {
        return Err(src.error_at(
            at,
            format!("{field}.speed"),
            format!("expected a speed > 0, got {speed}"),
        ));
    }
    Ok(NodeShape { capacity: c, speed })
}

fn decl(src: &Source, d: &Spanned<DeclSpec>, field: &str) -> Result<NodeDecl, ConfigError> {
    match &d.value {
        DeclSpec::Shape(s) => Ok(NodeDecl::Shape(shape(src, s, d, field)?)),
        DeclSpec::List(list) => {
            if list.is_empty() {
                return Err(src.error_at(d, field, "a node list needs at least one node"));
            }
            let nodes = list
                .iter()
                .enumerate()
                .map(|(k, s)| shape(src, s, d, &format!("{field}[{k}]")))
                .collect::<Result<_, _>>()?;
            Ok(NodeDecl::List(nodes))
        }
    }
}

fn nodes(src: &Source, n: &NodesSpec) -> Result<NodeSplit, ConfigError> {
    let mut split = NodeSplit {
        file: src.path.clone(),
        ..NodeSplit::default()
    };
    split.default = match &n.default {
        Some(d) => shape(src, &d.value, d, "nodes.default")?,
        None => DEFAULT_SHAPE,
    };
    let origin = |d: &Spanned<DeclSpec>, field: String| Origin {
        line: d.referenced.line() as usize,
        column: d.referenced.column() as usize,
        field,
    };
    for (layer, d) in &n.per_layer {
        let field = format!("nodes.per_layer.{layer}");
        split.per_layer.insert(layer.clone(), decl(src, d, &field)?);
        split.origins.insert(layer_key(layer), origin(d, field));
    }
    for (id, d) in &n.per_cluster {
        let field = format!("nodes.per_cluster.{id}");
        split.per_cluster.insert(id.clone(), decl(src, d, &field)?);
        split.origins.insert(cluster_key(id), origin(d, field));
    }
    Ok(split)
}

fn dist(
    src: &Source,
    s: &Spanned<DistSpec>,
    field: &str,
    min_ok: f64,
) -> Result<Dist, ConfigError> {
    Dist::check(&s.value, min_ok).map_err(|m| src.error_at(s, field, m))
}

/// A distribution whose values must be > 0: a constant, a uniform's lower bound or a choice's
/// least value at 0 is refused (continuous draws from 0 upward give 0 with probability zero).
fn positive(src: &Source, s: &Spanned<DistSpec>, field: &str) -> Result<Dist, ConfigError> {
    let d = dist(src, s, field, 0.0)?;
    let discrete = matches!(
        s.value,
        DistSpec::Const(_) | DistSpec::Tagged(TaggedDist::Uniform(_) | TaggedDist::Choice(_))
    );
    if discrete && d.min_value() <= 0.0 {
        return Err(src.error_at(
            s,
            field,
            format!("expected values > 0, but it can give {}", d.min_value()),
        ));
    }
    Ok(d)
}

/// A count (tasks, stages): values ≥ 0 (rounded, at least 1), a constant at least 1, a mean no
/// larger than [`MAX_TASKS_PER_JOB`].
fn count(src: &Source, s: &Spanned<DistSpec>, field: &str) -> Result<Dist, ConfigError> {
    let d = dist(src, s, field, 0.0)?;
    if matches!(s.value, DistSpec::Const(x) if x < 1.0) {
        return Err(src.error_at(s, field, format!("expected a count >= 1, got {}", d.mean())));
    }
    if d.mean() > MAX_TASKS_PER_JOB as f64 {
        return Err(src.error_at(
            s,
            field,
            format!(
                "a mean of {} is above the {MAX_TASKS_PER_JOB} tasks a job may have",
                d.mean()
            ),
        ));
    }
    Ok(d)
}

fn opt(
    src: &Source,
    s: &Option<Spanned<DistSpec>>,
    field: &str,
    check: fn(&Source, &Spanned<DistSpec>, &str) -> Result<Dist, ConfigError>,
) -> Result<Option<Dist>, ConfigError> {
    s.as_ref().map(|s| check(src, s, field)).transpose()
}

fn non_negative(src: &Source, s: &Spanned<DistSpec>, field: &str) -> Result<Dist, ConfigError> {
    dist(src, s, field, 0.0)
}

fn kind(src: &Source, i: usize, k: &KindSpec) -> Result<JobKind, ConfigError> {
    let f = |x: &str| format!("kinds[{i}].{x}");
    if k.name.value.trim().is_empty() {
        return Err(src.error_at(&k.name, f("name"), "expected a non-empty name"));
    }
    let share = k.share.value;
    if !(share >= 0.0 && share.is_finite()) {
        return Err(src.error_at(
            &k.share,
            f("share"),
            format!("expected a share >= 0, got {share}"),
        ));
    }
    let dag = match &k.dag {
        None => None,
        Some(d) => Some(DagSpec {
            stages: count(src, &d.stages, &f("dag.stages"))?,
            shape: match d.shape.as_ref().map(|s| s.value) {
                None | Some(DagShapeSpec::Tree) => DagShape::Tree,
                Some(DagShapeSpec::Chain) => DagShape::Chain,
            },
        }),
    };
    let work = match (&k.work_cpu_s, &k.duration_s) {
        (Some(w), None) => Work::CpuSeconds(positive(src, w, &f("work_cpu_s"))?),
        (None, Some(d)) => Work::DurationS(positive(src, d, &f("duration_s"))?),
        (Some(_), Some(d)) => {
            return Err(src.error_at(
                d,
                f("duration_s"),
                "give the work once: `work_cpu_s` or `duration_s`, not both",
            ));
        }
        (None, None) => {
            return Err(src.error_at(&k.name, f("work_cpu_s"), "missing: each task's work, `work_cpu_s` (CPU-seconds) or `duration_s` (s at its cores)"));
        }
    };
    Ok(JobKind {
        name: k.name.value.clone(),
        share,
        tasks: count(src, &k.tasks, &f("tasks"))?,
        dag,
        cpu_request: positive(src, &k.cpu_request, &f("cpu_request"))?,
        cpu_limit: opt(src, &k.cpu_limit, &f("cpu_limit"), positive)?,
        mem_request_gb: non_negative(src, &k.mem_request_gb, &f("mem_request_gb"))?,
        mem_limit_gb: opt(src, &k.mem_limit_gb, &f("mem_limit_gb"), positive)?,
        gpu: opt(src, &k.gpu, &f("gpu"), non_negative)?,
        work,
        work_per_stage: matches!(k.work_per, Some(WorkPer::Stage)),
        slowdown: opt(src, &k.slowdown, &f("slowdown"), positive)?,
        sla_waiting_s: opt(src, &k.sla_waiting_s, &f("sla_waiting_s"), non_negative)?,
    })
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
