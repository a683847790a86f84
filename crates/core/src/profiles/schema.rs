//! The YAML shape of a profile file and its validation into [`Profiles`].

use super::{Model, Profiles, Task, Variant};
use crate::config::{ConfigError, Source};
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::collections::{BTreeMap, HashMap};

/// The largest batch a variant may declare. Each simulated replica keeps room for a whole
/// batch; assumption: 4096 is far above the batches of any shipped profile (at most 8) and of
/// GPU serving in general, and bounded so that a typo cannot ask for gigabytes per replica.
const MAX_BATCH: u32 = 4096;

/// A variant's batch size: in 1..=[`MAX_BATCH`].
fn check_batch(b: &Spanned<u32>) -> Result<(), String> {
    if (1..=MAX_BATCH).contains(&b.value) {
        Ok(())
    } else {
        Err(format!(
            "expected a batch size in 1..={MAX_BATCH} (each replica keeps room for a whole \
             batch), got {}",
            b.value
        ))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    /// The format's version ([`crate::config::SCHEMA`]); absent means 1.
    #[serde(default)]
    schema: Option<Spanned<u64>>,
    tasks: Vec<TaskSpec>,
    models: Vec<ModelSpec>,
    variants: Vec<VariantSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskSpec {
    name: Spanned<String>,
    metric: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelSpec {
    name: Spanned<String>,
    task: Spanned<String>,
    accuracy: Spanned<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VariantSpec {
    name: Spanned<String>,
    model: Spanned<String>,
    #[serde(default)]
    runtime: String,
    #[serde(default)]
    device: String,
    batch: Spanned<u32>,
    delay: Spanned<DelaySpec>,
    ref_kb: Spanned<f64>,
    capacity_qps: Spanned<f64>,
    resources: Spanned<BTreeMap<String, f64>>,
    #[serde(default)]
    load_s: Option<Spanned<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DelaySpec {
    base_ms: f64,
    #[serde(default)]
    per_kb_ms: f64,
}

pub(super) fn build(src: &Source) -> Result<Profiles, ConfigError> {
    let file: File = src.parse()?;
    crate::config::check_schema(src, &file.schema)?;
    let mut p = Profiles::default();
    for (i, t) in file.tasks.iter().enumerate() {
        if p.tasks.iter().any(|x| x.name == t.name.value) {
            return Err(src.error_at(
                &t.name,
                format!("tasks[{i}].name"),
                format!("duplicate task `{}`", t.name.value),
            ));
        }
        p.tasks.push(Task {
            name: t.name.value.clone(),
            metric: t.metric.clone(),
        });
    }
    let mut model_index = HashMap::new();
    for (i, m) in file.models.iter().enumerate() {
        let model = model(src, &p, i, m)?;
        if model_index
            .insert(m.name.value.clone(), p.models.len())
            .is_some()
        {
            return Err(src.error_at(
                &m.name,
                format!("models[{i}].name"),
                format!("duplicate model `{}`", m.name.value),
            ));
        }
        p.models.push(model);
    }
    for (i, v) in file.variants.iter().enumerate() {
        let variant = variant(src, &p, &model_index, i, v)?;
        if p.variant_index
            .insert(v.name.value.clone(), p.variants.len())
            .is_some()
        {
            return Err(src.error_at(
                &v.name,
                format!("variants[{i}].name"),
                format!("duplicate variant `{}`", v.name.value),
            ));
        }
        p.variants.push(variant);
    }
    for (i, t) in file.tasks.iter().enumerate() {
        let id = i as super::TaskId;
        if !p.task_is_served(id) {
            return Err(src.error_at(
                &t.name,
                format!("tasks[{i}].name"),
                format!("no variant of any model serves task `{}`", t.name.value),
            ));
        }
    }
    Ok(p)
}

/// Model `i` of the file, checked against the tasks of `p`.
fn model(src: &Source, p: &Profiles, i: usize, m: &ModelSpec) -> Result<Model, ConfigError> {
    let field = |f: &str| format!("models[{i}].{f}");
    let task = p.task_id(&m.task.value).ok_or_else(|| {
        src.error_at(
            &m.task,
            field("task"),
            format!(
                "unknown task `{}`; tasks are: {}",
                m.task.value,
                names(p.tasks.iter().map(|t| &t.name))
            ),
        )
    })?;
    let acc = m.accuracy.value;
    if !(0.0..=1.0).contains(&acc) {
        return Err(src.error_at(
            &m.accuracy,
            field("accuracy"),
            format!("expected a fraction in [0, 1], got {acc}"),
        ));
    }
    Ok(Model {
        name: m.name.value.clone(),
        task,
        accuracy: acc,
    })
}

/// Variant `i` of the file, checked against the models of `p` (`model_index`: name → index).
fn variant(
    src: &Source,
    p: &Profiles,
    model_index: &HashMap<String, usize>,
    i: usize,
    v: &VariantSpec,
) -> Result<Variant, ConfigError> {
    let field = |f: &str| format!("variants[{i}].{f}");
    let model = *model_index.get(&v.model.value).ok_or_else(|| {
        src.error_at(
            &v.model,
            field("model"),
            format!(
                "unknown model `{}`; models are: {}",
                v.model.value,
                names(p.models.iter().map(|m| &m.name))
            ),
        )
    })?;
    check_batch(&v.batch).map_err(|m| src.error_at(&v.batch, field("batch"), m))?;
    let d = &v.delay.value;
    if !(d.base_ms >= 0.0 && d.per_kb_ms >= 0.0 && d.base_ms.is_finite() && d.per_kb_ms.is_finite())
        || d.base_ms + d.per_kb_ms <= 0.0
    {
        return Err(src.error_at(
            &v.delay,
            field("delay"),
            "expected base_ms >= 0 and per_kb_ms >= 0, not both zero",
        ));
    }
    positive(src, &v.ref_kb, field("ref_kb"))?;
    positive(src, &v.capacity_qps, field("capacity_qps"))?;
    let load_s = match &v.load_s {
        None => super::DEFAULT_LOAD_S,
        Some(x) if x.value >= 0.0 && x.value.is_finite() => x.value,
        Some(x) => {
            return Err(src.error_at(
                x,
                field("load_s"),
                format!("expected a load time in s >= 0, got {}", x.value),
            ));
        }
    };
    for (k, x) in &v.resources.value {
        if !(*x >= 0.0 && x.is_finite()) {
            return Err(src.error_at(
                &v.resources,
                field(&format!("resources.{k}")),
                format!("expected a resource amount >= 0, got {x}"),
            ));
        }
    }
    let m = &p.models[model];
    Ok(Variant {
        name: v.name.value.clone(),
        model,
        task: m.task,
        accuracy: m.accuracy,
        runtime: v.runtime.clone(),
        device: v.device.clone(),
        batch: v.batch.value,
        base_ms: d.base_ms,
        per_kb_ms: d.per_kb_ms,
        ref_kb: v.ref_kb.value,
        capacity_qps: v.capacity_qps.value,
        resources: v.resources.value.clone(),
        load_s,
    })
}

fn positive(src: &Source, x: &Spanned<f64>, field: String) -> Result<(), ConfigError> {
    if x.value > 0.0 && x.value.is_finite() {
        Ok(())
    } else {
        Err(src.error_at(x, field, format!("expected a number > 0, got {}", x.value)))
    }
}

/// A comma-separated list of names for messages.
pub(crate) fn names<'a>(it: impl Iterator<Item = &'a String>) -> String {
    it.map(String::as_str).collect::<Vec<_>>().join(", ")
}
