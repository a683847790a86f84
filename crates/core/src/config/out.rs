//! What `--out` means, for every command: a folder. The command writes its files into it under
//! fixed names (its `--help` lists them). The former form, a file name ending in the extension
//! of the command's one main file (`--out out/fe.dqn`), is still accepted, with a warning that
//! says the new form.

use std::path::{Path, PathBuf};

/// The file a command writes its main output `name` to, given `--out`: `out/name`, or `out`
/// itself when it ends in one of `old_extensions` (the former form), with the warning to print
/// then.
pub fn out_file(out: &Path, name: &str, old_extensions: &[&str]) -> (PathBuf, Option<String>) {
    let old = out
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| old_extensions.contains(&e));
    if old {
        let folder = out.with_extension("");
        let warning = format!(
            "warning: --out {}: a file name is the former form of --out, still accepted; \
             --out names a folder now: --out {} writes {}",
            out.display(),
            folder.display(),
            folder.join(name).display()
        );
        (out.to_path_buf(), Some(warning))
    } else {
        (out.join(name), None)
    }
}

/// [`out_file`], with the folder the file goes in created and checked writable before any
/// work (a run must not fail at its end for want of a folder): the file and the warning to
/// print, or what is wrong with `--out`.
pub fn prepare_out(
    out: &Path,
    name: &str,
    old_extensions: &[&str],
) -> Result<(PathBuf, Option<String>), String> {
    let (file, warning) = out_file(out, name, old_extensions);
    let dir = file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    writable_dir(dir)?;
    Ok((file, warning))
}

/// Creates `dir` if needed and checks a file can be written into it.
pub fn writable_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("--out: cannot create {}: {e}", dir.display()))?;
    let probe = dir.join(".continuum-write-probe");
    std::fs::write(&probe, b"")
        .map_err(|e| format!("--out: cannot write into {}: {e}", dir.display()))?;
    std::fs::remove_file(&probe)
        .map_err(|e| format!("--out: cannot remove {}: {e}", probe.display()))
}

/// Refuses a `--threads` of 0 (leaving it out means every core) or above the larger of 256 and
/// four per core: results never depend on it, and more threads than that only cost time to
/// start (thousands take seconds; 100 000 exhaust the process).
pub fn check_threads(threads: Option<usize>) -> Result<(), String> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let most = 256.max(4 * cores);
    match threads {
        Some(0) => {
            Err("--threads: expected at least 1, got 0 (leave it out to use every core)".into())
        }
        Some(n) if n > most => Err(format!(
            "--threads: at most {most} (four per core, at least 256), got {n}: results do not \
             depend on it, and more threads only cost time to start"
        )),
        _ => Ok(()),
    }
}

/// The checkpoint file a training writes into its `--out` folder, by kind (`dqn`,
/// `tapfinger`, `deeprm`): `checkpoint.<kind>`.
pub fn checkpoint_name(kind: &str) -> String {
    format!("checkpoint.{kind}")
}

/// The checkpoint a path names: the path itself, or for a folder (what a training's `--out`
/// made) the one `checkpoint.*` file in it. `None` for a folder with none or several.
pub fn checkpoint_in(path: &Path) -> Option<PathBuf> {
    if !path.is_dir() {
        return Some(path.to_path_buf());
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(path)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix("checkpoint."))
                .is_some_and(|ext| !ext.is_empty() && !ext.contains('.'))
        })
        .collect();
    found.sort();
    (found.len() == 1).then(|| found.remove(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_gets_the_fixed_name_and_the_old_file_form_a_warning() {
        let (f, w) = out_file(Path::new("out/fe"), "checkpoint.dqn", &["dqn"]);
        assert_eq!((f, w), (PathBuf::from("out/fe/checkpoint.dqn"), None));
        let (f, w) = out_file(Path::new("out/fe.dqn"), "checkpoint.dqn", &["dqn"]);
        assert_eq!(f, PathBuf::from("out/fe.dqn"));
        let w = w.expect("a warning");
        assert!(
            w.contains("--out out/fe writes out/fe/checkpoint.dqn"),
            "{w}"
        );
        // Another extension is a folder's name, not the old form.
        let (f, w) = out_file(Path::new("out/run.1"), "results.json", &["json"]);
        assert_eq!((f, w), (PathBuf::from("out/run.1/results.json"), None));
    }

    #[test]
    fn a_folder_names_its_one_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(checkpoint_in(dir.path()), None, "none");
        std::fs::write(dir.path().join("checkpoint.dqn"), "x").unwrap();
        std::fs::write(dir.path().join("checkpoint.training.csv"), "x").unwrap();
        assert_eq!(
            checkpoint_in(dir.path()),
            Some(dir.path().join("checkpoint.dqn"))
        );
        std::fs::write(dir.path().join("checkpoint.tapfinger"), "x").unwrap();
        assert_eq!(checkpoint_in(dir.path()), None, "two");
        let f = dir.path().join("checkpoint.dqn");
        assert_eq!(checkpoint_in(&f), Some(f.clone()));
    }
}
