//! The YAML shape of a topology file and its validation into a [`Topology`].

use super::deploy::{MAX_REPLICAS_PER_CLUSTER, fill_to_saturation, fits, take};
use super::paths::Paths;
use super::{Cluster, Reach, Scheduler, Topology, Worker};
use crate::config::{ConfigError, Source};
use crate::profiles::Profiles;
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::collections::{BTreeMap, HashMap};

/// The layer whose clusters may host schedulers.
pub(super) const ACCESS_LAYER: &str = "access";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    /// The format's version ([`crate::config::SCHEMA`]); absent means 1.
    #[serde(default)]
    schema: Option<Spanned<u64>>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    layers: BTreeMap<String, LayerSpec>,
    clusters: Vec<ClusterSpec>,
    #[serde(default)]
    schedulers: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    overrides: Vec<OverrideSpec>,
    /// Routing scope: workers whose net distance d + 2σ from a scheduler exceeds this many ms
    /// are not its candidates. Absent: every worker in the scheduler's tree.
    #[serde(default)]
    max_reach_ms: Option<Spanned<f64>>,
}

/// Defaults for every cluster of a layer.
#[derive(Deserialize, Default, Clone)]
#[serde(deny_unknown_fields)]
struct LayerSpec {
    #[serde(default)]
    link: Option<Spanned<LinkSpec>>,
    #[serde(default)]
    capacity: Option<Spanned<BTreeMap<String, f64>>>,
    #[serde(default)]
    deploy: Option<Spanned<DeploySpec>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClusterSpec {
    id: Spanned<String>,
    layer: Spanned<String>,
    #[serde(default)]
    parent: Option<Spanned<String>>,
    #[serde(default)]
    link: Option<Spanned<LinkSpec>>,
    #[serde(default)]
    capacity: Option<Spanned<BTreeMap<String, f64>>>,
    #[serde(default)]
    deploy: Option<Spanned<DeploySpec>>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
struct LinkSpec {
    mean_ms: f64,
    #[serde(default)]
    jitter_ms: f64,
}

#[derive(Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
struct DeploySpec {
    /// Explicit replica counts per variant, placed first.
    #[serde(default)]
    replicas: BTreeMap<String, u32>,
    /// Variants to add round-robin, after the explicit ones, until the cluster is saturated.
    #[serde(default)]
    fill: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OverrideSpec {
    scheduler: Spanned<String>,
    cluster: Spanned<String>,
    mean_ms: Spanned<f64>,
    #[serde(default)]
    jitter_ms: f64,
}

pub(super) fn build(
    src: &Source,
    profiles: &Profiles,
    candidates: bool,
) -> Result<Topology, ConfigError> {
    let file: File = src.parse()?;
    crate::config::check_schema(src, &file.schema)?;
    if file.clusters.is_empty() {
        return Err(src.error_file("clusters", "a topology needs at least one cluster"));
    }
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (i, c) in file.clusters.iter().enumerate() {
        if c.id.value.trim().is_empty() {
            return Err(src.error_at(
                &c.id,
                format!("clusters[{i}].id"),
                "expected a non-empty id",
            ));
        }
        if index.insert(c.id.value.as_str(), i).is_some() {
            return Err(src.error_at(
                &c.id,
                format!("clusters[{i}].id"),
                format!("duplicate cluster id `{}`", c.id.value),
            ));
        }
    }
    let mut clusters = Vec::with_capacity(file.clusters.len());
    for (i, c) in file.clusters.iter().enumerate() {
        let f = |x: &str| format!("clusters[{i}].{x}");
        let defaults = file.layers.get(&c.layer.value).cloned().unwrap_or_default();
        let parent = match &c.parent {
            None => None,
            Some(p) => Some(*index.get(p.value.as_str()).ok_or_else(|| {
                src.error_at(p, f("parent"), format!("unknown cluster id `{}`", p.value))
            })?),
        };
        if parent == Some(i) {
            return Err(src.error_at(
                c.parent.as_ref().expect("parent set"),
                f("parent"),
                "a cluster cannot be its own parent",
            ));
        }
        let link = c.link.as_ref().or(defaults.link.as_ref());
        let (mean, jitter) = match (parent, link) {
            (None, _) => (0.0, 0.0),
            (Some(_), None) => {
                return Err(src.error_at(&c.id, f("link"), format!("cluster `{}` has a parent but no link (give `link: {{mean_ms, jitter_ms}}` here or under layers.{})", c.id.value, c.layer.value)));
            }
            (Some(_), Some(l)) => {
                let v = l.value;
                if !(v.mean_ms >= 0.0
                    && v.jitter_ms >= 0.0
                    && v.mean_ms.is_finite()
                    && v.jitter_ms.is_finite())
                {
                    return Err(src.error_at(
                        l,
                        f("link"),
                        format!(
                            "expected mean_ms >= 0 and jitter_ms >= 0, got {} and {}",
                            v.mean_ms, v.jitter_ms
                        ),
                    ));
                }
                (v.mean_ms, v.jitter_ms)
            }
        };
        let capacity = match c.capacity.as_ref().or(defaults.capacity.as_ref()) {
            None => BTreeMap::new(),
            Some(cap) => {
                for (k, v) in &cap.value {
                    if !(*v > 0.0 && v.is_finite()) {
                        return Err(src.error_at(cap, f(&format!("capacity.{k}")), format!("expected an amount > 0 (leave out a resource the cluster lacks), got {v}")));
                    }
                }
                cap.value.clone()
            }
        };
        clusters.push(Cluster {
            id: c.id.value.clone(),
            layer: c.layer.value.clone(),
            parent,
            link_mean_ms: mean,
            link_jitter_ms: jitter,
            capacity,
        });
    }
    check_cycles(src, &file, &clusters)?;

    let workers = deploy_all(src, &file, &clusters, profiles, candidates)?;
    let schedulers = schedulers(src, &file, &clusters, &index, &workers)?;
    let name = file.name.clone().unwrap_or_else(|| {
        src.path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    Ok(Topology {
        name,
        clusters,
        workers,
        schedulers,
    })
}

fn check_cycles(src: &Source, file: &File, clusters: &[Cluster]) -> Result<(), ConfigError> {
    for start in 0..clusters.len() {
        let mut cur = start;
        for _ in 0..=clusters.len() {
            match clusters[cur].parent {
                None => break,
                Some(p) if p == start => {
                    let spec = &file.clusters[start];
                    return Err(src.error_at(
                        spec.parent.as_ref().expect("has a parent"),
                        format!("clusters[{start}].parent"),
                        format!(
                            "cluster `{}` is its own ancestor: the parent links form a cycle",
                            spec.id.value
                        ),
                    ));
                }
                Some(p) => cur = p,
            }
        }
    }
    Ok(())
}

fn deploy_all(
    src: &Source,
    file: &File,
    clusters: &[Cluster],
    profiles: &Profiles,
    candidates: bool,
) -> Result<Vec<Worker>, ConfigError> {
    let mut workers = Vec::new();
    for (i, (c, spec)) in clusters.iter().zip(&file.clusters).enumerate() {
        let layer = file.layers.get(&c.layer);
        let mut counts: BTreeMap<usize, u32> = BTreeMap::new();
        if candidates {
            // Every variant one replica of which fits the cluster, deployed or not.
            for (v, var) in profiles.variants.iter().enumerate() {
                if var.resources.values().any(|x| *x > 0.0) && fits(&c.capacity, &var.resources) {
                    counts.insert(v, 0);
                }
            }
        }
        let dep = spec
            .deploy
            .as_ref()
            .or(layer.and_then(|l| l.deploy.as_ref()));
        if let Some(dep) = dep {
            deploy_one(src, i, c, dep, profiles, &mut counts)?;
        }
        for (v, n) in counts {
            if n > 0 || candidates {
                workers.push(Worker {
                    cluster: i,
                    variant: v,
                    replicas: n,
                    capacity_qps: f64::from(n) * profiles.variants[v].capacity_qps,
                });
            }
        }
    }
    Ok(workers)
}

/// Adds the replicas cluster `i`'s deployment asks for to `counts` (variant → replicas).
fn deploy_one(
    src: &Source,
    i: usize,
    c: &Cluster,
    dep: &Spanned<DeploySpec>,
    profiles: &Profiles,
    counts: &mut BTreeMap<usize, u32>,
) -> Result<(), ConfigError> {
    let field = format!("clusters[{i}].deploy");
    let lookup = |name: &str| {
        profiles.variant_id(name).ok_or_else(|| {
            src.error_at(
                dep,
                field.clone(),
                format!("unknown variant `{name}` (not in the profiles)"),
            )
        })
    };
    let mut free = c.capacity.clone();
    let mut placed: u32 = 0;
    let too_many = |what: String| {
        src.error_at(
            dep,
            field.clone(),
            format!(
                "{what} on cluster `{}`: at most {MAX_REPLICAS_PER_CLUSTER} replicas per cluster \
                 (each is simulated as a server of its own); lower its capacity or the counts",
                c.id
            ),
        )
    };
    for (name, n) in &dep.value.replicas {
        let v = lookup(name)?;
        placed = placed
            .checked_add(*n)
            .filter(|&p| p <= MAX_REPLICAS_PER_CLUSTER)
            .ok_or_else(|| {
                too_many(format!(
                    "{} replicas in all",
                    u64::from(placed) + u64::from(*n)
                ))
            })?;
        let need = &profiles.variants[v].resources;
        let all: BTreeMap<String, f64> = need
            .iter()
            .map(|(k, x)| (k.clone(), x * f64::from(*n)))
            .collect();
        if !fits(&free, &all) {
            return Err(src.error_at(
                dep,
                field.clone(),
                format!(
                    "{n} replicas of `{name}` exceed the capacity of cluster `{}` ({:?})",
                    c.id, c.capacity
                ),
            ));
        }
        take(&mut free, &all);
        *counts.entry(v).or_default() += n;
    }
    let fill_ids = dep
        .value
        .fill
        .iter()
        .map(|n| lookup(n))
        .collect::<Result<Vec<_>, _>>()?;
    let needs: Vec<_> = fill_ids
        .iter()
        .map(|&v| &profiles.variants[v].resources)
        .collect();
    let filled =
        fill_to_saturation(&mut free, &needs, placed, MAX_REPLICAS_PER_CLUSTER).map_err(|_| {
            too_many(format!(
                "filling capacity {:?} would place more",
                c.capacity
            ))
        })?;
    for (v, n) in fill_ids.iter().zip(filled) {
        *counts.entry(*v).or_default() += n;
    }
    Ok(())
}

fn schedulers(
    src: &Source,
    file: &File,
    clusters: &[Cluster],
    index: &HashMap<&str, usize>,
    workers: &[Worker],
) -> Result<Vec<Scheduler>, ConfigError> {
    let sites = scheduler_sites(src, file, clusters, index)?;
    let overrides = overrides(src, file, index, &sites)?;
    let max_reach = match &file.max_reach_ms {
        None => f64::INFINITY,
        Some(m) if m.value > 0.0 && !m.value.is_nan() => m.value,
        Some(m) => {
            return Err(src.error_at(
                m,
                "max_reach_ms",
                format!("expected a distance in ms > 0, got {}", m.value),
            ));
        }
    };
    let paths = Paths::new(clusters);
    // Workers by cluster, so each (scheduler, cluster) path is computed once.
    let mut by_cluster: Vec<Vec<usize>> = vec![Vec::new(); clusters.len()];
    for (w, wk) in workers.iter().enumerate() {
        by_cluster[wk.cluster].push(w);
    }
    let hosting: Vec<usize> = (0..clusters.len())
        .filter(|&c| !by_cluster[c].is_empty())
        .collect();
    let mut from = paths.from(sites.first().copied().unwrap_or(0));
    Ok(sites
        .into_iter()
        .map(|s| {
            from.reset(&paths, s);
            let mut reach: Vec<Reach> = Vec::new();
            for &c in &hosting {
                let Some((d, sigma)) = overrides
                    .get(&(s, c))
                    .copied()
                    .or_else(|| from.delay_to(&paths, c))
                else {
                    continue;
                };
                let r = Reach {
                    worker: 0,
                    cluster: c as u32,
                    variant: 0,
                    d_ms: d,
                    sigma_ms: sigma,
                };
                if r.net_ms() > max_reach {
                    continue;
                }
                reach.extend(by_cluster[c].iter().map(|&w| Reach {
                    worker: w as u32,
                    variant: workers[w].variant as u32,
                    ..r
                }));
            }
            reach.sort_by(Reach::by_distance);
            Scheduler { cluster: s, reach }
        })
        .collect())
}

/// The clusters that host a scheduler: those listed under `schedulers`, or every access
/// cluster when there is no list.
fn scheduler_sites(
    src: &Source,
    file: &File,
    clusters: &[Cluster],
    index: &HashMap<&str, usize>,
) -> Result<Vec<usize>, ConfigError> {
    let sites: Vec<usize> = match &file.schedulers {
        None => (0..clusters.len())
            .filter(|&i| clusters[i].layer == ACCESS_LAYER)
            .collect(),
        Some(list) => {
            let mut out = Vec::new();
            for (k, s) in list.iter().enumerate() {
                let f = format!("schedulers[{k}]");
                let &i = index.get(s.value.as_str()).ok_or_else(|| {
                    src.error_at(s, f.clone(), format!("unknown cluster id `{}`", s.value))
                })?;
                if clusters[i].layer != ACCESS_LAYER {
                    return Err(src.error_at(s, f, format!("a scheduler must sit on an `{ACCESS_LAYER}` cluster; `{}` is in layer `{}`", s.value, clusters[i].layer)));
                }
                if out.contains(&i) {
                    return Err(src.error_at(s, f, format!("duplicate scheduler `{}`", s.value)));
                }
                out.push(i);
            }
            out
        }
    };
    if sites.is_empty() {
        return Err(src.error_file(
            "schedulers",
            format!("no scheduler: the topology needs at least one `{ACCESS_LAYER}` cluster"),
        ));
    }
    Ok(sites)
}

/// Network delays set by hand: (scheduler's cluster, cluster) → (mean, jitter), ms.
type Overrides = HashMap<(usize, usize), (f64, f64)>;

/// The `overrides`, each checked against the clusters and the scheduler `sites`.
fn overrides(
    src: &Source,
    file: &File,
    index: &HashMap<&str, usize>,
    sites: &[usize],
) -> Result<Overrides, ConfigError> {
    let mut overrides: Overrides = HashMap::new();
    for (k, o) in file.overrides.iter().enumerate() {
        let f = |x: &str| format!("overrides[{k}].{x}");
        let &s = index.get(o.scheduler.value.as_str()).ok_or_else(|| {
            src.error_at(
                &o.scheduler,
                f("scheduler"),
                format!("unknown cluster id `{}`", o.scheduler.value),
            )
        })?;
        if !sites.contains(&s) {
            return Err(src.error_at(
                &o.scheduler,
                f("scheduler"),
                format!("`{}` hosts no scheduler", o.scheduler.value),
            ));
        }
        let &n = index.get(o.cluster.value.as_str()).ok_or_else(|| {
            src.error_at(
                &o.cluster,
                f("cluster"),
                format!("unknown cluster id `{}`", o.cluster.value),
            )
        })?;
        if !(o.mean_ms.value >= 0.0
            && o.jitter_ms >= 0.0
            && o.mean_ms.value.is_finite()
            && o.jitter_ms.is_finite())
        {
            return Err(src.error_at(
                &o.mean_ms,
                f("mean_ms"),
                "expected mean_ms >= 0 and jitter_ms >= 0",
            ));
        }
        overrides.insert((s, n), (o.mean_ms.value, o.jitter_ms));
    }
    Ok(overrides)
}
