//! Nodes from a topology: each cluster's capacity (`capacity: {cpu, gpu, mem_gb}`, model.md §2.1)
//! split into the machines a scheduler places tasks on (docs/jobs.md, "Nodes").
//!
//! The split is written in the jobs workload file (`nodes:`), not in the topology: the topology
//! schema refuses unknown keys on clusters, and the streams model has no use for nodes. A
//! *shape* is the largest node: a cluster becomes the fewest nodes no larger than the shape in
//! any resource, its capacity dealt out as evenly as whole units allow (the first nodes take
//! the remainder). A *list* names each node of the cluster; its sum may not exceed the cluster.

use crate::error::JobsError;
use crate::resources::{NAMES, Res};
use continuum_core::config::ConfigError;
use continuum_core::topology::Topology;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The default node shape: 16 cores, 4 GPUs, 64 GB (docs/jobs.md, "Nodes": full-edge's antenna
/// server for cores and memory; about 3.6 GPUs per machine in Alibaba's PAI cluster, 6,500 GPUs
/// on about 1,800 machines, as EdgeTuner's trace analysis prints it).
pub const DEFAULT_SHAPE: NodeShape = NodeShape {
    capacity: Res::new(16.0, 4.0, 64.0),
    speed: 1.0,
};

/// One machine: where it is and what it has.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Index of its cluster in the topology (`None` for nodes built by hand).
    pub cluster: Option<usize>,
    /// What tasks may request on it.
    pub capacity: Res,
    /// Relative processing speed (1: a task's work runs at its allocated cores).
    pub speed: f64,
}

/// The size of one node as the workload file writes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodeShape {
    /// Its capacity.
    pub capacity: Res,
    /// Its relative speed (default 1).
    pub speed: f64,
}

/// How one cluster (or every cluster of a layer) becomes nodes.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeDecl {
    /// Nodes no larger than this shape, as few as fit the capacity.
    Shape(NodeShape),
    /// Exactly these nodes (their sum at most the cluster's capacity).
    List(Vec<NodeShape>),
}

/// Where a per-layer or per-cluster entry was written, for errors found against a topology.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Origin {
    pub(crate) line: usize,
    pub(crate) column: usize,
    pub(crate) field: String,
}

/// The `nodes:` section of a jobs workload file: a default shape, then per-layer and
/// per-cluster declarations (a cluster's own entry wins over its layer's).
#[derive(Debug, Clone, PartialEq)]
pub struct NodeSplit {
    /// The shape for clusters with no entry of their own.
    pub default: NodeShape,
    /// Per layer name.
    pub per_layer: BTreeMap<String, NodeDecl>,
    /// Per cluster id.
    pub per_cluster: BTreeMap<String, NodeDecl>,
    pub(crate) file: PathBuf,
    pub(crate) origins: BTreeMap<String, Origin>,
}

impl Default for NodeSplit {
    fn default() -> Self {
        Self {
            default: DEFAULT_SHAPE,
            per_layer: BTreeMap::new(),
            per_cluster: BTreeMap::new(),
            file: PathBuf::new(),
            origins: BTreeMap::new(),
        }
    }
}

/// The nodes of a run, in a fixed order (clusters in topology order, then each cluster's nodes):
/// the order that breaks ties between equal scores.
#[derive(Debug, Clone, PartialEq)]
pub struct Nodes {
    nodes: Vec<Node>,
    total: Res,
    largest: Res,
}

impl Nodes {
    /// Nodes built by hand; every amount must be finite and ≥ 0, every speed > 0, and at least
    /// one node given.
    pub fn new(nodes: Vec<Node>) -> Result<Self, JobsError> {
        if nodes.is_empty() {
            return Err(JobsError::NoNodes);
        }
        for (index, n) in nodes.iter().enumerate() {
            let ok = n.capacity.arr().iter().all(|x| x.is_finite() && *x >= 0.0);
            if !(ok && n.speed.is_finite() && n.speed > 0.0) {
                return Err(JobsError::Node {
                    index,
                    message: format!(
                        "capacity must be finite and >= 0 and speed > 0, got {:?} at speed {}",
                        n.capacity, n.speed
                    ),
                });
            }
        }
        let total = nodes.iter().fold(Res::ZERO, |a, n| a.add(&n.capacity));
        let largest = nodes.iter().fold(Res::ZERO, |a, n| a.max(&n.capacity));
        Ok(Self {
            nodes,
            total,
            largest,
        })
    }

    /// The nodes of `topology`'s clusters under `split`. A per-cluster entry that names no
    /// cluster, or a node list larger than its cluster, is refused at its place in the workload
    /// file; a topology with no capacity at all has no nodes ([`JobsError::NoNodes`], as a
    /// [`ConfigError`] about the file as a whole).
    pub fn from_topology(topology: &Topology, split: &NodeSplit) -> Result<Self, ConfigError> {
        let err = |key: &str, message: String| {
            let o = split.origins.get(key);
            ConfigError {
                file: split.file.clone(),
                line: o.map_or(0, |o| o.line),
                column: o.map_or(0, |o| o.column),
                field: o.map_or_else(|| "nodes".to_string(), |o| o.field.clone()),
                message,
            }
        };
        for id in split.per_cluster.keys() {
            if topology.cluster_index(id).is_none() {
                let known: Vec<&str> = topology.clusters.iter().map(|c| c.id.as_str()).collect();
                return Err(err(
                    &cluster_key(id),
                    format!(
                        "no cluster `{id}` in topology `{}` (its clusters: {})",
                        topology.name,
                        known.join(", ")
                    ),
                ));
            }
        }
        let mut nodes = Vec::new();
        for (ci, c) in topology.clusters.iter().enumerate() {
            let cap = capacity_of(&c.capacity);
            let (decl, key) = match split.per_cluster.get(&c.id) {
                Some(d) => (d, cluster_key(&c.id)),
                None => match split.per_layer.get(&c.layer) {
                    Some(d) => (d, layer_key(&c.layer)),
                    None => (&NodeDecl::Shape(split.default), String::new()),
                },
            };
            let shapes = match decl {
                NodeDecl::Shape(s) => split_by_shape(&cap, s),
                NodeDecl::List(list) => {
                    let sum = list.iter().fold(Res::ZERO, |a, s| a.add(&s.capacity));
                    if !sum.fits_in(&cap) {
                        return Err(err(
                            &key,
                            format!(
                                "the nodes listed for cluster `{}` add up to {} but the cluster has {}",
                                c.id,
                                show(&sum),
                                show(&cap)
                            ),
                        ));
                    }
                    list.clone()
                }
            };
            nodes.extend(shapes.into_iter().map(|s| Node {
                cluster: Some(ci),
                capacity: s.capacity,
                speed: s.speed,
            }));
        }
        Nodes::new(nodes).map_err(|e| err("", e.to_string()))
    }

    /// The nodes, in tie-breaking order.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// How many nodes there are.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether there are none (never true for a built [`Nodes`]).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The sum of every node's capacity (DRF's denominator).
    pub fn total(&self) -> Res {
        self.total
    }

    /// The largest amount of each resource on any one node.
    pub fn largest(&self) -> Res {
        self.largest
    }

    /// Whether some node's whole capacity holds `request` (a task that fits none can never run).
    pub fn could_hold(&self, request: &Res) -> bool {
        self.nodes.iter().any(|n| request.fits_in(&n.capacity))
    }
}

/// The key of a per-cluster entry in [`NodeSplit`]'s origins.
pub(crate) fn cluster_key(id: &str) -> String {
    format!("cluster:{id}")
}

/// The key of a per-layer entry in [`NodeSplit`]'s origins.
pub(crate) fn layer_key(layer: &str) -> String {
    format!("layer:{layer}")
}

/// A cluster's cpu, gpu and mem_gb (other resources are not modelled; one left out is 0).
fn capacity_of(c: &BTreeMap<String, f64>) -> Res {
    let get = |k: &str| c.get(k).copied().unwrap_or(0.0);
    Res::new(get(NAMES[0]), get(NAMES[1]), get(NAMES[2]))
}

fn show(r: &Res) -> String {
    format!("{{cpu: {}, gpu: {}, mem_gb: {}}}", r.cpu, r.gpu, r.mem_gb)
}

/// The fewest nodes no larger than `shape` that hold `cap`, each resource dealt out as evenly as
/// whole units allow (a whole total gives whole amounts, the first nodes one more). A resource
/// the shape leaves at 0 bounds nothing; a cluster with no capacity has no nodes.
pub(crate) fn split_by_shape(cap: &Res, shape: &NodeShape) -> Vec<NodeShape> {
    let (c, s) = (cap.arr(), shape.capacity.arr());
    let mut n = 0usize;
    for r in 0..3 {
        if c[r] > 0.0 && s[r] > 0.0 {
            n = n.max((c[r] / s[r] - 1e-9).ceil() as usize);
        }
    }
    if c.iter().all(|x| *x <= 0.0) {
        return Vec::new();
    }
    let n = n.max(1);
    let mut out = vec![
        NodeShape {
            capacity: Res::ZERO,
            speed: shape.speed,
        };
        n
    ];
    for r in 0..3 {
        let whole = (c[r] - c[r].round()).abs() < 1e-9;
        for (k, node) in out.iter_mut().enumerate() {
            let amount = if whole {
                let total = c[r].round() as u64;
                let base = total / n as u64;
                let extra = total % n as u64;
                (base + u64::from((k as u64) < extra)) as f64
            } else {
                c[r] / n as f64
            };
            let mut a = node.capacity.arr();
            a[r] = amount;
            node.capacity = Res::from_arr(a);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use continuum_core::config::Source;
    use continuum_core::fixtures;

    fn shape(cpu: f64, gpu: f64, mem: f64) -> NodeShape {
        NodeShape {
            capacity: Res::new(cpu, gpu, mem),
            speed: 1.0,
        }
    }

    #[test]
    fn a_shape_splits_a_cluster_into_the_fewest_even_nodes() {
        // A central office of full-edge (64 cores, 10 GPUs, 256 GB) under the default shape:
        // cores and memory ask for 4 nodes, GPUs for ceil(10 / 4) = 3: 4 nodes of 16 cores and
        // 64 GB, GPUs dealt 3, 3, 2, 2.
        let out = split_by_shape(&Res::new(64.0, 10.0, 256.0), &DEFAULT_SHAPE);
        let caps: Vec<Res> = out.iter().map(|s| s.capacity).collect();
        assert_eq!(
            caps,
            vec![
                Res::new(16.0, 3.0, 64.0),
                Res::new(16.0, 3.0, 64.0),
                Res::new(16.0, 2.0, 64.0),
                Res::new(16.0, 2.0, 64.0),
            ]
        );
        // A CPU-only antenna is one node without GPU; an empty cluster has none.
        let one = split_by_shape(&Res::new(16.0, 0.0, 64.0), &DEFAULT_SHAPE);
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].capacity, Res::new(16.0, 0.0, 64.0));
        assert!(split_by_shape(&Res::ZERO, &DEFAULT_SHAPE).is_empty());
        // A fractional total is shared evenly.
        let frac = split_by_shape(&Res::new(3.0, 0.0, 1.5), &shape(2.0, 0.0, 0.0));
        assert_eq!(frac.len(), 2);
        assert_eq!(frac[0].capacity, Res::new(2.0, 0.0, 0.75));
        assert_eq!(frac[1].capacity, Res::new(1.0, 0.0, 0.75));
    }

    #[test]
    fn nodes_follow_the_topology_with_overrides() {
        let profiles = fixtures::profiles();
        let topo =
            Topology::from_source(&Source::inline("tiny.yaml", fixtures::TOPOLOGY), &profiles)
                .expect("fixture topology");
        // cloud {gpu 2}, co {cpu 2}, a0 {cpu 1}, a1 {}.
        let mut split = NodeSplit {
            default: shape(1.0, 1.0, 0.0),
            ..NodeSplit::default()
        };
        split.per_cluster.insert(
            "co".into(),
            NodeDecl::List(vec![shape(1.5, 0.0, 0.0), shape(0.5, 0.0, 0.0)]),
        );
        let nodes = Nodes::from_topology(&topo, &split).expect("valid split");
        let caps: Vec<(Option<usize>, Res)> = nodes
            .nodes()
            .iter()
            .map(|n| (n.cluster, n.capacity))
            .collect();
        assert_eq!(
            caps,
            vec![
                (Some(0), Res::new(0.0, 1.0, 0.0)),
                (Some(0), Res::new(0.0, 1.0, 0.0)),
                (Some(1), Res::new(1.5, 0.0, 0.0)),
                (Some(1), Res::new(0.5, 0.0, 0.0)),
                (Some(2), Res::new(1.0, 0.0, 0.0)),
            ]
        );
        assert_eq!(nodes.total(), Res::new(3.0, 2.0, 0.0));
        assert_eq!(nodes.largest(), Res::new(1.5, 1.0, 0.0));
        assert!(nodes.could_hold(&Res::new(1.2, 0.0, 0.0)));
        assert!(!nodes.could_hold(&Res::new(1.0, 1.0, 0.0)));

        // A list larger than its cluster, and an unknown cluster, are refused.
        split
            .per_cluster
            .insert("co".into(), NodeDecl::List(vec![shape(3.0, 0.0, 0.0)]));
        let e = Nodes::from_topology(&topo, &split).unwrap_err();
        assert!(e.message.contains("add up to"), "{e}");
        split.per_cluster.clear();
        split
            .per_cluster
            .insert("nowhere".into(), NodeDecl::Shape(DEFAULT_SHAPE));
        let e = Nodes::from_topology(&topo, &split).unwrap_err();
        assert!(e.message.contains("no cluster `nowhere`"), "{e}");
    }

    #[test]
    fn hand_built_nodes_are_checked() {
        assert_eq!(Nodes::new(vec![]), Err(JobsError::NoNodes));
        let bad = Node {
            cluster: None,
            capacity: Res::new(-1.0, 0.0, 0.0),
            speed: 1.0,
        };
        assert!(matches!(
            Nodes::new(vec![bad]),
            Err(JobsError::Node { index: 0, .. })
        ));
    }
}
