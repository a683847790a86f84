use super::*;
use crate::config::{ConfigError, Source};
use crate::fixtures;

fn load(text: &str) -> Result<Topology, ConfigError> {
    Topology::from_source(&Source::inline("t.yaml", text), &fixtures::profiles())
}

fn err(text: &str) -> ConfigError {
    load(text).expect_err("must be refused")
}

#[test]
fn tiny_topology_resolves_deployment_and_distances() {
    let t = load(fixtures::TOPOLOGY).unwrap();
    // Workers: cloud big-b4 ×2 (fill), co small-b1 ×2, a0 small-b1 ×1.
    let w: Vec<_> = t
        .workers
        .iter()
        .map(|w| (t.clusters[w.cluster].id.as_str(), w.variant, w.replicas))
        .collect();
    assert_eq!(w, vec![("cloud", 1, 2), ("co", 0, 2), ("a0", 0, 1)]);
    assert_eq!(t.workers[0].capacity_qps, 180.0);
    // Two schedulers (a0, a1), nearest first.
    assert_eq!(t.schedulers.len(), 2);
    let r: Vec<_> = t.schedulers[0]
        .reach
        .iter()
        .map(|r| (r.worker, r.d_ms, r.sigma_ms))
        .collect();
    assert_eq!(r, vec![(2, 0.0, 0.0), (1, 1.0, 0.0), (0, 21.0, 5.0)]);
    let r: Vec<_> = t.schedulers[1]
        .reach
        .iter()
        .map(|r| (r.worker, r.d_ms))
        .collect();
    assert_eq!(r, vec![(1, 2.0), (2, 3.0), (0, 22.0)]);
    assert_eq!(t.total_capacity().get("cpu"), Some(&3.0));
}

#[test]
fn overrides_replace_the_path_delay() {
    let text = format!(
        "{}overrides:\n  - {{scheduler: a0, cluster: cloud, mean_ms: 3, jitter_ms: 1}}\n",
        fixtures::TOPOLOGY
    );
    let t = load(&text).unwrap();
    let cloud = t.schedulers[0]
        .reach
        .iter()
        .find(|r| r.worker == 0)
        .unwrap();
    assert_eq!((cloud.d_ms, cloud.sigma_ms), (3.0, 1.0));
    // Now nearer than the central office (net 5 > 1, but the order is by net distance).
    assert_eq!(t.schedulers[0].reach[2].worker, 0);
}

fn at(e: &ConfigError) -> (usize, usize, &str) {
    (e.line, e.column, e.field.as_str())
}

#[test]
fn unknown_parent_is_refused_with_its_place() {
    let e = err(
        "clusters:\n  - {id: a, layer: access}\n  - {id: b, layer: access, parent: zz, link: {mean_ms: 1}}\n",
    );
    assert_eq!(at(&e), (3, 36, "clusters[1].parent"));
    assert!(e.message.contains("unknown cluster id `zz`"), "{e}");
    assert!(
        e.to_string()
            .starts_with("t.yaml:3:36: clusters[1].parent: "),
        "{e}"
    );
}

#[test]
fn cycles_are_refused() {
    let e = err(
        "clusters:\n  - {id: a, layer: access, parent: b, link: {mean_ms: 1}}\n  - {id: b, layer: x, parent: a, link: {mean_ms: 1}}\n",
    );
    assert_eq!(at(&e), (2, 36, "clusters[0].parent"));
    assert!(e.message.contains("cycle"), "{e}");
}

#[test]
fn scheduler_on_a_non_access_cluster_is_refused() {
    let e = err(
        "clusters:\n  - {id: a, layer: access}\n  - {id: c, layer: cloud}\nschedulers: [a, c]\n",
    );
    assert_eq!(at(&e), (4, 17, "schedulers[1]"));
    assert!(e.message.contains("must sit on an `access` cluster"), "{e}");
}

#[test]
fn unknown_scheduler_is_refused() {
    let e = err("clusters:\n  - {id: a, layer: access}\nschedulers: [b]\n");
    assert_eq!(at(&e), (3, 14, "schedulers[0]"));
}

#[test]
fn zero_and_negative_capacities_are_refused() {
    for (v, col) in [("0", 38), ("-2", 38)] {
        let e = err(&format!(
            "clusters:\n  - {{id: a, layer: access, capacity: {{cpu: {v}}}}}\n"
        ));
        assert_eq!(at(&e), (2, col, "clusters[0].capacity.cpu"), "{e}");
        assert!(e.message.contains("expected an amount > 0"), "{e}");
    }
}

#[test]
fn deployment_exceeding_its_cluster_is_refused() {
    let e = err(
        "clusters:\n  - {id: a, layer: access, capacity: {cpu: 1}, deploy: {replicas: {small-b1: 2}}}\n",
    );
    assert_eq!(at(&e), (2, 56, "clusters[0].deploy"));
    assert!(e.message.contains("exceed the capacity"), "{e}");
}

#[test]
fn unknown_variant_in_deployment_is_refused() {
    let e =
        err("clusters:\n  - {id: a, layer: access, capacity: {cpu: 1}, deploy: {fill: [huge]}}\n");
    assert_eq!(at(&e), (2, 56, "clusters[0].deploy"));
    assert!(e.message.contains("unknown variant `huge`"), "{e}");
}

#[test]
fn unknown_override_cluster_is_refused() {
    let e = err(
        "clusters:\n  - {id: a, layer: access}\noverrides:\n  - {scheduler: a, cluster: q, mean_ms: 1}\n",
    );
    assert_eq!(at(&e), (4, 29, "overrides[0].cluster"));
}

#[test]
fn duplicate_ids_and_missing_links_are_refused() {
    let e = err("clusters:\n  - {id: a, layer: access}\n  - {id: a, layer: access}\n");
    assert_eq!(at(&e), (3, 10, "clusters[1].id"));
    let e = err("clusters:\n  - {id: a, layer: access}\n  - {id: b, layer: access, parent: a}\n");
    assert_eq!(at(&e).2, "clusters[1].link");
}

#[test]
fn malformed_yaml_and_unknown_fields_point_at_the_place() {
    let e = err("clusters:\n  - {id: a, layer: access\n");
    assert!(e.line >= 2, "{e}");
    let e = err("clusters:\n  - {id: a, layer: access, colour: red}\n");
    assert_eq!((e.line, e.column), (2, 28));
    assert!(e.message.contains("unknown field `colour`"), "{e}");
    let e = err("clusters:\n  - {id: a, layer: access, capacity: {cpu: lots}}\n");
    assert_eq!((e.line, e.column), (2, 44), "{e}");
}

#[test]
fn no_access_cluster_means_no_scheduler() {
    let e = err("clusters:\n  - {id: c, layer: cloud}\n");
    assert_eq!(e.field, "schedulers");
}

/// A routing scope keeps the nearest part of each reach list, exactly: a0's cloud (net 31) is
/// out at 30 ms and in at 31; a bad bound names the field.
#[test]
fn max_reach_keeps_the_near_part_of_each_reach_list() {
    let full = load(fixtures::TOPOLOGY).unwrap();
    let scoped = load(&format!("max_reach_ms: 30\n{}", fixtures::TOPOLOGY)).unwrap();
    for (f, s) in full.schedulers.iter().zip(&scoped.schedulers) {
        let near: Vec<Reach> = f
            .reach
            .iter()
            .copied()
            .filter(|r| r.net_ms() <= 30.0)
            .collect();
        assert_eq!(s.reach, near);
    }
    assert_eq!(scoped.schedulers[0].reach.len(), 2);
    let edge = load(&format!("max_reach_ms: 31\n{}", fixtures::TOPOLOGY)).unwrap();
    assert_eq!(edge.schedulers[0].reach, full.schedulers[0].reach);
    let e = err(&format!("max_reach_ms: -1\n{}", fixtures::TOPOLOGY));
    assert_eq!((e.line, e.field.as_str()), (1, "max_reach_ms"));
}
