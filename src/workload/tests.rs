use super::*;
use crate::fixtures;
use crate::rng::{Purpose, stream_rng};

fn load(text: &str) -> Result<Workload, ConfigError> {
    Workload::from_source(&Source::inline("w.yaml", text), &fixtures::profiles())
}

const APP: &str = "{name: a, share: 1, task: detect, rate_fps: 10, frame_kb: 10, uplink_mbps: 80, max_delay_ms: 100, min_accuracy: 0.1, duration_s: 30}";

fn with(replace: (&str, &str)) -> String {
    format!(
        "lambda_per_min: 60\naccess_delay_ms: 2\napps:\n  - {}\n",
        APP.replace(replace.0, replace.1)
    )
}

#[test]
fn expected_load_follows_littles_law() {
    let w = load(&with(("", ""))).unwrap();
    // 60 clients/min = 1/s, each 30 s at 10 fps: 300 qps.
    assert!((w.expected_qps(60.0) - 300.0).abs() < 1e-9);
    let p = w.sample_stream(&mut stream_rng(1, Purpose::Other, 0, 0));
    assert_eq!(
        (p.rate_qps, p.size_kb, p.tx_ms, p.duration_ms),
        (10.0, 10.0, 1.0, 30_000.0)
    );
}

#[test]
fn negative_durations_and_unknown_tasks_are_refused() {
    let e = load(&with(("duration_s: 30", "duration_s: -5"))).unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (4, "apps[0].duration_s"));
    let e = load(&with(("duration_s: 30", "duration_s: {uniform: [-1, 5]}"))).unwrap_err();
    assert_eq!(e.field, "apps[0].duration_s");
    let e = load(&with(("task: detect", "task: dance"))).unwrap_err();
    assert_eq!(e.field, "apps[0].task");
    assert!(e.message.contains("unknown task `dance`"), "{e}");
}

#[test]
fn bad_distributions_say_what_is_wrong() {
    let e = load(&with(("rate_fps: 10", "rate_fps: {uniform: [30, 15]}"))).unwrap_err();
    assert!(
        e.message.contains("lower bound above its upper bound"),
        "{e}"
    );
    let e = load(&with(("rate_fps: 10", "rate_fps: {normal: {mean: 10}}"))).unwrap_err();
    assert_eq!(e.line, 4, "{e}");
    let e = load("lambda_per_min: -3\naccess_delay_ms: 2\napps: []\n").unwrap_err();
    assert_eq!(
        (e.line, e.column, e.field.as_str()),
        (1, 17, "lambda_per_min")
    );
}

#[test]
fn lambda_forms_parse() {
    let w = load(&format!("lambda_per_min: {{step: [{{at_s: 0, per_min: 10}}, {{at_s: 60, per_min: 30}}]}}\naccess_delay_ms: 2\napps:\n  - {APP}\n")).unwrap();
    assert_eq!(w.lambda.at(61_000.0), 30.0);
    let w = load(&format!("lambda_per_min: {{sine: {{mean: 60, amplitude: 20, period_s: 600}}}}\njitter: poisson\naccess_delay_ms: {{uniform: [2, 10]}}\napps:\n  - {APP}\n")).unwrap();
    assert_eq!((w.lambda.max(), w.jitter), (80.0, QueryJitter::Poisson));
}
