//! Plain-text tables for terminals, laid out by `comfy-table`: no borders, columns two spaces
//! apart, names left-aligned and figures right-aligned, every row's cells under their header
//! however long a row's name (a `per-class:<path>` row included), and the same text whatever
//! the terminal (no wrapping to its width: tests and pipes read what a person sees).
//!
//! Every ratio is printed as a percentage with two decimals (`84.23%`); a difference of two
//! ratios in percentage points (`+1.23 pp`).

use super::Report;
use continuum_term::text_table::{new_table, percent, render};
use std::fmt::Write;

/// `part / whole` as a [`percent`]; `0.00%` when `whole` is 0.
fn percent_of(part: u64, whole: u64) -> String {
    percent(if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    })
}

/// One row per policy: success ratio overall and per app, outcome shares (degraded too when a
/// row has some), latency percentiles; with `--bound`, each row's share of the bound and the
/// bound's own row.
pub fn to_text_table(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "topology {}  λ {} clients/min/antenna  {} s  seed {}",
        r.topology, r.lambda_profile, r.duration_s, r.seed
    );
    s.push_str(&results(r));
    if let Some(b) = &r.bound {
        s.push_str("share of bound: a row's success as a share of the bound's\n");
        let _ = writeln!(
            s,
            "bound: the offline upper bound (docs/model.md §16): {:.0} of {} queries served ({:.0} of them by work carried past a slice's end); {} streams ({} unservable); {} slices ({} fit), {} LPs, {} of {} columns; {:.2} s",
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
        s.push_str(&tails(r));
    }
    for p in &r.results {
        if let Some(a) = &p.actions {
            s.push_str(&action_shares(&p.policy, a));
        }
    }
    if r.results.iter().any(|p| p.allocation.is_some()) {
        s.push_str(&allocation(r));
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

/// The app names of the report's rows (those of its first row: every row has the same).
fn apps(r: &Report) -> Vec<&str> {
    r.results
        .first()
        .map(|p| p.per_app.iter().map(|a| a.app.as_str()).collect())
        .unwrap_or_default()
}

/// The main table: a row per policy, then the bound's (its success alone) with `--bound`.
fn results(r: &Report) -> String {
    let apps = apps(r);
    let degrades = r.results.iter().any(|p| p.degraded > 0);
    let bound = r.bound.is_some();
    let mut header = vec!["policy", "success"];
    if bound {
        header.push("share of bound");
    }
    header.extend(["failure", "reject"]);
    if degrades {
        header.push("degraded");
    }
    header.extend(["p50 ms", "p95 ms", "p99 ms"]);
    header.extend(&apps);
    let mut t = new_table(&header);
    for p in &r.results {
        let mut row = vec![p.policy.clone(), percent(p.success_ratio)];
        if bound {
            row.push(p.share_of_bound.map_or_else(String::new, percent));
        }
        row.push(percent_of(p.failure, p.offered));
        row.push(percent_of(p.rejected, p.offered));
        if degrades {
            row.push(percent_of(p.degraded, p.offered));
        }
        let l = &p.latency_ms;
        row.extend([l.p50, l.p95, l.p99].map(|x| format!("{x:.1}")));
        row.extend(p.per_app.iter().map(|a| percent(a.success_ratio)));
        t.add_row(row);
    }
    if let Some(b) = &r.bound {
        t.add_row(vec!["bound".to_string(), percent(b.success_ratio)]);
    }
    render(&mut t, 0, &[0])
}

/// What an allocator above dispatch did, one row per allocated policy.
fn allocation(r: &Report) -> String {
    let mut t = new_table(&["allocation", "reward/slot", "replicas±", "rebound"]);
    for p in &r.results {
        if let Some(a) = &p.allocation {
            let reward = a.mean_reward.map_or("—".to_string(), |x| format!("{x:.3}"));
            t.add_row(vec![
                p.policy.clone(),
                reward,
                a.replica_changes.to_string(),
                a.rebound.to_string(),
            ]);
        }
    }
    render(&mut t, 0, &[0])
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
    let pp = |a: f64, b: f64| format!("{:+.2} pp", 100.0 * (a - b));
    let mut s = format!(
        "learned default against the best rule of this run ({} {}):\n",
        best.policy,
        percent(best.success_ratio)
    );
    let mut t = new_table::<&str>(&[]);
    t.add_row(vec![
        "dqn".to_string(),
        pp(dqn.success_ratio, best.success_ratio),
        String::new(),
    ]);
    t.add_row(vec![
        tables.policy.clone(),
        pp(tables.success_ratio, best.success_ratio),
        "its per-class tables alone".to_string(),
    ]);
    t.add_row(vec![
        "network over tables".to_string(),
        pp(dqn.success_ratio, tables.success_ratio),
        "what the network adds over its tables".to_string(),
    ]);
    s.push_str(&render(&mut t, 2, &[0, 2]));
    Some(s)
}

/// The tail block, shown when some row mitigates: the p99 per app, the streams' tail (p99 over
/// streams of each one's slowest answer), the jobs' tail (EdgeTuner's: the mean over jobs of
/// each one's slowest answer), and what mitigation did — with the per-job kinds' counters when
/// a row uses one.
fn tails(r: &Report) -> String {
    let apps = apps(r);
    let per_job = r.results.iter().any(|p| {
        let m = &p.mitigation;
        m.jobs_triggered + m.restarted + m.restart_no_target + m.degraded > 0
    });
    let mut header = vec!["p99 ms of answered queries"];
    header.extend(&apps);
    header.extend([
        "stream", "job mean", "reissued", "won", "cancel", "wasted", "discard",
    ]);
    if per_job {
        header.extend(["triggered", "restarted", "r.won", "degraded"]);
    }
    let mut t = new_table(&header);
    for p in &r.results {
        let m = &p.mitigation;
        let mut row = vec![p.policy.clone()];
        row.extend(p.per_app.iter().map(|a| format!("{:.1}", a.latency_ms.p99)));
        row.push(format!("{:.1}", p.stream_tail_ms.p99));
        row.push(format!("{:.1}", p.job_tail_ms.mean));
        let counts = [
            m.reissued,
            m.reissue_won,
            m.cancelled,
            m.wasted,
            m.discarded,
        ];
        row.extend(counts.map(|x| x.to_string()));
        if per_job {
            let jobs = [m.jobs_triggered, m.restarted, m.restart_won, m.degraded];
            row.extend(jobs.map(|x| x.to_string()));
        }
        t.add_row(row);
    }
    render(&mut t, 0, &[0])
}

/// The shares of a meta-policy row's decisions: a row per class, a column per action that some
/// class chose (blank where that class never did).
fn action_shares(row: &str, a: &super::ActionShareReport) -> String {
    let mut s = format!("actions of {row} (share of decisions per class):\n");
    let chosen: Vec<usize> = (0..a.actions.len())
        .filter(|&x| a.share.iter().any(|c| c.get(x).is_some_and(|v| *v > 0.0)))
        .collect();
    let mut header = vec!["class"];
    header.extend(chosen.iter().map(|&x| a.actions[x].as_str()));
    let mut t = new_table(&header);
    for (c, shares) in a.classes.iter().zip(&a.share) {
        let mut cells = vec![c.clone()];
        cells.extend(chosen.iter().map(|&x| match shares.get(x) {
            Some(v) if *v > 0.0 => percent(*v),
            _ => String::new(),
        }));
        t.add_row(cells);
    }
    s.push_str(&render(&mut t, 2, &[0]));
    s
}

/// The success ratio per window, one column per policy (the time series of `simulate`).
pub fn to_time_series_text_table(r: &Report) -> String {
    let mut header = vec!["t_s"];
    header.extend(r.results.iter().map(|p| p.policy.as_str()));
    let mut t = new_table(&header);
    let n = r.results.first().map_or(0, |p| p.per_window.len());
    for i in 0..n {
        let mut row = vec![format!("{:.1}", r.results[0].per_window[i].t_s)];
        row.extend(r.results.iter().map(|p| {
            p.per_window
                .get(i)
                .map_or_else(String::new, |w| percent(w.success_ratio))
        }));
        t.add_row(row);
    }
    render(&mut t, 0, &[])
}

#[cfg(test)]
mod tests;
