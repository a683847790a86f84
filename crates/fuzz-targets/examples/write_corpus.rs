//! Writes every fuzz target's seed corpus to `<dir>/<target>/seed-<n>` (default dir:
//! `fuzz/corpus`), for `cargo fuzz run <target> fuzz/corpus/<target>`; the saved regressions
//! are copied in as well. `fuzz/long_run.sh` runs it first.

use continuum_fuzz_targets::{TARGETS, regressions, repo_root, seeds};

fn main() -> std::io::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .map_or_else(|| repo_root().join("fuzz/corpus"), Into::into);
    for t in TARGETS {
        let d = dir.join(t.name);
        std::fs::create_dir_all(&d)?;
        let corpus = seeds(t.name);
        for (i, s) in corpus.iter().enumerate() {
            std::fs::write(d.join(format!("seed-{i}")), s)?;
        }
        for (name, input) in regressions(t.name) {
            std::fs::write(d.join(format!("regression-{name}")), input)?;
        }
        println!("{}: {} seeds in {}", t.name, corpus.len(), d.display());
    }
    Ok(())
}
