//! `continuum topology import`: a real network (Topology Zoo GML or node-link JSON, [`network`])
//! turned into a topology file, by stated rules:
//!
//! - **Delays.** A link between two PoPs is its great-circle length (haversine, Earth radius
//!   6 371 km) × the route factor (default 1.5: fibre follows roads and rights of way, not the
//!   great circle — an assumption, in the range measured for fibre routes) × 4.9 µs/km (light in
//!   silica fibre, group index ≈ 1.468 as in ITU-T G.652 fibres: c / 1.468 ≈ 204 000 km/s). The
//!   delay between two PoPs is the shortest path over those links (Dijkstra).
//! - **Sites.** Every PoP is a central office with `antennas_per_co` antennas (access links of
//!   `access_ms`, as `topology generate`). The cloud sits at the PoP with the least total delay
//!   to every other (closeness centrality) and is `cloud_extra_ms` beyond it (peering and the
//!   data centre's own network: an assumption). Regional DCs sit at `regional_dcs` PoPs chosen
//!   by greedy k-median on the delay (each step adds the PoP that most lowers the total delay
//!   from every PoP to its nearest DC; default k = ⌈√PoPs⌉); each central office hangs under
//!   its nearest regional DC, each regional DC under the cloud. No link is shorter than
//!   `min_link_ms`.
//! - **Mesh.** The file is a tree; where the real mesh is faster than the tree path between a
//!   scheduler and a cluster by more than `override_threshold_ms`, the mesh delay is written as
//!   an `overrides` entry (jitter: the same fraction of the mean as the links').
//! - Per-site resources and deployment mixes are `topology generate`'s (options `cpu`, `gpu`,
//!   `antenna_gpu_share`): the same at every PoP, whatever its size in the real network.
//!
//! Sans-IO: text in, text out; the CLI validates the result like a hand-written file.

mod gml;
pub mod network;

use crate::generate::{GenerateOptions, antenna_gpu, link, write_layers_and_cloud};
use continuum_core::rng::{Purpose, stream_rng};
use network::Network;
use rand::Rng;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fmt::Write;

/// One-way delay of light in silica fibre, µs per km (group index ≈ 1.468).
pub(crate) const FIBRE_US_PER_KM: f64 = 4.9;
/// Earth's mean radius, km.
const EARTH_RADIUS_KM: f64 = 6371.0;

/// How to map a network onto the hierarchy.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportOptions {
    /// Topology name (default: the network's).
    pub name: Option<String>,
    /// Antennas per PoP.
    pub antennas_per_co: usize,
    /// Regional DCs (default ⌈√PoPs⌉).
    pub regional_dcs: Option<usize>,
    /// Fibre route length over great-circle length.
    pub route_factor: f64,
    /// One-way delay of the access link, ms.
    pub access_ms: f64,
    /// Extra one-way delay from the cloud's PoP to the cloud, ms.
    pub cloud_extra_ms: f64,
    /// Floor of every link's delay, ms.
    pub min_link_ms: f64,
    /// Write a mesh delay as an override when it beats the tree path by more than this, ms
    /// (`None`: no overrides, the tree only).
    pub override_threshold_ms: Option<f64>,
    /// Per-site resources, jitter, GPU share and seed (`topology generate`'s options; its
    /// fan-outs and link delays are not used).
    pub sites: GenerateOptions,
    /// A line of attribution for the source data, written at the top of the file.
    pub attribution: Option<String>,
}

impl Default for ImportOptions {
    fn default() -> Self {
        Self {
            name: None,
            antennas_per_co: 2,
            regional_dcs: None,
            route_factor: 1.5,
            access_ms: 1.5,
            cloud_extra_ms: 5.0,
            min_link_ms: 0.1,
            override_threshold_ms: Some(0.5),
            sites: GenerateOptions::default(),
            attribution: None,
        }
    }
}

impl ImportOptions {
    /// Checks the options; the message names the option.
    pub fn validate(&self) -> Result<(), String> {
        if self.antennas_per_co == 0 {
            return Err("--antennas-per-co: expected at least 1".into());
        }
        if self.regional_dcs == Some(0) {
            return Err("--regional-dcs: expected at least 1".into());
        }
        if !(self.route_factor.is_finite() && self.route_factor >= 1.0) {
            return Err("--route-factor: expected a factor >= 1".into());
        }
        for (v, name) in [
            (self.access_ms, "--access-ms"),
            (self.cloud_extra_ms, "--cloud-extra-ms"),
            (self.min_link_ms, "--min-link-ms"),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("{name}: expected a delay in ms >= 0"));
            }
        }
        if self
            .override_threshold_ms
            .is_some_and(|t| !(t.is_finite() && t >= 0.0))
        {
            return Err("--override-threshold-ms: expected a delay in ms >= 0".into());
        }
        self.sites.validate()
    }
}

/// What an import did, for the user.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportSummary {
    /// PoPs kept (central offices).
    pub pops: usize,
    /// Real links between them.
    pub links: usize,
    /// Regional DCs.
    pub regional_dcs: usize,
    /// Antennas.
    pub antennas: usize,
    /// Override entries written (mesh faster than the tree).
    pub overrides: usize,
    /// The largest PoP-to-PoP delay over the mesh, ms.
    pub diameter_ms: f64,
    /// Nodes of the file left out, with why.
    pub dropped: Vec<String>,
}

/// The hierarchy the import builds over the PoPs.
struct Tree {
    /// The cloud's PoP.
    cloud: usize,
    /// The regional DCs' PoPs.
    dcs: Vec<usize>,
    /// Per PoP, the index (into `dcs`) of its central office's regional DC.
    parent_dc: Vec<usize>,
    /// Per PoP, the delay of its central office's link to its regional DC, ms.
    co_link: Vec<f64>,
    /// Per regional DC, the delay of its link to the cloud, ms.
    dc_link: Vec<f64>,
}

/// Great-circle distance, km.
pub(crate) fn haversine_km(a: (f64, f64), b: (f64, f64)) -> f64 {
    let (lon1, lat1) = (a.0.to_radians(), a.1.to_radians());
    let (lon2, lat2) = (b.0.to_radians(), b.1.to_radians());
    let h = ((lat2 - lat1) / 2.0).sin().powi(2)
        + lat1.cos() * lat2.cos() * ((lon2 - lon1) / 2.0).sin().powi(2);
    2.0 * EARTH_RADIUS_KM * h.sqrt().min(1.0).asin()
}

#[derive(PartialEq)]
struct Item(f64, usize);
impl Eq for Item {}
impl PartialOrd for Item {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Item {
    fn cmp(&self, o: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap.
        o.0.total_cmp(&self.0).then(o.1.cmp(&self.1))
    }
}

/// All-pairs shortest-path delays, ms, over the network's links.
pub(crate) fn delays_ms(net: &Network, route_factor: f64) -> Vec<Vec<f64>> {
    let n = net.pops.len();
    let mut adj: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
    for &(a, b) in &net.links {
        let (pa, pb) = (&net.pops[a], &net.pops[b]);
        let ms = haversine_km((pa.lon, pa.lat), (pb.lon, pb.lat)) * route_factor * FIBRE_US_PER_KM
            / 1000.0;
        adj[a].push((b, ms));
        adj[b].push((a, ms));
    }
    (0..n)
        .map(|s| {
            let mut d = vec![f64::INFINITY; n];
            d[s] = 0.0;
            let mut heap = BinaryHeap::from([Item(0.0, s)]);
            while let Some(Item(du, u)) = heap.pop() {
                if du > d[u] {
                    continue;
                }
                for &(v, w) in &adj[u] {
                    if du + w < d[v] {
                        d[v] = du + w;
                        heap.push(Item(d[v], v));
                    }
                }
            }
            d
        })
        .collect()
}

/// The cloud's PoP (least total delay) and the regional DCs' PoPs (greedy k-median).
pub(crate) fn choose_sites(d: &[Vec<f64>], k: usize) -> (usize, Vec<usize>) {
    let n = d.len();
    let total = |i: usize| d[i].iter().sum::<f64>();
    let cloud = (0..n)
        .min_by(|&a, &b| total(a).total_cmp(&total(b)).then(a.cmp(&b)))
        .expect("a network has a PoP");
    let mut chosen: Vec<usize> = Vec::new();
    let mut nearest = vec![f64::INFINITY; n];
    for _ in 0..k.min(n) {
        let cost = |c: usize| -> f64 { (0..n).map(|j| nearest[j].min(d[c][j])).sum() };
        let best = (0..n)
            .filter(|c| !chosen.contains(c))
            .min_by(|&a, &b| cost(a).total_cmp(&cost(b)).then(a.cmp(&b)))
            .expect("fewer DCs than PoPs");
        for j in 0..n {
            nearest[j] = nearest[j].min(d[best][j]);
        }
        chosen.push(best);
    }
    (cloud, chosen)
}

/// A cluster id from a PoP name: lowercase ASCII letters and digits, `-` between words.
fn slug(name: &str) -> String {
    let mut s = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') {
            s.push('-');
        }
    }
    let s = s.trim_matches('-').to_string();
    if s.is_empty() { "pop".into() } else { s }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// The topology file for `net` under `o` (call [`ImportOptions::validate`] first), and what the
/// import did.
pub fn import(net: &Network, o: &ImportOptions) -> (String, ImportSummary) {
    let n = net.pops.len();
    let d = delays_ms(net, o.route_factor);
    let k = o
        .regional_dcs
        .unwrap_or_else(|| (n as f64).sqrt().ceil() as usize)
        .min(n);
    let (cloud, dcs) = choose_sites(&d, k);
    let ids = pop_ids(net);
    let tree = build_tree(&d, cloud, dcs, o);
    let mut y = String::new();
    let w = &mut y;
    write_header(w, net, o, &tree);
    let antennas = write_sites(w, net, o, &ids, &tree);
    let overrides = match o.override_threshold_ms {
        Some(t) => write_overrides(w, o, &d, &ids, &antennas, &tree, t),
        None => 0,
    };
    let diameter_ms = d.iter().flatten().fold(0.0f64, |m, &x| m.max(x));
    let summary = ImportSummary {
        pops: n,
        links: net.links.len(),
        regional_dcs: tree.dcs.len(),
        antennas: antennas.len(),
        overrides,
        diameter_ms,
        dropped: net.dropped.clone(),
    };
    (y, summary)
}

/// A unique id per PoP: its name's slug, numbered from 2 where names repeat.
fn pop_ids(net: &Network) -> Vec<String> {
    let mut ids: Vec<String> = Vec::with_capacity(net.pops.len());
    for p in &net.pops {
        let base = slug(&p.name);
        let mut id = base.clone();
        let mut k = 2;
        while ids.contains(&id) {
            id = format!("{base}-{k}");
            k += 1;
        }
        ids.push(id);
    }
    ids
}

/// The tree over mesh delays `d`: each central office under its nearest regional DC (ties: the
/// DC chosen first), every link at least `o.min_link_ms`, the cloud `o.cloud_extra_ms` beyond.
fn build_tree(d: &[Vec<f64>], cloud: usize, dcs: Vec<usize>, o: &ImportOptions) -> Tree {
    let n = d.len();
    let floor = |x: f64| x.max(o.min_link_ms);
    let parent_dc: Vec<usize> = (0..n)
        .map(|c| {
            (0..dcs.len())
                .min_by(|&a, &b| d[c][dcs[a]].total_cmp(&d[c][dcs[b]]).then(a.cmp(&b)))
                .expect("k >= 1")
        })
        .collect();
    let co_link: Vec<f64> = (0..n).map(|c| floor(d[c][dcs[parent_dc[c]]])).collect();
    let dc_link: Vec<f64> = dcs
        .iter()
        .map(|&p| floor(d[p][cloud]) + o.cloud_extra_ms)
        .collect();
    Tree {
        cloud,
        dcs,
        parent_dc,
        co_link,
        dc_link,
    }
}

/// The file's head: what the import did, in comments, then the schema, the name and the reach.
fn write_header(w: &mut String, net: &Network, o: &ImportOptions, tree: &Tree) {
    let s = &o.sites;
    let name = o
        .name
        .clone()
        .or_else(|| net.name.as_deref().map(slug))
        .unwrap_or_else(|| "imported".into());
    let _ = writeln!(
        w,
        "# Imported by `continuum topology import`: {} PoPs and {} links of {} as central \
         offices; {} regional DCs (greedy k-median on fibre delay), the cloud {} ms beyond the \
         most central PoP ({}).",
        net.pops.len(),
        net.links.len(),
        net.name.as_deref().unwrap_or("the network"),
        tree.dcs.len(),
        o.cloud_extra_ms,
        net.pops[tree.cloud].name
    );
    let _ = writeln!(
        w,
        "# Delays: great-circle length × route factor {} × {FIBRE_US_PER_KM} µs/km, shortest \
         paths; access links {} ms; per-site resources and deployment mixes: `topology \
         generate`'s (seed {}).",
        o.route_factor, o.access_ms, s.seed
    );
    if let Some(a) = &o.attribution {
        let _ = writeln!(w, "# Source: {a}");
    }
    if !net.dropped.is_empty() {
        let _ = writeln!(w, "# Left out: {}.", net.dropped.join("; "));
    }
    let _ = writeln!(w, "schema: {}", continuum_core::config::SCHEMA);
    let _ = writeln!(w, "name: {name}");
    if let Some(m) = s.max_reach_ms {
        let _ = writeln!(w, "max_reach_ms: {m}");
    }
}

/// The layers, the cloud, the regional DCs, a central office per PoP and its antennas; returns
/// each antenna's id and PoP.
fn write_sites(
    w: &mut String,
    net: &Network,
    o: &ImportOptions,
    ids: &[String],
    tree: &Tree,
) -> Vec<(String, usize)> {
    let s = &o.sites;
    let mut sites = s.clone();
    sites.link_ms = [o.access_ms, 1.0, 1.0];
    write_layers_and_cloud(w, &sites);
    for (r, &p) in tree.dcs.iter().enumerate() {
        let _ = writeln!(
            w,
            "  - {{id: rdc-{}, layer: regional-dc, parent: cloud, link: {}}}",
            ids[p],
            link(tree.dc_link[r], s.jitter)
        );
    }
    for c in 0..net.pops.len() {
        let _ = writeln!(
            w,
            "  - {{id: co-{}, layer: central-office, parent: rdc-{}, link: {}}}   # {}",
            ids[c],
            ids[tree.dcs[tree.parent_dc[c]]],
            link(tree.co_link[c], s.jitter),
            net.pops[c].name.replace('#', "")
        );
    }
    let mut gpu_rng = stream_rng(s.seed, Purpose::Other, 0x746f_706f, 0);
    let mut antennas = Vec::new();
    for (c, pop_id) in ids.iter().enumerate() {
        for a in 0..o.antennas_per_co {
            let id = format!("ant-{pop_id}-{a}");
            let extra = antenna_gpu(gpu_rng.random_bool(s.antenna_gpu_share), s.cpu[0]);
            let _ = writeln!(
                w,
                "  - {{id: {id}, layer: access, parent: co-{pop_id}, link: {}{extra}}}",
                link(o.access_ms, s.jitter)
            );
            antennas.push((id, c));
        }
    }
    antennas
}

/// Writes `overrides:` for every (antenna scheduler, cluster) pair whose mesh delay beats the
/// tree path by more than `t` ms; returns how many.
fn write_overrides(
    w: &mut String,
    o: &ImportOptions,
    d: &[Vec<f64>],
    ids: &[String],
    antennas: &[(String, usize)],
    tree: &Tree,
    t: f64,
) -> usize {
    let floor = |x: f64| x.max(o.min_link_ms);
    let n = d.len();
    let (cloud, dcs, parent_dc) = (tree.cloud, &tree.dcs, &tree.parent_dc);
    let co_link = |c: usize| tree.co_link[c];
    let dc_link = |r: usize| tree.dc_link[r];
    // Tree delay from PoP i's CO up to a level: to its DC, to the cloud.
    let up_dc = |i: usize| co_link(i);
    let up_cloud = |i: usize| co_link(i) + dc_link(parent_dc[i]);
    let a = o.access_ms;
    // (cluster id, tree delay from an antenna at PoP i, mesh delay from it).
    let targets = |i: usize| -> Vec<(String, f64, f64)> {
        let mut v = Vec::new();
        for j in 0..n {
            let tree = if parent_dc[j] == parent_dc[i] {
                if i == j { 0.0 } else { up_dc(i) + up_dc(j) }
            } else {
                up_cloud(i) + up_cloud(j)
            };
            let mesh = d[i][j];
            v.push((format!("co-{}", ids[j]), a + tree, a + mesh));
            for k in 0..o.antennas_per_co {
                v.push((format!("ant-{}-{k}", ids[j]), a + tree + a, a + mesh + a));
            }
        }
        for (r, &p) in dcs.iter().enumerate() {
            let tree = if parent_dc[i] == r {
                up_dc(i)
            } else {
                up_cloud(i) + dc_link(r)
            };
            v.push((format!("rdc-{}", ids[p]), a + tree, a + floor(d[i][p])));
        }
        v.push((
            "cloud".into(),
            a + up_cloud(i),
            a + floor(d[i][cloud]) + o.cloud_extra_ms,
        ));
        v
    };
    let mut count = 0;
    for (sid, i) in antennas {
        for (cid, tree, mesh) in targets(*i) {
            if tree - mesh > t {
                if count == 0 {
                    let _ = writeln!(
                        w,
                        "# Where the real mesh is faster than the tree by more than {t} ms."
                    );
                    let _ = writeln!(w, "overrides:");
                }
                let _ = writeln!(
                    w,
                    "  - {{scheduler: {sid}, cluster: {cid}, mean_ms: {}, jitter_ms: {}}}",
                    round2(mesh),
                    round2(mesh * o.sites.jitter)
                );
                count += 1;
            }
        }
    }
    count
}

#[cfg(test)]
mod tests;
