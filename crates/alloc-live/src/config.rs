//! Settings of `continuum allocator --config <file>`: the scenario the allocator models, the
//! gateways whose demand it reads and the workers it loads and unloads variants on.

use continuum_core::config::{ConfigError, Source};
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::path::{Path, PathBuf};

/// The default floor: one variant of each task stays loaded on each worker that serves the
/// task, so a slice with no traffic still answers the first stream (an assumption: the
/// cheapest safe floor; a configured `floor` overrides it).
pub const DEFAULT_FLOOR: usize = 1;
/// The largest `floor` accepted: more variants of one task than a worker serves in any
/// shipped configuration, far below what could exhaust anything.
const MAX_FLOOR: u64 = 64;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    topology: PathBuf,
    #[serde(default = "default_profiles")]
    profiles: PathBuf,
    workload: PathBuf,
    allocator: Spanned<String>,
    #[serde(default = "default_slot")]
    slot_s: Spanned<f64>,
    #[serde(default)]
    units: Option<Spanned<String>>,
    #[serde(default)]
    eta0: Option<Spanned<f64>>,
    #[serde(default)]
    horizon_slots: Option<Spanned<u64>>,
    #[serde(default)]
    floor: Option<Spanned<u64>>,
    gateways: Vec<GatewaySpec>,
    workers: Vec<WorkerSpec>,
}

fn default_profiles() -> PathBuf {
    PathBuf::from("profiles/object-detection.yaml")
}

fn default_slot() -> Spanned<f64> {
    Spanned::new(
        continuum_alloc::placement::DEFAULT_SLOT_S,
        serde_saphyr::Location::UNKNOWN,
        serde_saphyr::Location::UNKNOWN,
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GatewaySpec {
    scheduler: Spanned<String>,
    metrics: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkerSpec {
    cluster: Spanned<String>,
    url: Spanned<String>,
}

/// A gateway: the scheduler it runs and where its Prometheus metrics are.
#[derive(Debug, Clone, PartialEq)]
pub struct GatewayTarget {
    /// Scheduler (access cluster id).
    pub scheduler: String,
    /// `http://host:port/metrics`.
    pub metrics: String,
}

/// A live worker: its cluster and HTTP base URL (`http://host:port`).
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerTarget {
    /// Cluster id.
    pub cluster: String,
    /// Base URL of its HTTP endpoint.
    pub url: String,
}

/// Validated settings.
#[derive(Debug, Clone, PartialEq)]
pub struct AllocatorConfig {
    /// Topology file (its clusters and schedulers; candidate workers are derived).
    pub topology: PathBuf,
    /// Variant profiles.
    pub profiles: PathBuf,
    /// Workload (its application classes are the ports; their mean durations turn refused
    /// stream rates into demand).
    pub workload: PathBuf,
    /// Allocator name ([`continuum_alloc::alloc::NAMES`]).
    pub allocator: String,
    /// Slot length, s.
    pub slot_s: f64,
    /// Model settings.
    pub model: continuum_alloc::placement::ModelOptions,
    /// The T of OGA's regret-bound learning rate (default: the slots of one day).
    pub horizon_slots: u64,
    /// The fewest variants of each task that stay loaded on each worker serving that task,
    /// whatever the allocator wants (default [`DEFAULT_FLOOR`]; 0 lets it unload them all).
    pub floor: usize,
    /// Gateways, one per scheduler at most.
    pub gateways: Vec<GatewayTarget>,
    /// Workers.
    pub workers: Vec<WorkerTarget>,
}

fn http_url(src: &Source, s: &Spanned<String>, field: String) -> Result<String, ConfigError> {
    let ok = s
        .value
        .strip_prefix("http://")
        .is_some_and(|rest| !rest.is_empty() && !rest.starts_with('/'));
    if ok {
        Ok(s.value.trim_end_matches('/').to_string())
    } else {
        Err(src.error_at(
            s,
            field,
            format!("expected an http:// URL, got `{}`", s.value),
        ))
    }
}

impl AllocatorConfig {
    /// Reads and checks a settings file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        Self::from_source(&Source::read(path)?)
    }

    /// Parses and checks settings text.
    pub fn from_source(src: &Source) -> Result<Self, ConfigError> {
        let f: File = src.parse()?;
        let a = &f.allocator;
        let renamed = continuum_alloc::alloc::RENAMED;
        let name = if let Some((old, new)) = renamed.iter().find(|(old, _)| *old == a.value) {
            src.warn_deprecated(
                a,
                &format!("allocator: {old}"),
                &format!("allocator: {new}"),
            );
            new.to_string()
        } else {
            a.value.clone()
        };
        if !continuum_alloc::alloc::NAMES.contains(&name.as_str()) {
            return Err(src.error_at(
                a,
                "allocator",
                format!(
                    "unknown allocator `{}`; known: {}",
                    a.value,
                    continuum_alloc::alloc::NAMES.join(", ")
                ),
            ));
        }
        if !(f.slot_s.value > 0.0 && f.slot_s.value.is_finite()) {
            return Err(src.error_at(
                &f.slot_s,
                "slot_s",
                format!("expected a slot in s > 0, got {}", f.slot_s.value),
            ));
        }
        let units = match &f.units {
            None => continuum_alloc::placement::Units::default(),
            Some(u) => continuum_alloc::placement::Units::parse(&u.value)
                .map_err(|m| src.error_at(u, "units", m))?,
        };
        if let Some(e) = &f.eta0 {
            if !(e.value > 0.0 && e.value.is_finite()) {
                return Err(src.error_at(
                    e,
                    "eta0",
                    format!("expected a learning rate > 0, got {}", e.value),
                ));
            }
        }
        if f.gateways.is_empty() {
            return Err(src.error_file("gateways", "expected at least one gateway"));
        }
        if f.workers.is_empty() {
            return Err(src.error_file("workers", "expected at least one worker"));
        }
        let gateways = f
            .gateways
            .iter()
            .enumerate()
            .map(|(i, g)| {
                Ok(GatewayTarget {
                    scheduler: g.scheduler.value.clone(),
                    metrics: http_url(src, &g.metrics, format!("gateways[{i}].metrics"))?,
                })
            })
            .collect::<Result<_, ConfigError>>()?;
        let workers = f
            .workers
            .iter()
            .enumerate()
            .map(|(i, w)| {
                Ok(WorkerTarget {
                    cluster: w.cluster.value.clone(),
                    url: http_url(src, &w.url, format!("workers[{i}].url"))?,
                })
            })
            .collect::<Result<_, ConfigError>>()?;
        let horizon_slots = match &f.horizon_slots {
            None => (86_400.0 / f.slot_s.value).ceil().max(1.0) as u64,
            Some(h) if h.value > 0 => h.value,
            Some(h) => {
                return Err(src.error_at(h, "horizon_slots", "expected a number of slots > 0"));
            }
        };
        let floor = match &f.floor {
            None => DEFAULT_FLOOR,
            Some(x) if x.value <= MAX_FLOOR => x.value as usize,
            Some(x) => {
                return Err(src.error_at(
                    x,
                    "floor",
                    format!(
                        "expected at most {MAX_FLOOR} variants per task and worker, got {}",
                        x.value
                    ),
                ));
            }
        };
        Ok(Self {
            floor,
            horizon_slots,
            topology: f.topology,
            profiles: f.profiles,
            workload: f.workload,
            allocator: name,
            slot_s: f.slot_s.value,
            model: continuum_alloc::placement::ModelOptions {
                units,
                eta0: f.eta0.map(|e| e.value),
            },
            gateways,
            workers,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<AllocatorConfig, ConfigError> {
        AllocatorConfig::from_source(&Source::inline("alloc.yaml", text))
    }

    const GOOD: &str = "topology: t.yaml\nworkload: w.yaml\nallocator: oga\n\
        gateways: [{scheduler: ant-00, metrics: 'http://127.0.0.1:8080/metrics'}]\n\
        workers: [{cluster: co-0, url: 'http://127.0.0.1:8010/'}]\n";

    #[test]
    fn reads_settings_with_defaults() {
        let c = parse(GOOD).unwrap();
        assert_eq!(c.allocator, "oga");
        // The former name of `oga` is read as `oga`.
        let old = parse(&GOOD.replace("allocator: oga", "allocator: oga-oblivious")).unwrap();
        assert_eq!(old.allocator, "oga");
        assert_eq!(c.slot_s, 30.0);
        assert_eq!(c.workers[0].url, "http://127.0.0.1:8010");
        assert_eq!(c.model, continuum_alloc::placement::ModelOptions::default());
        assert_eq!(c.horizon_slots, 2880, "one day of 30 s slots");
        assert_eq!(c.floor, DEFAULT_FLOOR);
        assert_eq!(parse(&format!("{GOOD}floor: 0\n")).unwrap().floor, 0);
    }

    #[test]
    fn the_shipped_settings_parse() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let c = AllocatorConfig::load(&root.join("config/allocator.yaml")).unwrap();
        assert_eq!((c.gateways.len(), c.workers.len()), (1, 2));
        assert_eq!(c.allocator, "oga");
        // The former name of `oga` is read as `oga`.
        let c = AllocatorConfig::from_source(&Source::inline(
            "a.yaml",
            &GOOD.replace("allocator: oga", "allocator: oga-oblivious"),
        ))
        .unwrap();
        assert_eq!(c.allocator, "oga");
    }

    #[test]
    fn refuses_bad_settings_with_the_field() {
        for (text, want) in [
            (GOOD.replace("oga", "greedy"), "allocator"),
            (
                GOOD.replace("'http://127.0.0.1:8010/'", "ftp://x"),
                "workers[0].url",
            ),
            (format!("{GOOD}slot_s: 0\n"), "slot_s"),
            (format!("{GOOD}units: furlongs\n"), "units"),
            (format!("{GOOD}eta0: -2\n"), "eta0"),
            (format!("{GOOD}colour: red\n"), "colour"),
            (format!("{GOOD}floor: 1000\n"), "floor"),
        ] {
            let e = parse(&text).unwrap_err().to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
    }
}
