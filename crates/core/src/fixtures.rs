//! Tiny hand-built inputs for unit tests, where the right answer is known by reasoning.

use crate::config::Source;
use crate::profiles::Profiles;
use crate::scenario::Scenario;
use crate::topology::Topology;
use crate::workload::Workload;

/// One task, three models of rising accuracy and cost.
pub const PROFILES: &str = r#"
tasks:
  - {name: detect, metric: "test accuracy"}
  - {name: other, metric: "test accuracy"}
models:
  - {name: small, task: detect, accuracy: 0.3}
  - {name: big, task: detect, accuracy: 0.6}
  - {name: o, task: other, accuracy: 0.5}
variants:
  - {name: small-b1, model: small, batch: 1, delay: {base_ms: 10}, ref_kb: 10, capacity_qps: 100, resources: {cpu: 1}}
  - {name: big-b4, model: big, batch: 4, delay: {base_ms: 40, per_kb_ms: 0.5}, ref_kb: 10, capacity_qps: 90, resources: {gpu: 1}}
  - {name: other-b1, model: o, batch: 1, delay: {base_ms: 5}, ref_kb: 10, capacity_qps: 100, resources: {cpu: 1}}
"#;

/// Two antennas under one central office under a cloud:
///
/// ```text
///   cloud (gpu 2: big-b4 ×2)          link 20 ms ± 5
///    └ co (cpu 2: small-b1 ×2)        link 4 ms ± 0 (to cloud)
///       ├ a0 (cpu 1: small-b1)        link 1 ms ± 0 (to co)
///       └ a1 (no compute)             link 2 ms ± 0
/// ```
pub const TOPOLOGY: &str = r#"
name: tiny
clusters:
  - {id: cloud, layer: cloud, capacity: {gpu: 2}, deploy: {fill: [big-b4]}}
  - {id: co, layer: central-office, parent: cloud, link: {mean_ms: 20, jitter_ms: 5}, capacity: {cpu: 2}, deploy: {replicas: {small-b1: 2}}}
  - {id: a0, layer: access, parent: co, link: {mean_ms: 1}, capacity: {cpu: 1}, deploy: {fill: [small-b1]}}
  - {id: a1, layer: access, parent: co, link: {mean_ms: 2}}
"#;

/// One app class; λ given by the caller.
pub fn workload(lambda: f64, jitter: &str, max_delay: f64, min_acc: f64) -> String {
    format!(
        r#"
lambda_per_min: {lambda}
jitter: {jitter}
access_delay_ms: 2
apps:
  - {{name: app, share: 1, task: detect, rate_qps: 10, frame_kb: 10, uplink_mbps: 80, max_delay_ms: {max_delay}, min_accuracy: {min_acc}, duration_s: 30}}
"#
    )
}

/// The tiny profiles.
pub fn profiles() -> Profiles {
    Profiles::from_source(&Source::inline("profiles.yaml", PROFILES))
        .expect("fixture profiles are valid")
}

/// A scenario from the tiny profiles, `topology` text and `workload` text.
pub fn scenario(topology: &str, workload: &str) -> Scenario {
    let p = profiles();
    let t = Topology::from_source(&Source::inline("topology.yaml", topology), &p)
        .expect("fixture topology is valid");
    let w = Workload::from_source(&Source::inline("workload.yaml", workload), &p)
        .expect("fixture workload is valid");
    Scenario::new(p, t, w)
}

/// [`scenario`] on the candidate workers of `topology` (every variant that fits a cluster,
/// replicas from the file's deployment or 0): what an allocator redeploys.
pub fn candidate_scenario(topology: &str, workload: &str) -> Scenario {
    let p = profiles();
    let t = Topology::candidates_from_source(&Source::inline("topology.yaml", topology), &p)
        .expect("fixture topology is valid");
    let w = Workload::from_source(&Source::inline("workload.yaml", workload), &p)
        .expect("fixture workload is valid");
    Scenario::new(p, t, w)
}

/// The worker of (cluster id, variant name) in `sc`.
pub fn worker(sc: &Scenario, cluster: &str, variant: &str) -> usize {
    let c = sc.topology.cluster_index(cluster).expect("cluster");
    let v = sc.profiles.variant_id(variant).expect("variant");
    sc.topology
        .workers
        .iter()
        .position(|w| w.cluster == c && w.variant == v)
        .expect("candidate worker")
}
