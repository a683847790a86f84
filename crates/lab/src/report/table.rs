//! Plain-text tables for terminals.

use super::Report;
use std::fmt::Write;

/// One row per policy: success ratio overall and per app, outcome shares (degraded too when a
/// row has some), latency percentiles.
pub fn to_table(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "topology {}  λ {} clients/min/antenna  {} s  seed {}",
        r.topology, r.lambda_profile, r.duration_s, r.seed
    );
    let apps: Vec<&str> = r
        .results
        .first()
        .map(|p| p.per_app.iter().map(|a| a.app.as_str()).collect())
        .unwrap_or_default();
    let degrades = r.results.iter().any(|p| p.degraded > 0);
    let _ = write!(s, "{:<28} {:>8}", "policy", "success");
    if r.bound.is_some() {
        let _ = write!(s, " {:>8}", "of bound");
    }
    let _ = write!(s, " {:>8} {:>8}", "failure", "reject");
    if degrades {
        let _ = write!(s, " {:>8}", "degraded");
    }
    let _ = write!(s, " {:>8} {:>8} {:>8}", "p50 ms", "p95 ms", "p99 ms");
    for a in &apps {
        let _ = write!(s, " {:>w$}", a, w = a.len().max(8));
    }
    s.push('\n');
    for p in &r.results {
        let pct = |x: u64| {
            if p.offered == 0 {
                0.0
            } else {
                100.0 * x as f64 / p.offered as f64
            }
        };
        let _ = write!(s, "{:<28} {:>7.2}%", p.policy, 100.0 * p.success_ratio);
        if let Some(share) = p.share_of_bound {
            let _ = write!(s, " {:>7.2}%", 100.0 * share);
        }
        let _ = write!(s, " {:>7.2}% {:>7.2}%", pct(p.failure), pct(p.rejected));
        if degrades {
            let _ = write!(s, " {:>7.2}%", pct(p.degraded));
        }
        let _ = write!(
            s,
            " {:>8.1} {:>8.1} {:>8.1}",
            p.latency_ms.p50, p.latency_ms.p95, p.latency_ms.p99
        );
        for (a, name) in p.per_app.iter().zip(&apps) {
            let _ = write!(
                s,
                " {:>w$.2}%",
                100.0 * a.success_ratio,
                w = name.len().max(8) - 1
            );
        }
        s.push('\n');
    }
    if let Some(b) = &r.bound {
        let _ = writeln!(
            s,
            "{:<28} {:>7.2}%  offline upper bound (docs/model.md §16): {:.0} of {} queries served ({:.0} of them by work carried past a slice's end); {} streams ({} unservable); {} slices ({} fit), {} LPs, {} of {} columns; {:.2} s",
            "bound",
            100.0 * b.success_ratio,
            b.served,
            b.offered,
            b.carried,
            b.streams,
            b.unservable,
            b.slices,
            b.fit,
            b.lps,
            b.columns,
            b.pairs,
            b.wall_s
        );
    }
    if let Some(g) = gain_split(r) {
        s.push_str(&g);
    }
    if r.results.iter().any(|p| p.mitigation != Default::default()) {
        s.push_str(&tails(r, &apps));
    }
    for p in &r.results {
        if let Some(a) = &p.actions {
            s.push_str(&action_shares(&p.policy, a));
        }
    }
    if r.results.iter().any(|p| p.allocation.is_some()) {
        let _ = writeln!(
            s,
            "{:<28} {:>12} {:>10} {:>9}",
            "allocation", "reward/slot", "replicas±", "rebound"
        );
        for p in &r.results {
            if let Some(a) = &p.allocation {
                let reward = a.mean_reward.map_or("—".to_string(), |x| format!("{x:.3}"));
                let _ = writeln!(
                    s,
                    "{:<28} {:>12} {:>10} {:>9}",
                    p.policy, reward, a.replica_changes, a.rebound
                );
            }
        }
    }
    let _ = writeln!(
        s,
        "simulated {} queries ({} events) in {:.2} s on {} thread(s): {:.2} M queries/s and {:.0}× real time per core",
        r.sim.queries,
        r.sim.events,
        r.sim.wall_s,
        r.sim.threads,
        r.sim.queries_per_core_s / 1e6,
        r.sim.x_real_time_per_core
    );
    s
}

/// Where the learned default's gain comes from, when the report has a meta-policy row (`dqn`),
/// the row of its per-class tables alone (`tables:<name>`) and registered rules: the
/// meta-policy, its tables alone and the network over its tables, each in percentage points
/// against the best rule of the run (one seed: docs/meta-results.md has them over seeds).
fn gain_split(r: &Report) -> Option<String> {
    let row = |name: &str| r.results.iter().find(|p| p.policy == name);
    let dqn = row("dqn")?;
    let tables = r.results.iter().find(|p| p.policy.starts_with("tables:"))?;
    let rules = continuum_core::policy::names();
    let best = r
        .results
        .iter()
        .filter(|p| rules.contains(&p.policy.as_str()))
        .max_by(|a, b| a.success_ratio.total_cmp(&b.success_ratio))?;
    let pp = |a: f64, b: f64| 100.0 * (a - b);
    let mut s = format!(
        "learned default against the best rule of this run ({} {:.2}%):\n",
        best.policy,
        100.0 * best.success_ratio
    );
    let _ = writeln!(
        s,
        "  {:<26} {:>+7.2} pp",
        "dqn",
        pp(dqn.success_ratio, best.success_ratio)
    );
    let _ = writeln!(
        s,
        "  {:<26} {:>+7.2} pp   its per-class tables alone",
        tables.policy,
        pp(tables.success_ratio, best.success_ratio)
    );
    let _ = writeln!(
        s,
        "  {:<26} {:>+7.2} pp   what the network adds over its tables",
        "network over tables",
        pp(dqn.success_ratio, tables.success_ratio)
    );
    Some(s)
}

/// The tail block, shown when some row mitigates: the p99 per app, the streams' tail (p99 over
/// streams of each one's slowest answer), the jobs' tail (EdgeTuner's: the mean over jobs of
/// each one's slowest answer), and what mitigation did — with the per-job kinds' counters when
/// a row uses one.
fn tails(r: &Report, apps: &[&str]) -> String {
    let per_job = r.results.iter().any(|p| {
        let m = &p.mitigation;
        m.jobs_triggered + m.restarted + m.restart_no_target + m.degraded > 0
    });
    let mut s = format!("{:<28}", "p99 ms of answered queries");
    for a in apps {
        let _ = write!(s, " {:>w$}", a, w = a.len().max(8));
    }
    let _ = write!(
        s,
        " {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "stream", "job mean", "reissued", "won", "cancel", "wasted", "discard"
    );
    if per_job {
        let _ = write!(
            s,
            " {:>9} {:>9} {:>9} {:>9}",
            "triggered", "restarted", "r.won", "degraded"
        );
    }
    s.push('\n');
    for p in &r.results {
        let _ = write!(s, "{:<28}", p.policy);
        for (a, name) in p.per_app.iter().zip(apps) {
            let _ = write!(s, " {:>w$.1}", a.latency_ms.p99, w = name.len().max(8));
        }
        let m = &p.mitigation;
        let _ = write!(
            s,
            " {:>9.1} {:>9.1} {:>9} {:>9} {:>9} {:>9} {:>9}",
            p.stream_tail_ms.p99,
            p.job_tail_ms.mean,
            m.reissued,
            m.reissue_won,
            m.cancelled,
            m.wasted,
            m.discarded
        );
        if per_job {
            let _ = write!(
                s,
                " {:>9} {:>9} {:>9} {:>9}",
                m.jobs_triggered, m.restarted, m.restart_won, m.degraded
            );
        }
        s.push('\n');
    }
    s
}

/// The shares of a meta-policy row's decisions: one line per class, `policy share%` pairs.
fn action_shares(row: &str, a: &super::ActionShareReport) -> String {
    let mut s = format!("actions of {row} (share of decisions per class):\n");
    for (c, shares) in a.classes.iter().zip(&a.share) {
        let _ = write!(s, "  {c:<26}");
        for (name, x) in a.actions.iter().zip(shares) {
            if *x > 0.0 {
                let _ = write!(s, " {name} {:.1}%", 100.0 * x);
            }
        }
        s.push('\n');
    }
    s
}

/// The success ratio per window, one column per policy (the time series of `simulate`).
pub fn to_time_series_table(r: &Report) -> String {
    let mut s = String::new();
    let _ = write!(s, "{:>8}", "t_s");
    for p in &r.results {
        let _ = write!(s, " {:>w$}", p.policy, w = p.policy.len().max(8));
    }
    s.push('\n');
    let n = r.results.first().map_or(0, |p| p.per_window.len());
    for i in 0..n {
        let _ = write!(s, "{:>8.1}", r.results[0].per_window[i].t_s);
        for p in &r.results {
            let _ = write!(
                s,
                " {:>w$.2}%",
                100.0 * p.per_window[i].success_ratio,
                w = p.policy.len().max(8) - 1
            );
        }
        s.push('\n');
    }
    s
}
