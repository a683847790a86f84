//! CSV output: one row per policy overall, per app, and per window.

use super::Report;
use std::fmt::Write;

/// The report as CSV with a `scope` column: `total`, `app` (the `app` column names it) or
/// `window` (the `t_s` column gives its start). Latency columns are of answered queries, ms.
pub fn to_csv(r: &Report) -> String {
    let mut s = String::from(
        "policy,scope,app,t_s,offered,success,failure,rejected,success_ratio,p95_ms,p99_ms\n",
    );
    for p in &r.results {
        let _ = writeln!(
            s,
            "{},total,,,{},{},{},{},{:.6},{},{}",
            p.policy,
            p.offered,
            p.success,
            p.failure,
            p.rejected,
            p.success_ratio,
            p.latency_ms.p95,
            p.latency_ms.p99
        );
        for a in &p.per_app {
            let _ = writeln!(
                s,
                "{},app,{},,{},{},{},{},{:.6},{},{}",
                p.policy,
                a.app,
                a.offered,
                a.success,
                a.failure,
                a.rejected,
                a.success_ratio,
                a.latency_ms.p95,
                a.latency_ms.p99
            );
        }
        for w in &p.per_window {
            let _ = writeln!(
                s,
                "{},window,,{},,,,,{:.6},,{}",
                p.policy, w.t_s, w.success_ratio, w.p99_ms
            );
        }
    }
    s
}
