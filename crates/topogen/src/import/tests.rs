//! Imports of hand-built networks whose right answer is known by reasoning.

use super::network::{Network, Pop, read};
use super::*;
use continuum_core::config::Source;
use continuum_core::profiles::Profiles;
use continuum_core::topology::Topology;
use std::path::Path;

fn load(text: &str) -> Topology {
    let profiles = Profiles::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../profiles/object-detection.yaml"),
    )
    .unwrap();
    Topology::from_source(&Source::inline("imported.yaml", text), &profiles).unwrap()
}

/// Three PoPs on the equator one degree apart (111.19 km): A – B – C.
fn line() -> Network {
    let pop = |name: &str, lon: f64| Pop {
        name: name.into(),
        lon,
        lat: 0.0,
    };
    Network {
        name: Some("Line Net".into()),
        pops: vec![pop("A", 0.0), pop("B", 1.0), pop("C", 2.0)],
        links: vec![(0, 1), (1, 2)],
        dropped: vec![],
    }
}

/// One hop: 111.19 km × 1.5 × 4.9 µs/km.
const HOP: f64 = 111.194_926_644_558_73 * 1.5 * 4.9 / 1000.0;

#[test]
fn haversine_and_shortest_paths() {
    assert!((haversine_km((0.0, 0.0), (1.0, 0.0)) - 111.1949).abs() < 1e-3);
    // Paris – Berlin, about 878 km.
    assert!((haversine_km((2.35, 48.86), (13.40, 52.52)) - 878.0).abs() < 5.0);
    let d = delays_ms(&line(), 1.5);
    assert!((d[0][1] - HOP).abs() < 1e-9);
    assert!((d[0][2] - 2.0 * HOP).abs() < 1e-9);
}

#[test]
fn sites_follow_the_stated_rules() {
    let d = delays_ms(&line(), 1.5);
    // The middle PoP is the most central; the first DC is the 1-median (B), the second the PoP
    // that lowers the total most (A and C tie; A comes first).
    assert_eq!(choose_sites(&d, 2), (1, vec![1, 0]));
    assert_eq!(choose_sites(&d, 5).1.len(), 3);
}

#[test]
fn an_imported_line_loads_with_the_delays_worked_out_by_hand() {
    let o = ImportOptions {
        regional_dcs: Some(2),
        antennas_per_co: 1,
        ..Default::default()
    };
    o.validate().unwrap();
    let (text, summary) = import(&line(), &o);
    let t = load(&text);
    assert_eq!(summary.pops, 3);
    assert_eq!(summary.regional_dcs, 2);
    assert_eq!(t.schedulers.len(), 3);
    assert!(text.contains("name: line-net"));
    // Cluster ids and the tree: C hangs under B's DC (one hop) rather than A's (two).
    assert!(text.contains("{id: co-c, layer: central-office, parent: rdc-b"));
    assert!(text.contains("{id: co-a, layer: central-office, parent: rdc-a"));
    // From A's antenna to B's central office the tree goes through the cloud
    // (1.5 + 0.1 + (HOP + 5) + (0.1 + 5) + 0.1); the mesh is one hop: an override.
    let ant_a = t.clusters.iter().position(|c| c.id == "ant-a-0").unwrap();
    let co_b = t.clusters.iter().position(|c| c.id == "co-b").unwrap();
    let s = t.schedulers.iter().find(|s| s.cluster == ant_a).unwrap();
    let r = s.reach.iter().find(|r| r.cluster as usize == co_b).unwrap();
    assert!((r.d_ms - round2(1.5 + HOP)).abs() < 1e-9, "{}", r.d_ms);
    assert!(summary.overrides > 0);
    // Without overrides the tree path stands.
    let (text, summary) = import(
        &line(),
        &ImportOptions {
            override_threshold_ms: None,
            ..o
        },
    );
    assert_eq!(summary.overrides, 0);
    let t = load(&text);
    let s = t.schedulers.iter().find(|s| s.cluster == ant_a).unwrap();
    let r = s.reach.iter().find(|r| r.cluster as usize == co_b).unwrap();
    let tree = 1.5 + 0.1 + round2(HOP + 5.0) + 5.1 + 0.1;
    assert!((r.d_ms - tree).abs() < 1e-9, "{} vs {tree}", r.d_ms);
}

#[test]
fn a_gml_file_imports_and_validates() {
    let gml = "graph [\n  Network \"Tri\"\n  node [ id 0 label \"Den Haag\" Longitude 4.3 Latitude 52.08 ]\n  node [ id 1 label \"Amsterdam\" Longitude 4.9 Latitude 52.37 ]\n  node [ id 2 label \"Utrecht\" Longitude 5.12 Latitude 52.09 ]\n  node [ id 3 label \"Unplaced\" ]\n  edge [ source 0 target 1 ]\n  edge [ source 1 target 2 ]\n  edge [ source 2 target 0 ]\n  edge [ source 2 target 3 ]\n]\n";
    let net = read(&Source::inline("tri.gml", gml)).unwrap();
    let (text, summary) = import(&net, &ImportOptions::default());
    let t = load(&text);
    assert_eq!(summary.antennas, 6);
    assert_eq!(t.schedulers.len(), 6);
    assert_eq!(
        summary.dropped,
        vec!["Unplaced (no coordinates)".to_string()]
    );
    assert!(text.contains("# Left out: Unplaced (no coordinates)."));
    assert!(text.contains("co-den-haag"));
    // Same input, same file.
    assert_eq!(text, import(&net, &ImportOptions::default()).0);
}

#[test]
fn bad_options_are_named() {
    for (o, name) in [
        (
            ImportOptions {
                antennas_per_co: 0,
                ..Default::default()
            },
            "--antennas-per-co",
        ),
        (
            ImportOptions {
                route_factor: 0.5,
                ..Default::default()
            },
            "--route-factor",
        ),
        (
            ImportOptions {
                regional_dcs: Some(0),
                ..Default::default()
            },
            "--regional-dcs",
        ),
        (
            ImportOptions {
                cloud_extra_ms: -1.0,
                ..Default::default()
            },
            "--cloud-extra-ms",
        ),
    ] {
        assert!(o.validate().unwrap_err().starts_with(name));
    }
}
