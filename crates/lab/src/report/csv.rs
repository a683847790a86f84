//! CSV output: one row per policy overall, per app, and per window, written with the `csv`
//! crate (names holding commas, quotes or newlines are quoted). The `degraded` count (`tdp`
//! only), each row's share of the run's offline bound (`--bound`) and the median latency come
//! last, so the columns before them keep their places; the bound itself is a row of scope
//! `bound`. Every latency has three decimals (ms), every ratio six.

use super::Report;

/// The report as CSV with a `scope` column: `total`, `app` (the `app` column names it) or
/// `window` (the `t_s` column gives its start). Latency columns are of answered queries, ms.
pub fn to_csv(r: &Report) -> String {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    let mut row = |fields: &[String]| {
        w.write_record(fields)
            .expect("writing CSV to memory cannot fail")
    };
    row(&[
        "policy",
        "scope",
        "app",
        "t_s",
        "offered",
        "success",
        "failure",
        "rejected",
        "success_ratio",
        "p95_ms",
        "p99_ms",
        "degraded",
        "share_of_bound",
        "p50_ms",
    ]
    .map(String::from));
    let ms = |x: f64| format!("{x:.3}");
    let blank = String::new;
    for p in &r.results {
        row(&[
            p.policy.to_string(),
            "total".into(),
            blank(),
            blank(),
            p.offered.to_string(),
            p.success.to_string(),
            p.failure.to_string(),
            p.rejected.to_string(),
            format!("{:.6}", p.success_ratio),
            ms(p.latency_ms.p95),
            ms(p.latency_ms.p99),
            p.degraded.to_string(),
            p.share_of_bound.map_or_else(blank, |x| format!("{x:.6}")),
            ms(p.latency_ms.p50),
        ]);
        for a in &p.per_app {
            row(&[
                p.policy.to_string(),
                "app".into(),
                a.app.to_string(),
                blank(),
                a.offered.to_string(),
                a.success.to_string(),
                a.failure.to_string(),
                a.rejected.to_string(),
                format!("{:.6}", a.success_ratio),
                ms(a.latency_ms.p95),
                ms(a.latency_ms.p99),
                a.degraded.to_string(),
                blank(),
                ms(a.latency_ms.p50),
            ]);
        }
        for x in &p.per_window {
            row(&[
                p.policy.to_string(),
                "window".into(),
                blank(),
                x.t_s.to_string(),
                blank(),
                blank(),
                blank(),
                blank(),
                format!("{:.6}", x.success_ratio),
                blank(),
                ms(x.p99_ms),
                blank(),
                blank(),
                blank(),
            ]);
        }
    }
    if let Some(b) = &r.bound {
        row(&[
            "bound".into(),
            "bound".into(),
            blank(),
            blank(),
            b.offered.to_string(),
            format!("{:.1}", b.served),
            blank(),
            blank(),
            format!("{:.6}", b.success_ratio),
            blank(),
            blank(),
            blank(),
            blank(),
            blank(),
        ]);
    }
    String::from_utf8(w.into_inner().expect("in-memory CSV flushes"))
        .expect("CSV of UTF-8 fields is UTF-8")
}
