//! Choosing the inference backend once per process, at start-up.
//!
//! `ort` is built with `load-dynamic`: nothing is downloaded at build time. At start-up the
//! process tries real ONNX Runtime (a `libonnxruntime.so` ≥ 1.24, from `ORT_DYLIB_PATH`, from a
//! pip-installed `onnxruntime` package, or from the loader path); if none loads, it installs the
//! pure-Rust tract backend (`ort-tract`) behind the same `ort` API. `docs/worker.md` says how
//! to install ONNX Runtime without a download at build time (`pip install onnxruntime`).

use super::InferenceError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// Which backend a process asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendChoice {
    /// ONNX Runtime when one loads, otherwise tract.
    #[default]
    Auto,
    /// ONNX Runtime or an error.
    Onnxruntime,
    /// The pure-Rust tract backend.
    Tract,
}

impl BackendChoice {
    /// Parses `auto`, `onnxruntime` (or `ort`) and `tract`.
    pub fn parse(s: &str) -> Result<Self, InferenceError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(Self::Auto),
            "onnxruntime" | "ort" => Ok(Self::Onnxruntime),
            "tract" => Ok(Self::Tract),
            other => Err(InferenceError::Backend(format!(
                "unknown backend `{other}`; expected auto, onnxruntime or tract"
            ))),
        }
    }

    /// The choice named by the `CONTINUUM_BACKEND` environment variable (default `auto`).
    pub fn from_env() -> Result<Self, InferenceError> {
        Self::parse(&std::env::var("CONTINUUM_BACKEND").unwrap_or_default())
    }
}

/// The backend this process runs on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Backend {
    /// Real ONNX Runtime, loaded from this library file.
    Onnxruntime {
        /// The shared library that was loaded.
        library: PathBuf,
    },
    /// The pure-Rust tract backend.
    Tract,
}

impl Backend {
    /// A short label: `onnxruntime` or `tract`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Onnxruntime { .. } => "onnxruntime",
            Self::Tract => "tract",
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Onnxruntime { library } => write!(f, "onnxruntime ({})", library.display()),
            Self::Tract => f.write_str("tract (pure Rust)"),
        }
    }
}

static BACKEND: OnceLock<Backend> = OnceLock::new();
static ENVIRONMENT: OnceLock<ort::environment::Environment> = OnceLock::new();
static INIT: Mutex<()> = Mutex::new(());

/// The `ort` environment of the chosen backend, if one was chosen.
pub fn environment() -> Option<&'static ort::environment::Environment> {
    ENVIRONMENT.get()
}

/// The backend already chosen in this process, if any.
pub fn current() -> Option<&'static Backend> {
    BACKEND.get()
}

/// Chooses and initialises the backend, once per process; later calls return the first choice
/// (or an error when they ask explicitly for the other backend).
pub fn init(choice: BackendChoice) -> Result<&'static Backend, InferenceError> {
    let _guard = INIT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(b) = BACKEND.get() {
        return match (choice, b) {
            (BackendChoice::Onnxruntime, Backend::Tract)
            | (BackendChoice::Tract, Backend::Onnxruntime { .. }) => Err(InferenceError::Backend(
                format!("this process already runs on {b}; the backend is chosen once"),
            )),
            _ => Ok(b),
        };
    }
    let mut tried = Vec::new();
    if choice != BackendChoice::Tract {
        for path in onnxruntime_candidates() {
            match ort::init_from(&path) {
                Ok(builder) => {
                    let env = builder
                        .with_name("continuum")
                        .build()
                        .map_err(|e| InferenceError::Backend(e.to_string()))?;
                    let _ = ENVIRONMENT.set(env);
                    return Ok(BACKEND.get_or_init(|| Backend::Onnxruntime { library: path }));
                }
                Err(e) => tried.push(format!("{}: {e}", path.display())),
            }
        }
        if choice == BackendChoice::Onnxruntime {
            return Err(InferenceError::Backend(format!(
                "no usable ONNX Runtime library (≥ 1.24); tried: {}",
                if tried.is_empty() {
                    "nothing (set ORT_DYLIB_PATH)".to_string()
                } else {
                    tried.join("; ")
                }
            )));
        }
        for t in &tried {
            tracing::debug!(tried = %t, "ONNX Runtime library not usable");
        }
    }
    if !ort::set_api(ort_tract::api()) {
        return Err(InferenceError::Backend(
            "the ort API was already set before the backend was chosen".into(),
        ));
    }
    let env = ort::init()
        .with_name("continuum")
        .build()
        .map_err(|e| InferenceError::Backend(e.to_string()))?;
    let _ = ENVIRONMENT.set(env);
    Ok(BACKEND.get_or_init(|| Backend::Tract))
}

/// Where to look for ONNX Runtime, in order: `ORT_DYLIB_PATH`, the `onnxruntime` package of the
/// local Python's site-packages (pip), then `libonnxruntime.so` on the loader path.
pub fn onnxruntime_candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(p) = std::env::var("ORT_DYLIB_PATH")
        && !p.is_empty()
    {
        out.push(PathBuf::from(p));
    }
    for dir in python_site_packages() {
        out.extend(pip_library(&dir.join("onnxruntime").join("capi")));
    }
    out.push(PathBuf::from(format!(
        "{}onnxruntime{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    )));
    out.dedup();
    out
}

/// `libonnxruntime.so*` files in a pip package's `capi` directory, newest name last.
fn pip_library(capi: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(capi) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("libonnxruntime.so") || n == "libonnxruntime.dylib")
        })
        .collect();
    v.sort();
    v.reverse();
    v
}

/// The site-packages directories of `python3` (asked once; empty if there is no Python).
fn python_site_packages() -> Vec<PathBuf> {
    let script =
        "import site,sys\nprint('\\n'.join(site.getsitepackages()+[site.getusersitepackages()]))";
    match Command::new("python3").args(["-c", script]).output() {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| !l.is_empty())
            .map(PathBuf::from)
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_choices() {
        assert_eq!(BackendChoice::parse("").unwrap(), BackendChoice::Auto);
        assert_eq!(
            BackendChoice::parse("ORT").unwrap(),
            BackendChoice::Onnxruntime
        );
        assert_eq!(BackendChoice::parse("tract").unwrap(), BackendChoice::Tract);
        let e = BackendChoice::parse("cuda").unwrap_err().to_string();
        assert!(e.contains("unknown backend `cuda`"), "{e}");
    }
}
