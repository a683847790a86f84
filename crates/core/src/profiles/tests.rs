use super::*;
use crate::fixtures;

fn err(text: &str) -> ConfigError {
    Profiles::from_source(&Source::inline("p.yaml", text)).expect_err("must be refused")
}

const HEAD: &str = "tasks:\n  - {name: t, metric: m}\n";

#[test]
fn fixture_profiles_load() {
    let p = fixtures::profiles();
    assert_eq!(p.variants.len(), 3);
    let v = &p.variants[p.variant_id("big-b4").unwrap()];
    assert_eq!(
        (
            v.batch,
            v.accuracy,
            v.delay_ms(10.0),
            v.load_per_query(20.0)
        ),
        (4, 0.6, 45.0, 2.0)
    );
}

#[test]
fn a_task_no_variant_serves_is_refused() {
    let e = err(&format!(
        "{HEAD}  - {{name: lonely, metric: m}}\nmodels:\n  - {{name: a, task: t, accuracy: 0.5}}\nvariants:\n  - {{name: v, model: a, batch: 1, delay: {{base_ms: 1}}, ref_kb: 1, capacity_qps: 1, resources: {{cpu: 1}}}}\n"
    ));
    assert_eq!(
        (e.line, e.column, e.field.as_str()),
        (3, 12, "tasks[1].name")
    );
    assert!(
        e.message
            .contains("no variant of any model serves task `lonely`"),
        "{e}"
    );
}

#[test]
fn unknown_task_or_model_is_refused() {
    let e = err(&format!(
        "{HEAD}models:\n  - {{name: a, task: nope, accuracy: 0.5}}\nvariants: []\n"
    ));
    assert_eq!((e.line, e.field.as_str()), (4, "models[0].task"));
    let e = err(&format!(
        "{HEAD}models:\n  - {{name: a, task: t, accuracy: 0.5}}\nvariants:\n  - {{name: v, model: b, batch: 1, delay: {{base_ms: 1}}, ref_kb: 1, capacity_qps: 1, resources: {{}}}}\n"
    ));
    assert_eq!((e.line, e.field.as_str()), (6, "variants[0].model"));
}

#[test]
fn out_of_range_numbers_are_refused() {
    let e = err(&format!(
        "{HEAD}models:\n  - {{name: a, task: t, accuracy: 55.3}}\nvariants: []\n"
    ));
    assert_eq!(e.field, "models[0].accuracy");
    let v = |field: &str| {
        format!(
            "{HEAD}models:\n  - {{name: a, task: t, accuracy: 0.5}}\nvariants:\n  - {{name: v, model: a, {field}, resources: {{cpu: 1}}}}\n"
        )
    };
    let e = err(&v(
        "batch: 0, delay: {base_ms: 1}, ref_kb: 1, capacity_qps: 1",
    ));
    assert_eq!(e.field, "variants[0].batch");
    let e = err(&v(
        "batch: 1, delay: {base_ms: -1}, ref_kb: 1, capacity_qps: 1",
    ));
    assert_eq!(e.field, "variants[0].delay");
    let e = err(&v(
        "batch: 1, delay: {base_ms: 1}, ref_kb: 1, capacity_qps: 0",
    ));
    assert_eq!(e.field, "variants[0].capacity_qps");
}
