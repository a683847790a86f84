//! CSV output: one row per policy overall, per app, and per window.

use super::Report;
use std::fmt::Write;

/// The report as CSV with a `scope` column: `total`, `app` (the `app` column names it) or
/// `window` (the `t_s` column gives its start).
pub fn to_csv(r: &Report) -> String {
    let mut s =
        String::from("policy,scope,app,t_s,offered,success,failure,rejected,success_ratio\n");
    for p in &r.results {
        let _ = writeln!(
            s,
            "{},total,,,{},{},{},{},{:.6}",
            p.policy, p.offered, p.success, p.failure, p.rejected, p.success_ratio
        );
        for a in &p.per_app {
            let _ = writeln!(
                s,
                "{},app,{},,{},{},{},{},{:.6}",
                p.policy, a.app, a.offered, a.success, a.failure, a.rejected, a.success_ratio
            );
        }
        for w in &p.per_window {
            let _ = writeln!(
                s,
                "{},window,,{},,,,,{:.6}",
                p.policy, w.t_s, w.success_ratio
            );
        }
    }
    s
}
