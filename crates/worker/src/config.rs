//! Worker settings: a YAML file layered with `CONTINUUM_*` environment overrides (the `config`
//! crate). Nested keys use a double underscore: `CONTINUUM_HTTP__LISTEN=127.0.0.1:9000`,
//! `CONTINUUM_LOAD_REPORT_MS=50`, `CONTINUUM_BACKEND=tract`. Only variables that name a worker
//! setting are read, so unrelated `CONTINUUM_*` variables do no harm.

use crate::inference::BackendChoice;
pub use continuum_wire::{GrpcConfig, HttpConfig, QuicConfig};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// All settings of one worker process.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkerConfig {
    /// Name of this worker in load reports and logs.
    #[serde(default = "default_name")]
    pub name: String,
    /// Inference backend: `auto`, `onnxruntime` or `tract`.
    #[serde(default)]
    pub backend: BackendChoice,
    /// Directory with `models.yaml` and the ONNX files (relative paths are taken from the
    /// working directory).
    #[serde(default = "default_models_dir")]
    pub models_dir: PathBuf,
    /// The HTTP (Open Inference Protocol v2) endpoint.
    #[serde(default)]
    pub http: HttpConfig,
    /// The gRPC endpoint (none unless configured).
    #[serde(default)]
    pub grpc: Option<GrpcConfig>,
    /// The QUIC endpoint.
    #[serde(default)]
    pub quic: QuicConfig,
    /// Load report period Δ, ms (docs/model.md §8 default staleness: 100 ms).
    #[serde(default = "default_report_ms")]
    pub load_report_ms: u64,
    /// Sliding window over which incoming qps, throughput and open streams are measured, ms
    /// (same default as `simulate --load-window-ms`).
    #[serde(default = "default_window_ms")]
    pub load_window_ms: u64,
    /// Longest wait for in-flight queries at shutdown, ms. assumption: 10 s covers any batch.
    #[serde(default = "default_grace_ms")]
    pub shutdown_grace_ms: u64,
    /// The variants served: each is one model at one batch size, with its own queue.
    pub variants: Vec<VariantConfig>,
}

/// One served variant.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantConfig {
    /// Variant name: the `{m}` of `/v2/models/{m}` and of QUIC requests.
    pub name: String,
    /// Model name in the models directory's manifest.
    pub model: String,
    /// Batch size B_v: most items run together.
    pub max_batch: usize,
    /// Longest wait for a batch to fill once its first query is queued, ms. assumption: 2 ms,
    /// small against the 50 ms and longer deadlines of workloads/default.yaml.
    #[serde(default = "default_queue_delay_ms")]
    pub max_queue_delay_ms: f64,
    /// Most items waiting in the queue; more are rejected. assumption: 64.
    #[serde(default = "default_max_queue")]
    pub max_queue: usize,
    /// Intra-op threads of its session. assumption: 1, one core per replica as in the profile.
    #[serde(default = "default_threads")]
    pub threads: usize,
    /// Emulates a slower device: every batch holds the session at least this long, ms (the
    /// batching thread sleeps what the computation left), so that the variant's capacity here is
    /// that of the device its profile describes — the worker's counterpart of the gateway's
    /// `inject_delays`. The hold is counted on the emulated device's clock: a batch that waited
    /// for the one before starts as that one ends on the device, however late the host's thread
    /// reaches it. 0 (default): as fast as this machine computes.
    #[serde(default)]
    pub min_batch_ms: f64,
}

fn default_name() -> String {
    "worker".into()
}
fn default_models_dir() -> PathBuf {
    "models".into()
}
fn default_report_ms() -> u64 {
    100
}
fn default_window_ms() -> u64 {
    1000
}
fn default_grace_ms() -> u64 {
    10_000
}
fn default_queue_delay_ms() -> f64 {
    2.0
}
fn default_max_queue() -> usize {
    64
}
fn default_threads() -> usize {
    1
}

/// Top-level keys that `CONTINUUM_*` variables may set.
pub const ENV_KEYS: &[&str] = &[
    "name",
    "backend",
    "models_dir",
    "http",
    "grpc",
    "quic",
    "load_report_ms",
    "load_window_ms",
    "shutdown_grace_ms",
];

impl WorkerConfig {
    /// Reads `path` (YAML), then applies `CONTINUUM_*` overrides, then checks the result.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let cfg: WorkerConfig = continuum_wire::load_settings(path, ENV_KEYS)?;
        cfg.validate()
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        Ok(cfg)
    }

    /// Checks values the types cannot: non-empty, unique variants; positive sizes and periods.
    pub fn validate(&self) -> Result<(), String> {
        if self.variants.is_empty() {
            return Err("variants: expected at least one variant".into());
        }
        for (i, v) in self.variants.iter().enumerate() {
            if self.variants[..i].iter().any(|x| x.name == v.name) {
                return Err(format!(
                    "variants[{i}].name: duplicate variant `{}`",
                    v.name
                ));
            }
            if v.name.is_empty() || v.name.contains('/') {
                return Err(format!(
                    "variants[{i}].name: expected a non-empty name without `/`, got `{}`",
                    v.name
                ));
            }
            if v.max_batch == 0 || v.max_queue == 0 || v.threads == 0 {
                return Err(format!(
                    "variants[{i}]: max_batch, max_queue and threads must be >= 1"
                ));
            }
            if !(v.min_batch_ms >= 0.0 && v.min_batch_ms.is_finite()) {
                return Err(format!(
                    "variants[{i}].min_batch_ms: expected a number of ms >= 0, got {}",
                    v.min_batch_ms
                ));
            }
            if !(v.max_queue_delay_ms >= 0.0 && v.max_queue_delay_ms.is_finite()) {
                return Err(format!(
                    "variants[{i}].max_queue_delay_ms: expected >= 0, got {}",
                    v.max_queue_delay_ms
                ));
            }
        }
        if self.load_report_ms == 0 || self.load_window_ms == 0 {
            return Err("load_report_ms and load_window_ms must be >= 1".into());
        }
        self.http.validate()?;
        if let Some(g) = &self.grpc {
            g.validate()?;
        }
        if self.quic.max_frame_bytes == 0 {
            return Err("quic.max_frame_bytes: expected >= 1".into());
        }
        if self.quic.cert.is_some() != self.quic.key.is_some() {
            return Err("quic: give both cert and key, or neither".into());
        }
        Ok(())
    }
}
