//! The load report as a text table (`--format table`).

use super::report::{LatencySummary, LoadReport, QueryCounts, StreamCounts};
use std::collections::BTreeMap;
use std::fmt::Write as _;

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
    pub fn to_table(&self) -> String {
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
        let _ = writeln!(
            s,
            "{:<24} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>9} {:>9}",
            "app",
            "streams",
            "offered",
            "success",
            "failure",
            "rejected",
            "ratio",
            "p50 ms",
            "p95 ms",
            "p99 ms",
            "max ms"
        );
        let row =
            |s: &mut String, name: &str, st: &StreamCounts, q: &QueryCounts, l: &LatencySummary| {
                let _ = writeln!(
                    s,
                    "{:<24} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8.4} {:>9.2} {:>9.2} {:>9.2} {:>9.2}",
                    name,
                    format!("{}/{}", st.opened, st.arrived),
                    q.offered,
                    q.success,
                    q.failure,
                    q.rejected,
                    q.success_ratio,
                    l.p50,
                    l.p95,
                    l.p99,
                    l.max
                );
            };
        for a in &self.per_app {
            row(&mut s, &a.app, &a.streams, &a.queries, &a.latency_ms);
        }
        row(
            &mut s,
            "total",
            &self.streams,
            &self.queries,
            &self.latency_ms,
        );
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
            for g in &f.gateways {
                let _ = writeln!(
                    s,
                    "  {:<28} opened {:>6}  answered {:>8}  unreachable {:>6}  handovers in {:>5}",
                    g.url, g.opened, g.answered, g.unreachable, g.handovers_in
                );
            }
        }
        for e in &self.errors {
            let _ = writeln!(s, "error: {e}");
        }
        s
    }
}
