//! `continuum topology import`: the shipped imports are exactly what the command writes, they
//! simulate, and bad networks are refused with the place.

use crate::cli_support::*;

/// The shipped imports and the arguments that made them (topologies/imported/README.md).
const SHIPPED: [(&str, &str); 3] = [("abilene", "2"), ("geant2012", "1"), ("germany50", "1")];

fn attribution(yaml: &str) -> String {
    yaml.lines()
        .find_map(|l| l.strip_prefix("# Source: "))
        .expect("a shipped import credits its source")
        .to_string()
}

#[test]
fn shipped_imports_are_reproduced_by_the_command() {
    let dir = std::env::temp_dir().join(format!("continuum-import-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, per_co) in SHIPPED {
        let shipped = std::fs::read_to_string(format!("topologies/imported/{name}.yaml")).unwrap();
        let out = dir.join(format!("{name}.yaml"));
        let out_s = out.to_str().unwrap();
        let source = format!("topologies/imported/sources/{name}.json");
        let credit = attribution(&shipped);
        let o = continuum(&[
            "topology",
            "import",
            &source,
            "--antennas-per-co",
            per_co,
            "--attribution",
            &credit,
            "--out",
            out_s,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stderr(&o).contains("PoPs"), "{}", stderr(&o));
        let again = std::fs::read_to_string(&out).unwrap();
        assert!(
            again == shipped,
            "topologies/imported/{name}.yaml differs from the command's output"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_imported_network_simulates() {
    let dir = std::env::temp_dir().join(format!("continuum-import-sim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("abilene.yaml");
    let source = "topologies/imported/sources/abilene.json";
    ok(&[
        "topology",
        "import",
        source,
        "--antennas-per-co",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    // Every PoP of the source is a central office with its two antennas.
    let net: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(source).unwrap()).unwrap();
    let pops = net["nodes"].as_array().unwrap().len();
    let yaml = std::fs::read_to_string(&out).unwrap();
    let count = |layer: &str| {
        yaml.lines()
            .filter(|l| l.trim_start().starts_with("- {id:"))
            .filter(|l| l.contains(&format!("layer: {layer},")))
            .count()
    };
    assert_eq!(pops, 11);
    assert_eq!(count("central-office"), pops, "{yaml}");
    assert_eq!(count("access"), 2 * pops, "{yaml}");
    let v = json(&[
        "simulate",
        out.to_str().unwrap(),
        "--duration",
        "20",
        "--lambda",
        "20",
        "--policy",
        "closest",
    ]);
    assert_eq!(v["topology"], "abilene");
    let r = &results(&v)[0];
    assert!(r["offered"].as_u64().unwrap() > 0, "{r}");
    assert!(r["success_ratio"].as_f64().unwrap() > 0.5, "{r}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_networks_and_options_are_refused_cleanly() {
    let dir = std::env::temp_dir().join(format!("continuum-import-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let gml = dir.join("bad.gml");
    std::fs::write(
        &gml,
        "graph [\n  node [ id 0 Longitude 1 Latitude 2 ]\n  edge [ source 0 target 9 ]\n]\n",
    )
    .unwrap();
    let err = fails(&["topology", "import", gml.to_str().unwrap()]);
    assert!(err.contains("bad.gml:3:3"), "{err}");
    assert!(err.contains("`9` is not a node id"), "{err}");
    let err = fails(&["topology", "import", "no/such/network.gml"]);
    assert!(err.contains("no/such/network.gml"), "{err}");
    let err = fails(&[
        "topology",
        "import",
        "topologies/imported/sources/abilene.json",
        "--route-factor",
        "0.5",
    ]);
    assert!(err.contains("--route-factor"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
