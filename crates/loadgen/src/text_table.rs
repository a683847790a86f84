//! The load report as a text table (`--format table`), laid out by `comfy-table` as
//! `compare`'s tables are: no borders, columns two spaces apart, every cell under its header
//! whatever the app names and gateway URLs, the same text whatever the terminal. Ratios are
//! percentages with two decimals (`84.23%`), as `compare` prints them; the JSON report keeps
//! them as ratios.

use super::report::{GatewayCounts, LatencySummary, LoadReport, QueryCounts, StreamCounts};
use continuum_term::text_table::{Table, new_table, percent};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// `t`'s text, every line indented by `indent` spaces, the first column (names) left-aligned.
fn render(t: &mut Table, indent: u16) -> String {
    continuum_term::text_table::render(t, indent, &[0])
}

/// One row per gateway of a fleet: what it opened and answered, how often it could not be
/// reached, and the streams handed over to it.
fn gateways_table(gateways: &[GatewayCounts]) -> String {
    let mut t = new_table(&[
        "gateway",
        "opened",
        "answered",
        "unreachable",
        "handovers in",
    ]);
    for g in gateways {
        t.add_row(vec![
            g.url.clone(),
            g.opened.to_string(),
            g.answered.to_string(),
            g.unreachable.to_string(),
            g.handovers_in.to_string(),
        ]);
    }
    render(&mut t, 2)
}

fn map_line(m: &BTreeMap<String, u64>) -> String {
    if m.is_empty() {
        return "-".to_string();
    }
    m.iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl LoadReport {
    /// The report as a text table.
    pub fn to_text_table(&self) -> String {
        let c = &self.config;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "gateway {}  λ {} clients/min  duration {} s  seed {}  scheduler {}  body {}{}",
            c.gateway,
            c.lambda,
            c.duration_s,
            c.seed,
            c.scheduler,
            c.body,
            if self.interrupted {
                "  (interrupted)"
            } else {
                ""
            }
        );
        let _ = writeln!(
            s,
            "elapsed {:.1} s  offered {:.1} qps  sent {:.1} qps  send lag p99 {:.2} ms max {:.2} ms",
            self.elapsed_s,
            self.offered_qps,
            self.sent_qps,
            self.send_lag_ms.p99,
            self.send_lag_ms.max
        );
        let _ = writeln!(
            s,
            "streams: {} arrived, {} opened, refused: {}",
            self.streams.arrived,
            self.streams.opened,
            map_line(&self.streams.refused)
        );
        let _ = writeln!(s);
        s.push_str(&self.per_app_table());
        let _ = writeln!(s);
        let _ = writeln!(s, "open status:  {}", map_line(&self.open_status));
        let _ = writeln!(s, "infer status: {}", map_line(&self.infer_status));
        let _ = writeln!(s, "close status: {}", map_line(&self.close_status));
        let _ = writeln!(s, "gateway says: {}", map_line(&self.gateway_outcome));
        let f = &self.fleet;
        if f.gateways.len() > 1 {
            let _ = writeln!(
                s,
                "fleet ({}): handovers {}  resent {}  streams lost {}  failover p50 {:.1} ms max {:.1} ms",
                c.assign,
                f.handovers,
                f.resent,
                f.streams_lost,
                f.failover_ms.p50,
                f.failover_ms.max
            );
            s.push_str(&gateways_table(&f.gateways));
        }
        for e in &self.errors {
            let _ = writeln!(s, "error: {e}");
        }
        s
    }

    /// The table of queries per app and in total: streams opened of arrived, query counts by
    /// outcome, the success ratio as a percentage, latency percentiles.
    fn per_app_table(&self) -> String {
        let mut t = new_table(&[
            "app",
            "streams",
            "offered",
            "success",
            "failure",
            "rejected",
            "success %",
            "p50 ms",
            "p95 ms",
            "p99 ms",
            "max ms",
        ]);
        let mut row = |name: &str, st: &StreamCounts, q: &QueryCounts, l: &LatencySummary| {
            let mut cells = vec![
                name.to_string(),
                format!("{}/{}", st.opened, st.arrived),
                q.offered.to_string(),
                q.success.to_string(),
                q.failure.to_string(),
                q.rejected.to_string(),
                percent(q.success_ratio),
            ];
            cells.extend([l.p50, l.p95, l.p99, l.max].map(|x| format!("{x:.2}")));
            t.add_row(cells);
        };
        for a in &self.per_app {
            row(&a.app, &a.streams, &a.queries, &a.latency_ms);
        }
        row("total", &self.streams, &self.queries, &self.latency_ms);
        render(&mut t, 0)
    }
}
