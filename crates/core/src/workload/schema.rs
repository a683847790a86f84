//! The YAML shape of a workload file and its validation into a [`Workload`].

use super::{AppClass, Lambda, QueryJitter, Workload};
use crate::config::{ConfigError, Dist, DistSpec, Source};
use crate::profiles::Profiles;
use serde::Deserialize;
use serde_saphyr::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    /// The format's version ([`crate::config::SCHEMA`]); absent means 1.
    #[serde(default)]
    schema: Option<Spanned<u64>>,
    lambda_per_min: Spanned<LambdaSpec>,
    #[serde(default)]
    jitter: Option<Spanned<JitterSpec>>,
    access_delay_ms: Spanned<DistSpec>,
    apps: Vec<AppSpec>,
}

#[derive(Deserialize)]
#[serde(
    untagged,
    expecting = "expected a number >= 0, `{step: [{at_s, value}, …]}` or `{sine: {mean, amplitude, period_s}}`"
)]
enum LambdaSpec {
    Constant(f64),
    Tagged(TaggedLambda),
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum TaggedLambda {
    Step(Vec<StepSpec>),
    Sine {
        mean: f64,
        amplitude: f64,
        period_s: f64,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StepSpec {
    at_s: f64,
    #[serde(alias = "value")]
    per_min: f64,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum JitterSpec {
    Periodic,
    Poisson,
    UniformMs(f64),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AppSpec {
    name: Spanned<String>,
    share: Spanned<LambdaSpec>,
    task: Spanned<String>,
    #[serde(default)]
    rate_qps: Option<Spanned<DistSpec>>,
    /// The deprecated name of `rate_qps` (accepted with a warning).
    #[serde(default)]
    rate_fps: Option<Spanned<DistSpec>>,
    frame_kb: Spanned<DistSpec>,
    uplink_mbps: Spanned<DistSpec>,
    max_delay_ms: Spanned<DistSpec>,
    min_accuracy: Spanned<DistSpec>,
    duration_s: Spanned<DistSpec>,
    #[serde(default)]
    access_delay_ms: Option<Spanned<DistSpec>>,
}

pub(super) fn build(src: &Source, profiles: &Profiles) -> Result<Workload, ConfigError> {
    let file: File = src.parse()?;
    crate::config::check_schema(src, &file.schema)?;
    let lambda = lambda(src, &file.lambda_per_min)?;
    let jitter = match &file.jitter {
        None => QueryJitter::Periodic,
        Some(j) => match j.value {
            JitterSpec::Periodic => QueryJitter::Periodic,
            JitterSpec::Poisson => QueryJitter::Poisson,
            JitterSpec::UniformMs(x) if x >= 0.0 && x.is_finite() => QueryJitter::Uniform(x),
            JitterSpec::UniformMs(x) => {
                return Err(src.error_at(
                    j,
                    "jitter.uniform_ms",
                    format!("expected a number >= 0, got {x}"),
                ));
            }
        },
    };
    let access = dist(src, &file.access_delay_ms, "access_delay_ms", 0.0)?;
    if file.apps.is_empty() {
        return Err(src.error_file("apps", "a workload needs at least one application class"));
    }
    let mut apps = Vec::new();
    for (i, a) in file.apps.iter().enumerate() {
        let f = |x: &str| format!("apps[{i}].{x}");
        if apps.iter().any(|x: &AppClass| x.name == a.name.value) {
            return Err(src.error_at(
                &a.name,
                f("name"),
                format!("duplicate app `{}`", a.name.value),
            ));
        }
        let share = time_function(src, &a.share, &f("share"), "a share")?;
        if matches!(share, Lambda::Constant(x) if x <= 0.0) {
            return Err(src.error_at(
                &a.share,
                f("share"),
                format!("expected a number > 0, got {}", share.level()),
            ));
        }
        let task = profiles.task_id(&a.task.value).ok_or_else(|| {
            src.error_at(
                &a.task,
                f("task"),
                format!(
                    "unknown task `{}` (no model in the profiles serves it)",
                    a.task.value
                ),
            )
        })?;
        let min_accuracy = dist(src, &a.min_accuracy, &f("min_accuracy"), 0.0)?;
        let rate_qps = match (&a.rate_qps, &a.rate_fps) {
            (Some(r), None) => positive_dist(src, r, &f("rate_qps"))?,
            (None, Some(r)) => {
                src.warn_deprecated(r, &f("rate_fps"), &f("rate_qps"));
                positive_dist(src, r, &f("rate_fps"))?
            }
            (Some(_), Some(old)) => {
                return Err(src.error_at(
                    old,
                    f("rate_fps"),
                    "give the rate once: `rate_fps` is the deprecated name of `rate_qps`",
                ));
            }
            (None, None) => {
                return Err(src.error_at(
                    &a.name,
                    f("rate_qps"),
                    "missing: the stream's query rate, queries per second",
                ));
            }
        };
        apps.push(AppClass {
            name: a.name.value.clone(),
            share: share.level(),
            share_over_time: share,
            task,
            rate_qps,
            frame_kb: positive_dist(src, &a.frame_kb, &f("frame_kb"))?,
            uplink_mbps: positive_dist(src, &a.uplink_mbps, &f("uplink_mbps"))?,
            max_delay_ms: positive_dist(src, &a.max_delay_ms, &f("max_delay_ms"))?,
            min_accuracy,
            duration_s: positive_dist(src, &a.duration_s, &f("duration_s"))?,
            access_delay_ms: match &a.access_delay_ms {
                Some(d) => dist(src, d, &f("access_delay_ms"), 0.0)?,
                None => access.clone(),
            },
        });
    }
    if apps.iter().all(|a| a.share_over_time.min() <= 0.0) {
        return Err(src.error_file(
            "apps",
            "every class's share reaches 0 at some time: give at least one class a share that stays > 0, so that there is always a class to draw",
        ));
    }
    Ok(Workload::new(lambda, jitter, apps))
}

fn dist(
    src: &Source,
    spec: &Spanned<DistSpec>,
    field: &str,
    min_ok: f64,
) -> Result<Dist, ConfigError> {
    Dist::check(&spec.value, min_ok).map_err(|m| src.error_at(spec, field, m))
}

/// A distribution whose values must be strictly positive (rates, sizes, bandwidths, durations).
fn positive_dist(src: &Source, spec: &Spanned<DistSpec>, field: &str) -> Result<Dist, ConfigError> {
    let d = dist(src, spec, field, 0.0)?;
    if d.min_value() <= 0.0 && matches!(spec.value, DistSpec::Const(_)) {
        return Err(src.error_at(
            spec,
            field,
            format!("expected a value > 0, got {}", d.min_value()),
        ));
    }
    // Continuous distributions bounded below by 0 give 0 with probability zero, but a
    // uniform or choice that includes 0 is a mistake.
    if let DistSpec::Tagged(crate::config::TaggedDist::Uniform([a, _])) = spec.value {
        if a <= 0.0 {
            return Err(src.error_at(
                spec,
                field,
                format!("expected values > 0, but the uniform range starts at {a}"),
            ));
        }
    }
    Ok(d)
}

fn lambda(src: &Source, spec: &Spanned<LambdaSpec>) -> Result<Lambda, ConfigError> {
    time_function(src, spec, "lambda_per_min", "clients per minute")
}

/// A value over time (a number, `{step: [{at_s, per_min}, …]}` or `{sine: {mean, amplitude,
/// period_s}}`), every value ≥ 0; `what` names the unit in errors.
fn time_function(
    src: &Source,
    spec: &Spanned<LambdaSpec>,
    field: &str,
    what: &str,
) -> Result<Lambda, ConfigError> {
    let bad = |m: String| src.error_at(spec, field, m);
    let ok = |x: f64| x >= 0.0 && x.is_finite();
    match &spec.value {
        LambdaSpec::Constant(x) if ok(*x) => Ok(Lambda::Constant(*x)),
        LambdaSpec::Constant(x) => Err(bad(format!("expected {what} >= 0, got {x}"))),
        LambdaSpec::Tagged(TaggedLambda::Step(steps)) => {
            if steps.is_empty() {
                return Err(bad("step: needs at least one `{at_s, per_min}`".into()));
            }
            let mut out = Vec::new();
            for (k, s) in steps.iter().enumerate() {
                if !ok(s.at_s) || !ok(s.per_min) {
                    return Err(bad(format!(
                        "step[{k}]: expected at_s >= 0 and per_min >= 0"
                    )));
                }
                if out.last().is_some_and(|(t, _)| *t >= s.at_s * 1000.0) {
                    return Err(bad(format!("step[{k}]: at_s must increase")));
                }
                out.push((s.at_s * 1000.0, s.per_min));
            }
            Ok(Lambda::Step(out))
        }
        LambdaSpec::Tagged(TaggedLambda::Sine {
            mean,
            amplitude,
            period_s,
        }) => {
            if !(ok(*mean) && amplitude.is_finite() && *period_s > 0.0 && period_s.is_finite()) {
                return Err(bad(
                    "sine: expected mean >= 0, a finite amplitude and period_s > 0".into(),
                ));
            }
            Ok(Lambda::Sine {
                mean: *mean,
                amplitude: *amplitude,
                period_ms: period_s * 1000.0,
            })
        }
    }
}
