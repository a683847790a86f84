//! Reading a gateway's demand from its Prometheus text: queries per app (every outcome) and
//! the declared frame rates of the streams it refused per app.

use std::collections::BTreeMap;

/// Cumulative per-app counters of one gateway.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AppCounters {
    /// `continuum_gateway_queries_total`, summed over outcomes, variants and clusters.
    pub queries: BTreeMap<String, f64>,
    /// `continuum_gateway_refused_fps_total`.
    pub refused_fps: BTreeMap<String, f64>,
}

/// The value of label `name` in a sample's label text (`a="x",b="y"`).
fn label<'a>(labels: &'a str, name: &str) -> Option<&'a str> {
    let mut rest = labels;
    while !rest.is_empty() {
        let (key, after) = rest.split_once("=\"")?;
        let end = after.find('"')?;
        if key.trim_start_matches(',').trim() == name {
            return Some(&after[..end]);
        }
        rest = &after[end + 1..];
    }
    None
}

/// Parses the counters an allocator reads; other lines are skipped.
pub fn parse(text: &str) -> AppCounters {
    let mut out = AppCounters::default();
    for line in text.lines() {
        let (map, rest) = if let Some(r) = line.strip_prefix("continuum_gateway_queries_total{") {
            (&mut out.queries, r)
        } else if let Some(r) = line.strip_prefix("continuum_gateway_refused_fps_total{") {
            (&mut out.refused_fps, r)
        } else {
            continue;
        };
        let Some((labels, value)) = rest.rsplit_once('}') else {
            continue;
        };
        let (Some(app), Ok(v)) = (label(labels, "app"), value.trim().parse::<f64>()) else {
            continue;
        };
        *map.entry(app.to_string()).or_default() += v;
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
        assert_eq!(c.refused_fps["cams"], 22.5);
        assert_eq!(c.refused_fps.len(), 1);
    }
}
