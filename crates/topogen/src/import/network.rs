//! A real network as read from a file: points of presence (PoPs) with coordinates and the links
//! between them. Two formats: Topology Zoo GML (`node [ id label Longitude Latitude ]`,
//! `edge [ source target ]`) and networkx node-link JSON (`nodes: [{id, name|label,
//! pos: [lon, lat] | Longitude, Latitude}]`, `edges` or `links: [{source, target}]`, the form
//! TopoHub ships Topology Zoo, SNDlib and CAIDA networks in).
//!
//! What cannot be placed is not dropped silently: nodes without coordinates and nodes outside
//! the largest connected component are removed and listed in [`Network::dropped`].

use super::gml::{self, Pair, Value};
use continuum_core::config::{ConfigError, Source};
use std::collections::{BTreeSet, HashMap};

/// One point of presence.
#[derive(Debug, Clone, PartialEq)]
pub struct Pop {
    /// Its name in the file (label, name or id).
    pub name: String,
    /// Longitude, degrees.
    pub lon: f64,
    /// Latitude, degrees.
    pub lat: f64,
}

/// A network: PoPs and undirected links (index pairs, each once, no self-loops).
#[derive(Debug, Clone, PartialEq)]
pub struct Network {
    /// The network's name in the file, if it has one.
    pub name: Option<String>,
    /// The PoPs kept (located and in the largest connected component).
    pub pops: Vec<Pop>,
    /// Links between kept PoPs, (a, b) with a < b, sorted.
    pub links: Vec<(usize, usize)>,
    /// Nodes removed, each with the reason.
    pub dropped: Vec<String>,
}

/// A node as read, before the checks.
struct RawNode {
    id: String,
    name: String,
    at: Option<(f64, f64)>,
}

fn err(src: &Source, line: usize, column: usize, field: String, message: String) -> ConfigError {
    ConfigError {
        file: src.path.clone(),
        line,
        column,
        field,
        message,
    }
}

/// Reads a GML or node-link JSON network (JSON when the text starts with `{`).
pub fn read(src: &Source) -> Result<Network, ConfigError> {
    if src.text.trim_start().starts_with('{') {
        from_json(src)
    } else {
        from_gml(src)
    }
}

fn gml_id(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::Num(n) => Some(format!("{n}")),
        Value::Str(s) => Some(s.clone()),
        Value::List(_) => None,
    }
}

fn gml_num(p: &Pair, key: &str) -> Option<f64> {
    match p.get(key)? {
        Value::Num(n) => Some(*n),
        _ => None,
    }
}

fn from_gml(src: &Source) -> Result<Network, ConfigError> {
    let top = gml::parse(src)?;
    let graph = top
        .iter()
        .find(|p| p.key == "graph" && matches!(p.value, Value::List(_)))
        .ok_or_else(|| src.error_file("graph", "no `graph [ … ]` list in the GML file"))?;
    let Value::List(items) = &graph.value else {
        unreachable!("matched above")
    };
    let name = match graph.get("Network").or_else(|| graph.get("label")) {
        Some(Value::Str(s)) => Some(s.clone()),
        _ => None,
    };
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    for p in items {
        match p.key.as_str() {
            "node" => {
                let id = gml_id(p.get("id")).ok_or_else(|| {
                    err(
                        src,
                        p.line,
                        p.column,
                        "node.id".into(),
                        "a node needs an `id`".into(),
                    )
                })?;
                let name = match p.get("label") {
                    Some(Value::Str(s)) => s.clone(),
                    _ => id.clone(),
                };
                let at = gml_num(p, "Longitude").zip(gml_num(p, "Latitude"));
                nodes.push((RawNode { id, name, at }, p.line, p.column));
            }
            "edge" => {
                let s = gml_id(p.get("source"));
                let t = gml_id(p.get("target"));
                let (Some(s), Some(t)) = (s, t) else {
                    return Err(err(
                        src,
                        p.line,
                        p.column,
                        "edge".into(),
                        "an edge needs a `source` and a `target`".into(),
                    ));
                };
                edges.push((s, t, p.line, p.column));
            }
            _ => {}
        }
    }
    assemble(src, name, nodes, edges)
}

fn json_id(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn from_json(src: &Source) -> Result<Network, ConfigError> {
    use serde_json::Value as J;
    let v: J = serde_json::from_str(&src.text)
        .map_err(|e| err(src, e.line(), e.column(), String::new(), e.to_string()))?;
    let file = |field: &str, m: String| src.error_file(field, m);
    let name = v
        .get("graph")
        .and_then(|g| g.get("name").or_else(|| g.get("Network")))
        .and_then(J::as_str)
        .map(str::to_string);
    let raw_nodes = v
        .get("nodes")
        .and_then(J::as_array)
        .ok_or_else(|| file("nodes", "expected a list of nodes".into()))?;
    let mut nodes = Vec::new();
    for (i, n) in raw_nodes.iter().enumerate() {
        let id = n.get("id").and_then(json_id).ok_or_else(|| {
            file(
                &format!("nodes[{i}].id"),
                "expected a string or number".into(),
            )
        })?;
        let name = ["label", "name"]
            .iter()
            .find_map(|k| n.get(*k).and_then(J::as_str))
            .map_or_else(|| id.clone(), str::to_string);
        let at = match n.get("pos").and_then(J::as_array) {
            Some(p) => match (p.first().and_then(J::as_f64), p.get(1).and_then(J::as_f64)) {
                (Some(lon), Some(lat)) => Some((lon, lat)),
                _ => {
                    return Err(file(
                        &format!("nodes[{i}].pos"),
                        "expected [longitude, latitude]".into(),
                    ));
                }
            },
            None => n
                .get("Longitude")
                .and_then(J::as_f64)
                .zip(n.get("Latitude").and_then(J::as_f64)),
        };
        nodes.push((RawNode { id, name, at }, 0, 0));
    }
    let key = if v.get("edges").is_some() {
        "edges"
    } else {
        "links"
    };
    let raw_edges = v
        .get(key)
        .and_then(J::as_array)
        .ok_or_else(|| file("edges", "expected a list of `edges` or `links`".into()))?;
    let mut edges = Vec::new();
    for (i, e) in raw_edges.iter().enumerate() {
        let s = e.get("source").and_then(json_id);
        let t = e.get("target").and_then(json_id);
        let (Some(s), Some(t)) = (s, t) else {
            return Err(file(
                &format!("{key}[{i}]"),
                "an edge needs a `source` and a `target`".into(),
            ));
        };
        edges.push((s, t, 0, 0));
    }
    assemble(src, name, nodes, edges)
}

/// Checks ids, drops unlocated nodes and all but the largest component.
fn assemble(
    src: &Source,
    name: Option<String>,
    nodes: Vec<(RawNode, usize, usize)>,
    edges: Vec<(String, String, usize, usize)>,
) -> Result<Network, ConfigError> {
    let mut index: HashMap<String, usize> = HashMap::new();
    for (i, (n, line, column)) in nodes.iter().enumerate() {
        if let Some((lon, lat)) = n.at
            && !(lon.is_finite() && lat.is_finite() && lon.abs() <= 180.0 && lat.abs() <= 90.0)
        {
            return Err(err(
                src,
                *line,
                *column,
                format!("node {}", n.id),
                format!("coordinates out of range: longitude {lon}, latitude {lat}"),
            ));
        }
        if index.insert(n.id.clone(), i).is_some() {
            return Err(err(
                src,
                *line,
                *column,
                format!("node {}", n.id),
                "duplicate node id".into(),
            ));
        }
    }
    let mut adj: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); nodes.len()];
    for (s, t, line, column) in &edges {
        let look = |id: &String| {
            index.get(id).copied().ok_or_else(|| {
                err(
                    src,
                    *line,
                    *column,
                    "edge".into(),
                    format!("`{id}` is not a node id"),
                )
            })
        };
        let (a, b) = (look(s)?, look(t)?);
        if a != b {
            adj[a].insert(b);
            adj[b].insert(a);
        }
    }
    let mut dropped = Vec::new();
    let located: Vec<bool> = nodes.iter().map(|(n, ..)| n.at.is_some()).collect();
    for (n, ..) in nodes.iter().filter(|(n, ..)| n.at.is_none()) {
        dropped.push(format!("{} (no coordinates)", n.name));
    }
    // Connected components of the located nodes; keep the largest (ties: the first).
    let mut comp = vec![usize::MAX; nodes.len()];
    let mut sizes = Vec::new();
    for s in 0..nodes.len() {
        if !located[s] || comp[s] != usize::MAX {
            continue;
        }
        let c = sizes.len();
        let mut stack = vec![s];
        comp[s] = c;
        let mut size = 0;
        while let Some(u) = stack.pop() {
            size += 1;
            for &v in &adj[u] {
                if located[v] && comp[v] == usize::MAX {
                    comp[v] = c;
                    stack.push(v);
                }
            }
        }
        sizes.push(size);
    }
    let Some(big) = (0..sizes.len()).max_by_key(|&c| (sizes[c], std::cmp::Reverse(c))) else {
        return Err(src.error_file("nodes", "no node has coordinates".to_string()));
    };
    let mut new_index = vec![usize::MAX; nodes.len()];
    let mut pops = Vec::new();
    for (i, (n, ..)) in nodes.iter().enumerate() {
        if !located[i] {
            continue;
        }
        if comp[i] != big {
            dropped.push(format!(
                "{} (not connected to the largest component)",
                n.name
            ));
            continue;
        }
        let (lon, lat) = n.at.expect("located");
        new_index[i] = pops.len();
        pops.push(Pop {
            name: n.name.clone(),
            lon,
            lat,
        });
    }
    let mut links: Vec<(usize, usize)> = Vec::new();
    for (a, nb) in adj.iter().enumerate() {
        for &b in nb {
            let (x, y) = (new_index[a], new_index[b]);
            if a < b && x != usize::MAX && y != usize::MAX {
                links.push((x.min(y), x.max(y)));
            }
        }
    }
    links.sort_unstable();
    Ok(Network {
        name,
        pops,
        links,
        dropped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GML: &str = "graph [\n  Network \"Tiny\"\n  node [ id 0 label \"A\" Longitude 0 Latitude 0 ]\n  node [ id 1 label \"B\" Longitude 1 Latitude 0 ]\n  node [ id 2 label \"C\" Longitude 2 Latitude 0 ]\n  node [ id 3 label \"Nowhere\" ]\n  node [ id 4 label \"Island\" Longitude 9 Latitude 9 ]\n  edge [ source 0 target 1 ]\n  edge [ source 1 target 2 ]\n  edge [ source 2 target 1 ]\n  edge [ source 1 target 3 ]\n]\n";

    #[test]
    fn gml_and_node_link_json_give_the_same_network() {
        let g = read(&Source::inline("t.gml", GML)).unwrap();
        assert_eq!(g.name.as_deref(), Some("Tiny"));
        assert_eq!(g.pops.len(), 3);
        assert_eq!(g.links, vec![(0, 1), (1, 2)]);
        assert_eq!(
            g.dropped,
            vec![
                "Nowhere (no coordinates)".to_string(),
                "Island (not connected to the largest component)".to_string()
            ]
        );
        let json = r#"{"graph": {"name": "Tiny"}, "nodes": [
            {"id": "0", "name": "A", "pos": [0, 0]}, {"id": "1", "name": "B", "pos": [1, 0]},
            {"id": "2", "name": "C", "pos": [2, 0]}, {"id": "3", "name": "Nowhere"},
            {"id": "4", "name": "Island", "pos": [9, 9]}],
            "edges": [{"source": "0", "target": "1"}, {"source": "1", "target": "2"},
            {"source": "1", "target": "3"}]}"#;
        let j = read(&Source::inline("t.json", json)).unwrap();
        assert_eq!(j, g);
    }

    #[test]
    fn bad_networks_are_refused_with_the_place() {
        let e = read(&Source::inline(
            "t.gml",
            "graph [\n node [ id 0 Longitude 0 Latitude 0 ]\n edge [ source 0 target 7 ]\n]",
        ))
        .unwrap_err();
        assert_eq!((e.line, e.column), (3, 2));
        assert!(e.message.contains("`7` is not a node id"), "{e}");
        let e = read(&Source::inline(
            "t.gml",
            "graph [\n node [ id 0 Longitude 0 Latitude 95 ]\n]",
        ))
        .unwrap_err();
        assert!(e.message.contains("out of range"), "{e}");
        let e = read(&Source::inline(
            "t.json",
            "{\"nodes\": [{\"id\": 0, \"pos\": [1]}], \"edges\": []}",
        ))
        .unwrap_err();
        assert_eq!(e.field, "nodes[0].pos");
        let e = read(&Source::inline("t.json", "{\"nodes\": [}")).unwrap_err();
        assert_eq!(e.line, 1);
        let e = read(&Source::inline("t.gml", "graph [ node [ id 0 ] ]")).unwrap_err();
        assert!(e.message.contains("no node has coordinates"), "{e}");
    }
}
