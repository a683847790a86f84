//! The README's lists of policy, pull-row and mitigation names come from the registries: every
//! registered name is listed, and every name listed is accepted by `compare`.

use continuum_core::mitigation::MitigationKind;

/// The README paragraph that lists the names (from "Policies (" to "Bad input").
fn names_paragraph() -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let start = readme
        .find("Policies (")
        .expect("the README lists the policies");
    let end = start
        + readme[start..]
            .find("Bad input")
            .expect("… up to `Bad input`");
    readme[start..end].to_string()
}

#[test]
fn the_readme_lists_every_registered_name() {
    let p = names_paragraph();
    let listed = |n: &str| p.contains(&format!("`{n}`"));
    for n in continuum_core::policy::names() {
        assert!(listed(n), "the README does not list policy `{n}`");
    }
    for n in continuum_core::pull::BASELINES {
        assert!(listed(n), "the README does not list pull row `{n}`");
    }
    for k in MitigationKind::ALL {
        assert!(
            listed(&format!("{}@r", k.name())),
            "the README does not list mitigation `{}@r`",
            k.name()
        );
    }
}

#[test]
fn every_name_the_readme_lists_is_accepted() {
    let p = names_paragraph();
    let ticked: Vec<&str> = p.split('`').skip(1).step_by(2).collect();
    for t in ticked {
        if t.starts_with("--") || t.contains(' ') || t.contains('<') {
            continue; // options, forms with placeholders, commands
        }
        let accepted = continuum_core::policy::by_name(t).is_some()
            || continuum_core::pull::BASELINES.contains(&t)
            || t == "none"
            || t.strip_suffix("@r")
                .is_some_and(|k| MitigationKind::parse(k).is_ok());
        assert!(
            accepted,
            "the README lists `{t}`, which no registry accepts"
        );
    }
}
