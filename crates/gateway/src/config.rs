//! Gateway settings: a YAML file layered with `CONTINUUM_*` environment overrides (the `config`
//! crate), as for the worker. Nested keys use a double underscore
//! (`CONTINUUM_HTTP__LISTEN=127.0.0.1:9080`, `CONTINUUM_ADMIN_TOKEN=…`). Only variables naming a
//! gateway setting are read.

mod own_bindings;
pub(crate) mod retry;

pub use own_bindings::OwnBindingsSettings;
pub use retry::RetrySettings;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// Longest `app` accepted, bytes. assumption: 64, several times the longest class name in
/// workloads/.
pub const MAX_APP_LEN: usize = 64;

/// Keys shorter than this are refused. assumption: 16 bytes (128 bits), the nonce's strength.
pub const MIN_KEY_BYTES: usize = 16;

/// All settings of one gateway process (one scheduler).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GatewayConfig {
    /// Name in logs and metrics.
    #[serde(default = "default_name")]
    pub name: String,
    /// Topology file (the simulator's format).
    pub topology: PathBuf,
    /// Variant profiles the topology's deployment refers to.
    pub profiles: PathBuf,
    /// The access cluster this gateway schedules for (a cluster id of the topology).
    pub scheduler: String,
    /// Client endpoint.
    #[serde(default)]
    pub http: HttpConfig,
    /// gRPC client endpoint (KServe v2 / Triton `GRPCInferenceService`; none unless set).
    #[serde(default)]
    pub grpc: Option<continuum_wire::GrpcConfig>,
    /// QUIC client endpoint (the QUIC front end: a stream's queries in the workers'
    /// framing; none unless set). `min_report_ms` is not read: the gateway sends no load
    /// reports.
    #[serde(default)]
    pub quic: Option<continuum_wire::QuicConfig>,
    /// Application classes that get their own `app` label in metrics; any other class a
    /// client names is counted as `other`, so clients cannot grow the label set.
    #[serde(default)]
    pub app_classes: Vec<String>,
    /// Secret that signs stream tokens (at least 16 bytes; e.g. `CONTINUUM_STREAM_KEY`). With
    /// the same secret a restarted gateway accepts the streams of the one before.
    #[serde(default)]
    pub stream_key: Option<String>,
    /// File holding the stream key in hex, created with a random key on first start when
    /// missing (used when `stream_key` is not set). Without either, a random key is drawn at
    /// start and streams do not survive a restart.
    #[serde(default)]
    pub stream_key_file: Option<PathBuf>,
    /// How long a closed stream's token stays refused, ms (after that its holder could
    /// re-bind it). assumption: 1 h, far beyond any client's retry of a closed stream.
    #[serde(default = "default_closed_memory_ms")]
    pub closed_stream_memory_ms: u64,
    /// The live workers: where each cluster's variants are served.
    pub workers: Vec<UpstreamConfig>,
    /// Wire names and item shape of each task's tensors (for OIP metadata and for relaying
    /// queries over QUIC).
    pub tasks: BTreeMap<String, TaskIo>,
    /// Static dispatch policy: every stream's without `agent` or `policy_table`; with `agent`,
    /// every class's until the agent's first decision.
    #[serde(default = "default_policy")]
    pub policy: String,
    /// Tail-latency mitigation ([`continuum_core::mitigation`]): `none`; `reissue@<r>`, a query not
    /// answered by r × its deadline is hedged to a second worker and the first answer wins;
    /// `discard@<r>`, workers drop a query that cannot answer by r × its deadline. Both are
    /// timed from the query's emission (the forward layer's `query_times`). The per-job kinds
    /// (`restart@<r>`, `tdp@<r>`) are simulator-only and refused.
    #[serde(default = "default_mitigation")]
    pub mitigation: String,
    /// A static per-class policy table (YAML, as written by `continuum table`): streams are
    /// classed by the application they name, else by their demand bucket, and each class is
    /// bound with its own policy. Not with `agent` (the checkpoint brings its own classes).
    #[serde(default)]
    pub policy_table: Option<PathBuf>,
    /// Meta-policy checkpoint (`continuum train`); when set, every stream class's policy is
    /// chosen every window (the classes are the checkpoint's).
    #[serde(default)]
    pub agent: Option<PathBuf>,
    /// Pull dispatch (docs/model.md §15): new streams wait for a decision step, where every
    /// cluster's agent claims them (the decide layer's pull desk); none unless set. Re-bindings (a worker
    /// gone, a restarted gateway's streams) stay pushed by `policy`.
    #[serde(default)]
    pub pull: Option<PullSettings>,
    /// Meta-policy window T, ms (docs/model.md §9 default: 5 s).
    #[serde(default = "default_window_ms")]
    pub window_ms: u64,
    /// Token required by `PUT /v1/policy` and `POST /v1/reload` (`Authorization: Bearer …`);
    /// without one, those routes always answer 401. The example token `change-me` is refused
    /// unless `http.listen` is a loopback address.
    #[serde(default)]
    pub admin_token: Option<String>,
    /// Load view publication period Δ, ms (docs/model.md §8 default staleness: 100 ms).
    #[serde(default = "default_publish_ms")]
    pub publish_ms: u64,
    /// Streams with no query for this long are closed, ms. assumption: 30 s, several times the
    /// longest frame gap of any app class.
    #[serde(default = "default_idle_ms")]
    pub stream_idle_timeout_ms: u64,
    /// Bound on every call to a worker, ms. assumption: 5 s, far above any deadline served.
    #[serde(default = "default_upstream_timeout_ms")]
    pub upstream_timeout_ms: u64,
    /// Most queries in flight to one worker; beyond it queries are rejected (back-pressure).
    /// assumption: 1024, several seconds of queue at the capacities profiled here.
    #[serde(default = "default_max_in_flight")]
    pub max_in_flight_per_worker: usize,
    /// Most open streams. assumption: 100 000 (memory per stream is measured in docs/performance.md).
    #[serde(default = "default_max_streams")]
    pub max_streams: usize,
    /// Stream opens allowed per second (token bucket refill); over it opens get 429.
    /// assumption: 1000/s, 60× the busiest antenna's client arrival rate in workloads/.
    #[serde(default = "default_open_rate")]
    pub stream_open_rate: f64,
    /// Token bucket depth for stream opens. assumption: 200, a burst of 0.2 s at the rate above.
    #[serde(default = "default_open_burst")]
    pub stream_open_burst: f64,
    /// Weight of the measured RTT/2 in the live d_n^s (the rest is the topology's figure).
    #[serde(default = "default_rtt_weight")]
    pub rtt_weight: f64,
    /// Sim-to-live mode: sleep for the topology's link delays (and the stream's access and
    /// transmission delays) on the way to the worker and back, so loopback behaves like the
    /// topology's network.
    #[serde(default)]
    pub inject_delays: bool,
    /// One-way access delay δ_i assumed for streams that do not state one, ms. assumption: 5 ms,
    /// the middle of the access delays in workloads/default.yaml.
    #[serde(default = "default_access_ms")]
    pub default_access_ms: f64,
    /// Seed of the scheduler's random stream (randomised policies, injected jitter).
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// `text` or `json` log lines.
    #[serde(default)]
    pub log_format: LogFormat,
    /// Retry-on-reset: a query whose worker dies or resets under it is re-sent once to another
    /// feasible worker while its deadline allows, within a retry budget (the forward layer's retry-on-reset).
    #[serde(default)]
    pub retry: RetrySettings,
    /// A QUIC worker silent (no load report) for this long is declared down at once: its
    /// connection is dropped, its queries in flight fail over (retry-on-reset) and its streams
    /// re-bind. Default: as the load view's stall rule, 10 publication periods and at least
    /// 1 s ([`stall_after`]); the QUIC idle timeout (2 s) is the last resort.
    #[serde(default)]
    pub worker_silence_ms: Option<u64>,
    /// Own-binding accounting between load publications ([`OwnBindingsSettings`]).
    #[serde(default)]
    pub own_bindings: OwnBindingsSettings,
}

/// Pull dispatch at the gateway.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PullSettings {
    /// Who claims: `greedy-pull`, `random-pull`, `prior-pull` or `tapfinger:<checkpoint>`.
    pub puller: String,
    /// Time between decision steps, ms (default: `publish_ms`).
    #[serde(default)]
    pub step_ms: Option<u64>,
    /// Steps a stream may wait unclaimed before its open is refused.
    #[serde(default = "default_patience")]
    pub patience: u32,
}

fn default_patience() -> u32 {
    1
}

/// Log line format.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// Client endpoint settings.
#[derive(Debug, Clone, Deserialize)]
pub struct HttpConfig {
    /// Listen address (port 0: any free port).
    #[serde(default = "default_listen")]
    pub listen: SocketAddr,
    /// TLS (certificate, key, optional client CA; reloaded with the configuration); plaintext
    /// when absent.
    #[serde(default)]
    pub tls: Option<continuum_wire::tcp_tls::ServerTls>,
    /// Serve plaintext on a non-loopback `listen` (refused unless set).
    #[serde(default)]
    pub allow_plaintext: bool,
    /// Body size (8 MiB, as the worker), read timeouts, connection caps and header limits
    /// (unknown keys are refused here).
    #[serde(flatten)]
    pub limits: continuum_wire::serve::ServeLimits,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            listen: default_listen(),
            tls: None,
            allow_plaintext: false,
            limits: Default::default(),
        }
    }
}

/// The admin token of the shipped example configuration: anyone can read it, so a gateway
/// reachable from other hosts refuses to start with it.
pub const WELL_KNOWN_ADMIN_TOKEN: &str = "change-me";

/// How the gateway talks to one worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// continuum's QUIC framing (`continuum worker`).
    Quic,
    /// Open Inference Protocol v2 over HTTP (any OIP server, e.g. Triton).
    Http,
}

/// One live worker process.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpstreamConfig {
    /// Name in logs and metrics.
    pub name: String,
    /// The topology cluster it runs on.
    pub cluster: String,
    /// `quic` or `http`.
    pub protocol: Protocol,
    /// QUIC: `host:port`; HTTP: `http://host:port`, or `https://host:port` with `tls`.
    pub address: String,
    /// HTTP over TLS: the CA that signs the worker's certificate, and the client certificate
    /// to present to workers that verify clients (their `http.tls.client_ca`).
    #[serde(default)]
    pub tls: Option<continuum_wire::tcp_tls::ClientTls>,
    /// QUIC: the worker's certificate (DER) to trust, e.g. its `quic.dev_cert_out`.
    #[serde(default)]
    pub cert: Option<PathBuf>,
    /// HTTP: the Prometheus endpoint its load is read from (default `{address}/metrics`).
    #[serde(default)]
    pub metrics: Option<String>,
    /// Variants it serves (profile names); default: the topology's deployment on its cluster.
    #[serde(default)]
    pub variants: Option<Vec<String>>,
}

/// The wire description of a task's model inputs and outputs.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskIo {
    /// Input tensor name.
    pub input: String,
    /// Output tensor name.
    pub output: String,
    /// Shape of one input item (without the batch dimension).
    pub shape: Vec<usize>,
    /// Shape of one output item.
    #[serde(default)]
    pub output_shape: Vec<usize>,
}

fn default_name() -> String {
    "gateway".into()
}
fn default_policy() -> String {
    "least-impedance".into()
}
fn default_mitigation() -> String {
    "none".into()
}
fn default_window_ms() -> u64 {
    5000
}
fn default_publish_ms() -> u64 {
    100
}
fn default_idle_ms() -> u64 {
    30_000
}
fn default_upstream_timeout_ms() -> u64 {
    5000
}
fn default_max_in_flight() -> usize {
    1024
}
fn default_max_streams() -> usize {
    100_000
}
fn default_open_rate() -> f64 {
    1000.0
}
fn default_open_burst() -> f64 {
    200.0
}
fn default_rtt_weight() -> f64 {
    0.5
}
fn default_access_ms() -> f64 {
    5.0
}
fn default_seed() -> u64 {
    1
}
fn default_listen() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 8080))
}
fn default_closed_memory_ms() -> u64 {
    3_600_000
}

/// Top-level keys that `CONTINUUM_*` variables may set.
pub const ENV_KEYS: &[&str] = &[
    "name",
    "topology",
    "profiles",
    "scheduler",
    "http",
    "grpc",
    "quic",
    "app_classes",
    "stream_key",
    "stream_key_file",
    "closed_stream_memory_ms",
    "policy",
    "mitigation",
    "policy_table",
    "agent",
    "window_ms",
    "admin_token",
    "publish_ms",
    "stream_idle_timeout_ms",
    "upstream_timeout_ms",
    "max_in_flight_per_worker",
    "max_streams",
    "stream_open_rate",
    "stream_open_burst",
    "rtt_weight",
    "inject_delays",
    "default_access_ms",
    "seed",
    "log_format",
    "retry",
    "worker_silence_ms",
    "own_bindings",
];

/// A mitigation the gateway can apply, from its name: `none`, `reissue@<r>` or `discard@<r>`.
/// The per-job kinds (`restart@<r>`, `tdp@<r>`) are refused: they act on a stream's whole
/// window of queries, which only the simulator holds.
pub fn live_mitigation(s: &str) -> Result<continuum_core::mitigation::Mitigation, String> {
    let m = continuum_core::mitigation::Mitigation::parse(s)?;
    refuse_simulator_only(&m)?;
    Ok(m)
}

/// Refuses the simulator-only mitigations (`restart@<r>`, `tdp@<r>`) with a message that says
/// so.
pub fn refuse_simulator_only(m: &continuum_core::mitigation::Mitigation) -> Result<(), String> {
    if m.simulator_only() {
        return Err(format!(
            "mitigation `{}` is simulator-only (a per-job kind, acting on a stream's whole \
             window of queries); the gateway applies `none`, `reissue@<r>` or `discard@<r>`",
            m.name()
        ));
    }
    Ok(())
}

impl GatewayConfig {
    /// How long a QUIC worker may go without a load report before it is declared down
    /// (`worker_silence_ms`, else [`stall_after`]).
    pub fn worker_silence(&self) -> std::time::Duration {
        self.worker_silence_ms.map_or_else(
            || stall_after(self.publish_ms),
            std::time::Duration::from_millis,
        )
    }

    /// The configured mitigation (checked by [`Self::validate`], with [`live_mitigation`];
    /// `none` if it does not parse).
    pub fn mitigation(&self) -> continuum_core::mitigation::Mitigation {
        continuum_core::mitigation::Mitigation::parse(&self.mitigation).unwrap_or_default()
    }

    /// Reads `path` (YAML), applies `CONTINUUM_*` overrides, checks the result. Relative file
    /// paths inside are taken from the working directory.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let cfg: GatewayConfig = continuum_wire::load_settings(path, ENV_KEYS)?;
        cfg.validate()
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        Ok(cfg)
    }

    /// Checks what the types cannot.
    pub fn validate(&self) -> Result<(), String> {
        self.validate_pull()?;
        self.validate_upstreams()?;
        self.validate_numbers()?;
        self.validate_access_and_policy()
    }

    /// `pull`: its periods and its puller's name.
    fn validate_pull(&self) -> Result<(), String> {
        if let Some(p) = &self.pull {
            if p.step_ms == Some(0) || p.patience == 0 {
                return Err("pull: step_ms and patience must be at least 1".into());
            }
            if continuum_core::pull::baseline(&p.puller).is_none()
                && !p.puller.starts_with("tapfinger:")
            {
                return Err(format!(
                    "pull.puller: expected one of `{}` or `tapfinger:<checkpoint>`, got `{}`",
                    continuum_core::pull::BASELINES.join("`, `"),
                    p.puller
                ));
            }
        }
        Ok(())
    }

    /// `workers` (unique names, addresses of their protocol) and `tasks` (shapes).
    fn validate_upstreams(&self) -> Result<(), String> {
        if self.workers.is_empty() {
            return Err("workers: expected at least one worker".into());
        }
        for (i, w) in self.workers.iter().enumerate() {
            if self.workers[..i].iter().any(|x| x.name == w.name) {
                return Err(format!("workers[{i}].name: duplicate worker `{}`", w.name));
            }
            match w.protocol {
                Protocol::Quic if w.address.parse::<SocketAddr>().is_err() => {
                    return Err(format!(
                        "workers[{i}].address: expected host:port for QUIC, got `{}`",
                        w.address
                    ));
                }
                Protocol::Http if !w.address.starts_with("http://") && w.tls.is_none() => {
                    return Err(format!(
                        "workers[{i}].address: expected http://host:port (https:// needs \
                         workers[{i}].tls), got `{}`",
                        w.address
                    ));
                }
                Protocol::Http if w.tls.is_some() && !w.address.starts_with("https://") => {
                    return Err(format!(
                        "workers[{i}].address: expected https://host:port with tls, got `{}`",
                        w.address
                    ));
                }
                Protocol::Quic if w.tls.is_some() => {
                    return Err(format!(
                        "workers[{i}].tls: only for protocol http (QUIC workers: cert)"
                    ));
                }
                _ => {}
            }
            if let Some(t) = &w.tls {
                t.validate(&format!("workers[{i}].tls"))?;
            }
        }
        for (name, t) in &self.tasks {
            if t.shape.is_empty() || t.shape.contains(&0) {
                return Err(format!(
                    "tasks.{name}.shape: expected positive dimensions, got {:?}",
                    t.shape
                ));
            }
        }
        Ok(())
    }

    /// Limits, periods, rates and weights: in range.
    fn validate_numbers(&self) -> Result<(), String> {
        let positive = [
            ("window_ms", self.window_ms),
            ("publish_ms", self.publish_ms),
            ("stream_idle_timeout_ms", self.stream_idle_timeout_ms),
            ("upstream_timeout_ms", self.upstream_timeout_ms),
            (
                "max_in_flight_per_worker",
                self.max_in_flight_per_worker as u64,
            ),
            ("max_streams", self.max_streams as u64),
            ("closed_stream_memory_ms", self.closed_stream_memory_ms),
        ];
        self.http.limits.validate()?;
        continuum_wire::tcp_tls::check_plaintext(
            "http",
            self.http.listen,
            self.http.tls.as_ref(),
            self.http.allow_plaintext,
        )?;
        if let Some(g) = &self.grpc {
            g.validate()?;
        }
        self.retry.validate()?;
        self.own_bindings.validate()?;
        if self.worker_silence_ms == Some(0) {
            return Err("worker_silence_ms: expected >= 1".into());
        }
        if let Some((k, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Err(format!("{k}: expected >= 1"));
        }
        let rates = [
            ("stream_open_rate", self.stream_open_rate),
            ("stream_open_burst", self.stream_open_burst),
        ];
        if let Some((k, v)) = rates.iter().find(|(_, v)| !(v.is_finite() && *v > 0.0)) {
            return Err(format!("{k}: expected a number > 0, got {v}"));
        }
        if !(0.0..=1.0).contains(&self.rtt_weight) {
            return Err(format!(
                "rtt_weight: expected a number in [0, 1], got {}",
                self.rtt_weight
            ));
        }
        if !(self.default_access_ms.is_finite() && self.default_access_ms >= 0.0) {
            return Err(format!(
                "default_access_ms: expected >= 0, got {}",
                self.default_access_ms
            ));
        }
        Ok(())
    }

    /// The admin token, the stream key, app class names, the policy, the mitigation, and a
    /// policy table or an agent (not both).
    fn validate_access_and_policy(&self) -> Result<(), String> {
        if self.admin_token.as_deref() == Some(WELL_KNOWN_ADMIN_TOKEN)
            && !self.http.listen.ip().is_loopback()
        {
            return Err(format!(
                "admin_token: `{WELL_KNOWN_ADMIN_TOKEN}` is the example token anyone can read; \
                 set your own (e.g. CONTINUUM_ADMIN_TOKEN) or bind http.listen to loopback \
                 (listening on {})",
                self.http.listen
            ));
        }
        if self.admin_token.as_deref() == Some("") {
            return Err("admin_token: expected a non-empty token".into());
        }
        let key_len = self.stream_key.as_ref().map(String::len);
        if key_len.is_some_and(|n| n < MIN_KEY_BYTES) {
            return Err(format!(
                "stream_key: expected at least {} bytes, got {}",
                MIN_KEY_BYTES,
                key_len.unwrap_or(0)
            ));
        }
        if self.app_classes.iter().any(|a| a.len() > MAX_APP_LEN) {
            return Err(format!(
                "app_classes: expected names of at most {} bytes",
                MAX_APP_LEN
            ));
        }
        if continuum_core::policy::by_name(&self.policy).is_none() {
            return Err(format!(
                "policy: {}",
                continuum_core::policy::unknown(&self.policy)
            ));
        }
        live_mitigation(&self.mitigation).map_err(|e| format!("mitigation: {e}"))?;
        if let (Some(t), Some(a)) = (&self.policy_table, &self.agent) {
            return Err(format!(
                "policy_table: `{}` cannot be used with agent `{}`: the checkpoint defines the \
                 stream classes and picks their policies; set one of the two",
                t.display(),
                a.display()
            ));
        }
        Ok(())
    }
}

/// How long a worker may stay silent before it is treated as stalled. assumption: 10 load
/// periods, and at least 1 s.
pub fn stall_after(publish_ms: u64) -> std::time::Duration {
    std::time::Duration::from_millis((10 * publish_ms).max(1000))
}

#[cfg(test)]
mod tests;
