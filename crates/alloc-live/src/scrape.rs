//! Reading a gateway's demand from its Prometheus text: queries per app (every outcome) and
//! the declared query rates of the streams it refused per app.

use continuum_wire::parse_prometheus;
use std::collections::BTreeMap;

/// Cumulative per-app counters of one gateway.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AppCounters {
    /// `continuum_gateway_queries_total`, summed over outcomes, variants and clusters.
    pub queries: BTreeMap<String, f64>,
    /// `continuum_gateway_refused_qps_total` (or, from a gateway before the rename, its old
    /// name `continuum_gateway_refused_fps_total`).
    pub refused_qps: BTreeMap<String, f64>,
}

/// Parses the counters an allocator reads; other samples are skipped.
pub(crate) fn parse(text: &str) -> AppCounters {
    let mut out = AppCounters::default();
    let samples = parse_prometheus(text);
    // A gateway exports the refused rate under both names while the old one is deprecated:
    // read the new one, and the old only from a gateway that has no new one.
    let refused = if samples
        .iter()
        .any(|s| s.name == "continuum_gateway_refused_qps_total")
    {
        "continuum_gateway_refused_qps_total"
    } else {
        "continuum_gateway_refused_fps_total"
    };
    for sample in samples {
        let map = match sample.name.as_str() {
            "continuum_gateway_queries_total" => &mut out.queries,
            n if n == refused => &mut out.refused_qps,
            _ => continue,
        };
        if let Some(app) = sample.label("app") {
            *map.entry(app.to_string()).or_default() += sample.value;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_queries_per_app_and_reads_refused_rates() {
        let text = r#"# HELP continuum_gateway_queries Queries by outcome, app, variant and cluster
# TYPE continuum_gateway_queries counter
continuum_gateway_queries_total{outcome="success",app="ar",variant="s",cluster="co-0"} 10
continuum_gateway_queries_total{outcome="rejected",app="ar",variant="-",cluster="-"} 2
continuum_gateway_queries_total{app="cams",outcome="success",variant="l",cluster="cloud"} 4
continuum_gateway_refused_fps_total{app="cams"} 22.5
continuum_gateway_stream_opens_total{result="bound"} 3
"#;
        let c = parse(text);
        assert_eq!(c.queries["ar"], 12.0);
        assert_eq!(c.queries["cams"], 4.0);
        assert_eq!(c.refused_qps["cams"], 22.5);
        assert_eq!(c.refused_qps.len(), 1);
        // A gateway that exports both names is read once, from the new one.
        let both = format!("{text}continuum_gateway_refused_qps_total{{app=\"cams\"}} 22.5\n");
        assert_eq!(parse(&both).refused_qps["cams"], 22.5);
    }

    /// Label values with escapes, labels in any order, a value with a timestamp: what a naive
    /// split on quotes reads wrongly.
    #[test]
    fn reads_escaped_labels() {
        let text = "continuum_gateway_queries_total{variant=\"a\\\"b\",app=\"x,y\\\\\"} 3 1712345678000\n\
                    continuum_gateway_queries_total{app=\"x,y\\\\\",variant=\"c\"} 1\n";
        let c = parse(text);
        assert_eq!(c.queries.len(), 1, "{:?}", c.queries);
        assert_eq!(c.queries["x,y\\"], 4.0);
    }
}
