use super::*;
use crate::fixtures;
use crate::rng::{Purpose, stream_rng};

fn load(text: &str) -> Result<Workload, ConfigError> {
    Workload::from_source(&Source::inline("w.yaml", text), &fixtures::profiles())
}

const APP: &str = "{name: a, share: 1, task: detect, rate_qps: 10, frame_kb: 10, uplink_mbps: 80, max_delay_ms: 100, min_accuracy: 0.1, duration_s: 30}";

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
    let p = w.sample_stream(&mut stream_rng(1, Purpose::Other, 0, 0), 0.0);
    assert_eq!(
        (
            p.demand.rate_qps,
            p.demand.frame_kb,
            p.demand.tx_ms,
            p.duration_ms
        ),
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
    let e = load(&with(("rate_qps: 10", "rate_qps: {uniform: [30, 15]}"))).unwrap_err();
    assert!(
        e.message.contains("lower bound above its upper bound"),
        "{e}"
    );
    let e = load(&with(("rate_qps: 10", "rate_qps: {normal: {mean: 10}}"))).unwrap_err();
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

/// Two classes whose shares move in anti-phase: 0.8/0.2 at a quarter period, 0.2/0.8 at three
/// quarters; draws follow the mix of the arrival time.
#[test]
fn shares_may_shift_over_time() {
    let text = format!(
        "lambda_per_min: 60\naccess_delay_ms: 2\napps:\n  - {}\n  - {}\n",
        APP.replace(
            "share: 1",
            "share: {sine: {mean: 0.5, amplitude: 0.3, period_s: 100}}"
        ),
        APP.replace("name: a", "name: b").replace(
            "share: 1",
            "share: {sine: {mean: 0.5, amplitude: -0.3, period_s: 100}}"
        ),
    );
    let w = load(&text).unwrap();
    assert!(w.shifting_mix());
    assert_eq!(w.apps[0].share, 0.5);
    let day = w.shares_at(25_000.0);
    assert!(
        (day[0] - 0.8).abs() < 1e-9 && (day[1] - 0.2).abs() < 1e-9,
        "{day:?}"
    );
    let mut rng = stream_rng(3, Purpose::Other, 0, 0);
    let n = 4000;
    let first = |t: f64, rng: &mut crate::rng::SimRng| {
        (0..n).filter(|_| w.sample_stream(rng, t).app == 0).count() as f64 / n as f64
    };
    let (at_day, at_night) = (first(25_000.0, &mut rng), first(75_000.0, &mut rng));
    assert!((at_day - 0.8).abs() < 0.03, "{at_day}");
    assert!((at_night - 0.2).abs() < 0.03, "{at_night}");
    // Steps take `value` as well as `per_min`.
    let steps = with((
        "share: 1",
        "share: {step: [{at_s: 0, value: 1}, {at_s: 10, value: 3}]}",
    ));
    let w = load(&steps).unwrap();
    assert_eq!(w.apps[0].share_over_time.at(20_000.0), 3.0);
}

#[test]
fn shares_that_leave_no_class_or_go_negative_are_refused() {
    let e = load(&with((
        "share: 1",
        "share: {sine: {mean: 1, amplitude: 1, period_s: 60}}",
    )))
    .unwrap_err();
    assert_eq!(e.field, "apps");
    assert!(e.message.contains("stays > 0"), "{e}");
    let e = load(&with(("share: 1", "share: -2"))).unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (4, "apps[0].share"));
    assert!(e.message.contains(">= 0"), "{e}");
    let e = load(&with(("share: 1", "share: 0"))).unwrap_err();
    assert!(e.message.contains("> 0"), "{e}");
}

#[test]
fn the_old_rate_key_is_read_as_rate_qps_and_conflicts_are_refused() {
    let new = load(&with(("", ""))).unwrap();
    let old = load(&with(("rate_qps: 10", "rate_fps: 10"))).unwrap();
    let rate = |w: &Workload| (w.apps[0].rate_qps.mean(), w.apps[0].rate_qps.min_value());
    assert_eq!(rate(&old), rate(&new));
    let e = load(&with(("rate_qps: 10", "rate_qps: 10, rate_fps: 10"))).unwrap_err();
    assert_eq!(e.field, "apps[0].rate_fps", "{e}");
    let e = load(&with(("rate_qps: 10, ", ""))).unwrap_err();
    assert_eq!((e.line, e.field.as_str()), (4, "apps[0].rate_qps"), "{e}");
    assert!(e.message.contains("missing"), "{e}");
    let e = load(&with(("rate_qps: 10", "rate_fps: -1"))).unwrap_err();
    assert_eq!(e.field, "apps[0].rate_fps", "{e}");
}
