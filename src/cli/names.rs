//! Every name the command line accepts, drawn from the registries (policies, pull rows,
//! mitigations, allocators), for `--help` and for the errors that refuse an unknown name. Nothing
//! here is kept by hand: a policy, puller, mitigation or allocator added to its registry shows up
//! in every list at once.

use continuum_core::mitigation::MitigationKind;

use continuum_lab::runner::RESOLUTIONS;

/// The dispatch policies a name gives, in registry order, with the power-of-d family's form.
pub(crate) fn policies() -> String {
    format!(
        "{}, `choices:<d>` (d from 1 to {})",
        ticked(continuum_core::policy::names()),
        continuum_core::policy::choices::MAX_D
    )
}

/// The row forms of `compare --policies` beyond a policy.
pub(crate) fn other_rows() -> String {
    format!(
        "{}, `tapfinger:<checkpoint>`, `tapfinger[<settings>]:<checkpoint>` (settings, \
         comma-separated: a resolution, {}, `fallback=<c>` and/or `sample`), `per-class:<file>`",
        ticked(continuum_core::pull::BASELINES),
        ticked(RESOLUTIONS)
    )
}

/// The mitigation forms (`<policy>+<mitigation>`).
pub(crate) fn mitigations() -> String {
    let mut all = vec!["`none`".to_string()];
    all.extend(
        MitigationKind::ALL
            .iter()
            .map(|k| format!("`{}@<r>`", k.name())),
    );
    all.join(", ")
}

/// The allocator names of `--allocators`.
pub(crate) fn allocators() -> String {
    let mut all = vec!["static"];
    all.extend(continuum_alloc::alloc::NAMES);
    all.extend(continuum_alloc::alloc::ABLATIONS);
    ticked(all)
}

/// The text after `simulate`'s and `compare`'s options: every accepted name.
pub(crate) fn catalogue() -> String {
    format!(
        "Policies: {}.\nOther rows (compare --policies): {}.\nMitigations (<policy>+<mitigation>, \
         r in (0, 1]): {}.\nAllocators (compare --allocators): {}.",
        policies(),
        other_rows(),
        mitigations(),
        allocators()
    )
}

/// The text after `simulate`'s options: the names its `--policy` takes (one policy, and a
/// mitigation), none of `compare`'s other rows or allocators.
pub(crate) fn simulate_catalogue() -> String {
    format!(
        "Policies: {}.\nMitigations (<policy>+<mitigation>, r in (0, 1]): {}.",
        policies(),
        mitigations()
    )
}

/// The text after `worker`'s and `gateway`'s options: where the settings' keys are explained
/// (`example`), the top-level `keys` a variable may set, and how (`variable`, an example).
pub(crate) fn server_settings(keys: &[&str], example: &str, variable: &str) -> String {
    format!(
        "Settings: a YAML file ({example} shows and comments every key). A variable sets any \
         key under these top-level ones instead: {}; CONTINUUM_<KEY>, nested keys joined by a \
         double underscore (e.g. {variable}). An error names the variable at fault, or the \
         file's line and column.",
        ticked(keys.iter().copied())
    )
}

/// `name1`, `name2`, … in order.
fn ticked<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    names
        .into_iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_names_every_registry_entry() {
        let c = catalogue();
        for p in continuum_core::policy::names() {
            assert!(c.contains(&format!("`{p}`")), "{p} missing from {c}");
        }
        for n in continuum_core::pull::BASELINES
            .into_iter()
            .chain(continuum_alloc::alloc::NAMES)
            .chain(RESOLUTIONS)
        {
            assert!(c.contains(&format!("`{n}`")), "{n} missing from {c}");
        }
        for k in MitigationKind::ALL {
            assert!(c.contains(&format!("`{}@<r>`", k.name())), "{c}");
        }
        for n in continuum_alloc::alloc::ABLATIONS {
            assert!(c.contains(&format!("`{n}`")), "{n} missing from {c}");
        }
    }

    #[test]
    fn the_servers_help_names_every_key_a_variable_sets() {
        let w = server_settings(
            continuum_worker::config::ENV_KEYS,
            "config/worker.yaml",
            "X=1",
        );
        for k in continuum_worker::config::ENV_KEYS {
            assert!(w.contains(&format!("`{k}`")), "{k}: {w}");
        }
        assert!(
            w.contains("config/worker.yaml") && w.contains("CONTINUUM_<KEY>"),
            "{w}"
        );
    }

    #[test]
    fn simulate_names_only_what_it_takes() {
        let c = simulate_catalogue();
        assert!(
            c.contains("`headroom`") && c.contains("`reissue@<r>`"),
            "{c}"
        );
        assert!(!c.contains("Allocators") && !c.contains("`oga`"), "{c}");
        assert!(!c.contains("`greedy-pull`"), "{c}");
    }
}
