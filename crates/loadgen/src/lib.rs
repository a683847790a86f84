//! The load generator (`continuum loadgen`): opens streams against a gateway with a workload's
//! app classes and λ, sends frames at each stream's rate and reports outcomes.
//!
//! Clients and their emission times are drawn exactly as the simulator draws those of one
//! scheduler ([`continuum_core::workload::emission`]), so with the same seed, λ, duration and scheduler
//! index a live run offers the same streams and queries as `continuum simulate`. Sending is
//! open loop: every query leaves at its time whatever happened to earlier ones. A stream the
//! gateway refuses (503, 429, or the load generator's own `--max-streams` cap) has every query
//! it would have sent counted as rejected, as in the simulator.
//!
//! With several gateways (`--gateway A,B,C`, sharing one stream key) streams are spread over
//! them and fail over from one that stops answering to the next (module `fleet`); the report counts
//! per gateway, handovers, failover times and streams lost.
//!
//! Each query is judged from the load generator's clock (send → end of response): `success`
//! when answered with 200 within the stream's deadline, `failure` when answered later,
//! `rejected` otherwise (any other status, a timeout, a transport error).

#![warn(missing_docs)]
#![deny(unreachable_pub)]

mod answer;
mod body;
mod driver;
mod fleet;
mod quic;
mod report;
mod text_table;

pub use body::{BodyFormat, HEADER_LEN, InferBody, ModelSignature};
pub use driver::{run, run_until};
pub use fleet::Assign;
pub use report::{
    AppReport, FleetReport, GatewayCounts, LatencySummary, LoadReport, QueryCounts, Recorder,
    RunConfig, StreamCounts, classify,
};

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use continuum_core::profiles::Profiles;
use continuum_core::workload::{Lambda, Workload};
use continuum_wire::tcp_tls::{self, ClientTls};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Output formats of the report on standard output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// A text table.
    Table,
    /// The JSON report.
    Json,
}

/// Options of `continuum loadgen`.
#[derive(Debug, Clone, Args)]
pub struct LoadgenArgs {
    /// Gateway base URL (http://host:port, or https://host:port with --gateway-ca); several,
    /// comma-separated or repeated, make a fleet sharing one stream key: streams are spread over
    /// them (--assign) and move to the next one when theirs stops answering.
    #[arg(long, value_delimiter = ',', default_value = "http://127.0.0.1:8080")]
    pub gateway: Vec<String>,
    /// Which gateway of --gateway each new stream opens at: `spread` (client i at gateway
    /// i mod n) or `first` (all at the first; the others only take streams over).
    #[arg(long, value_enum, default_value_t = Assign::Spread)]
    pub assign: Assign,
    /// Workload file (YAML).
    #[arg(long, default_value = "workloads/default.yaml")]
    pub workload: PathBuf,
    /// Variant profiles file (YAML): names the workload's tasks.
    #[arg(long, default_value = "profiles/object-detection.yaml")]
    pub profiles: PathBuf,
    /// Constant client arrival rate, clients/min (overrides the workload's λ).
    #[arg(long, allow_negative_numbers = true)]
    pub lambda: Option<f64>,
    /// Duration of client arrivals, s. Emissions stop then too (as in the simulator, unless
    /// --full-streams); queries in flight are awaited.
    #[arg(long, default_value_t = 60.0, allow_negative_numbers = true)]
    pub duration: f64,
    /// Seed of every random stream (the simulator's --seed).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The first this many clients arrive at once at the start (their streams as drawn), so
    /// a short or slow run shows traffic at once, even when fewer would arrive within
    /// --duration (the next ones the arrival process draws join them); 0: every arrival as
    /// the process draws it.
    #[arg(long, default_value_t = 0)]
    pub warm_up: usize,
    /// Which scheduler's random streams to draw clients from (to match a simulation's
    /// scheduler of that index).
    #[arg(long, default_value_t = 0)]
    pub scheduler: u64,
    /// Inference body encoding: OIP v2 binary tensor extension, or JSON.
    #[arg(long, value_enum, default_value_t = BodyFormat::Binary)]
    pub body: BodyFormat,
    /// Timeout of each request (open, infer, close), ms; an infer that times out is rejected.
    // assumption: 10 s is far beyond any deadline of the shipped workloads (at most 1 s), so a
    // timeout means the gateway is stuck rather than slow.
    #[arg(long, default_value_t = 10_000)]
    pub timeout_ms: u64,
    /// Output format on standard output.
    #[arg(long, value_enum, default_value_t = ReportFormat::Table)]
    pub format: ReportFormat,
    /// Also write the JSON report into this folder, as `results.json` (a file name ending in
    /// `.json` is the former form: accepted, with a warning).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Cap on concurrently open streams; clients beyond it are refused (reason `max-streams`)
    /// and their queries counted as rejected.
    #[arg(long)]
    pub max_streams: Option<usize>,
    /// Let streams run their full drawn duration instead of stopping at the end of arrivals.
    #[arg(long)]
    pub full_streams: bool,
    /// Judge each latency with the stream's radio part added (2·δ_i + t_i: access both ways and
    /// transmission), which the simulator includes and a local network does not.
    #[arg(long)]
    pub add_radio_delay: bool,
    /// Speak HTTP/2 (prior knowledge; over https, ALPN h2) instead of HTTP/1.1.
    #[arg(long)]
    pub http2: bool,
    /// PEM certificates of the authorities that sign the gateway's certificate: required for
    /// an https:// --gateway (the gateway's `http.tls`), refused with http:// ones. The
    /// gateway's certificate must name --gateway's host (an IP address needs an IP SAN).
    #[arg(long, value_name = "FILE")]
    pub gateway_ca: Option<PathBuf>,
    /// PEM client certificate chain presented to an https:// --gateway that verifies clients
    /// (its `http.tls.client_ca`); with --gateway-key and --gateway-ca.
    #[arg(long, value_name = "FILE")]
    pub gateway_cert: Option<PathBuf>,
    /// PEM private key of --gateway-cert.
    #[arg(long, value_name = "FILE")]
    pub gateway_key: Option<PathBuf>,
    /// Send queries as QUIC frames to the gateway's QUIC endpoint at this host:port (its
    /// `quic.listen`); streams still open and close over HTTP at --gateway.
    #[arg(long, value_name = "HOST:PORT")]
    pub quic: Option<String>,
    /// Certificate (DER) to trust for --quic: the gateway's own (its `quic.dev_cert_out`) or
    /// the CA that signed it. Its name is checked against --quic's host.
    #[arg(long, value_name = "FILE")]
    pub quic_cert: Option<PathBuf>,
    /// Runtime worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// No progress at all (the help text is the same in every command).
    #[arg(long, help = continuum_term::QUIET_HELP)]
    pub quiet: bool,
    /// Progress lines even when standard error is not a terminal; a value is the former form,
    /// a period (`--progress 5`: `--progress --progress-every 5`; `--progress 0`: `--quiet`),
    /// still read with a warning.
    #[arg(
        long,
        help = continuum_term::PROGRESS_HELP,
        num_args = 0..=1,
        value_name = "S",
        conflicts_with = "quiet"
    )]
    pub progress: Option<Option<String>>,
    /// Period of the progress lines on standard error, s [default: 5]. The former form
    /// `--progress <s>` is still read, with a warning.
    #[arg(long, value_name = "S", allow_negative_numbers = true)]
    pub progress_every: Option<f64>,
    /// Exit with an error (after printing the report) when no client arrived, instead of only
    /// warning: a run that sent nothing measured nothing.
    #[arg(long)]
    pub strict: bool,
}

/// The period of progress lines when none is given (`--progress-every`).
// assumption: a line every 5 s shows progress without flooding the terminal.
pub const PROGRESS_EVERY_S: f64 = 5.0;

impl LoadgenArgs {
    /// The progress flags as every long command reads them (`--progress <s>`, the former
    /// form, read as `--progress`, or as `--quiet` for 0).
    pub fn progress_args(&self) -> continuum_term::ProgressArgs {
        let old_zero =
            matches!(&self.progress, Some(Some(v)) if v.trim().parse::<f64>() == Ok(0.0));
        continuum_term::ProgressArgs {
            quiet: self.quiet || old_zero,
            progress: self.progress.is_some() && !old_zero,
        }
    }

    /// The period of the progress lines on a standard error that is a terminal or not (`None`:
    /// no lines; on a terminal there are some unless `--quiet`, elsewhere only with
    /// `--progress`), and the warning to print when the former form `--progress <s>` was used.
    pub fn progress_lines(
        &self,
        terminal: bool,
    ) -> anyhow::Result<(Option<Duration>, Option<String>)> {
        if let Some(e) = self.progress_every {
            if !(e.is_finite() && e > 0.0) {
                bail!("--progress-every: expected seconds > 0, got {e}");
            }
        }
        let mut every = self.progress_every.unwrap_or(PROGRESS_EVERY_S);
        let mut warning = None;
        if let Some(Some(v)) = &self.progress {
            let s = v
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s >= 0.0)
                .with_context(|| {
                    format!(
                        "--progress {v}: --progress is a switch (progress lines even when \
                         standard error is not a terminal); the period of its lines is \
                         --progress-every <s>"
                    )
                })?;
            if self.progress_every.is_some() {
                bail!(
                    "--progress {v} and --progress-every: give the period once, as \
                     --progress-every (--progress {v} is its former form)"
                );
            }
            warning = Some(if s == 0.0 {
                format!(
                    "warning: --progress {v}: the former form of --quiet, still accepted; write --quiet"
                )
            } else {
                every = s;
                format!(
                    "warning: --progress {v}: a period is the former form, still accepted; write \
                     --progress --progress-every {v} (--progress is now a switch: progress lines \
                     even when standard error is not a terminal)"
                )
            });
        }
        let shown = self.progress_args().mode_on(terminal) != continuum_term::Mode::Off;
        Ok((shown.then(|| Duration::from_secs_f64(every)), warning))
    }
}

/// Everything a load run needs, loaded and checked.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Gateway base URL, without a trailing slash (the first of `gateways`).
    pub gateway: String,
    /// Every gateway of the fleet, in failover order (`gateway` first); one for a single
    /// gateway.
    pub gateways: Vec<String>,
    /// Which gateway each new stream opens at.
    pub assign: Assign,
    /// The workload (λ already overridden where asked).
    pub workload: Workload,
    /// Task names, indexed by [`continuum_core::profiles::TaskId`].
    pub task_names: Vec<String>,
    /// Duration of client arrivals, s.
    pub duration_s: f64,
    /// Clients moved to arrive at the start.
    pub warm_up: usize,
    /// Seed.
    pub seed: u64,
    /// Scheduler index whose random streams are drawn.
    pub scheduler: u64,
    /// Body encoding.
    pub body: BodyFormat,
    /// Timeout of each request.
    pub timeout: Duration,
    /// Cap on concurrently open streams.
    pub max_streams: Option<usize>,
    /// Streams run their full duration.
    pub full_streams: bool,
    /// Add 2·δ_i + t_i to latencies before judging them.
    pub add_radio_delay: bool,
    /// HTTP/2 with prior knowledge.
    pub http2: bool,
    /// TLS towards https:// gateways (`--gateway-ca`, `--gateway-cert`, `--gateway-key`):
    /// required when one is https://, refused when none is ([`LoadOptions::gateway_tls_config`]).
    pub gateway_tls: Option<ClientTls>,
    /// Queries as QUIC frames to the gateway's QUIC endpoint, when set.
    pub quic: Option<QuicTarget>,
    /// Period of progress lines on standard error.
    pub progress: Option<Duration>,
}

/// The gateway's QUIC endpoint and the certificate to trust.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuicTarget {
    /// Host name or IP address (also the name checked in its certificate).
    pub host: String,
    /// UDP port.
    pub port: u16,
    /// Trusted certificate, DER.
    pub cert: Vec<u8>,
}

impl QuicTarget {
    /// Parses `host:port` (`[v6]:port` for IPv6 literals) and reads the DER certificate.
    pub fn new(addr: &str, cert: &std::path::Path) -> anyhow::Result<Self> {
        let (host, port) = addr
            .rsplit_once(':')
            .with_context(|| format!("--quic {addr}: expected host:port"))?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            bail!("--quic {addr}: no host");
        }
        let port = port
            .parse::<u16>()
            .ok()
            .filter(|p| *p > 0)
            .with_context(|| format!("--quic {addr}: expected a port 1..=65535, got `{port}`"))?;
        let cert = std::fs::read(cert)
            .with_context(|| format!("--quic-cert {}: cannot read it", cert.display()))?;
        Ok(Self {
            host: host.to_string(),
            port,
            cert,
        })
    }
}

impl LoadOptions {
    /// Options with defaults for `workload` against `gateway`: 60 s, seed 1, scheduler 0,
    /// binary bodies, 10 s timeout, no stream cap, no progress lines. An https:// gateway also
    /// needs [`LoadOptions::gateway_tls`] (checked by [`LoadOptions::gateway_tls_config`]).
    pub fn new(gateway: &str, workload: Workload, profiles: &Profiles) -> anyhow::Result<Self> {
        let gateway = check_gateway(gateway)?;
        Ok(Self {
            gateways: vec![gateway.clone()],
            gateway,
            assign: Assign::Spread,
            workload,
            task_names: profiles.tasks.iter().map(|t| t.name.clone()).collect(),
            // As the `--duration` and `--seed` defaults.
            duration_s: 60.0,
            warm_up: 0,
            seed: 1,
            scheduler: 0,
            body: BodyFormat::Binary,
            // assumption: as the `--timeout-ms` default.
            timeout: Duration::from_secs(10),
            max_streams: None,
            full_streams: false,
            add_radio_delay: false,
            http2: false,
            gateway_tls: None,
            quic: None,
            progress: None,
        })
    }

    /// Sets the fleet of gateways (in failover order; the first becomes `gateway`): each URL
    /// is checked, and an empty or repeated entry is refused naming `--gateway`.
    pub fn set_gateways<S: AsRef<str>>(&mut self, urls: &[S]) -> anyhow::Result<()> {
        if urls.is_empty() {
            bail!("--gateway: expected at least one gateway URL");
        }
        let mut out: Vec<String> = Vec::with_capacity(urls.len());
        for (i, u) in urls.iter().enumerate() {
            let u = u.as_ref().trim();
            if u.is_empty() {
                bail!(
                    "--gateway: entry {} of the list is empty (expected http[s]://host:port[,http[s]://host:port…])",
                    i + 1
                );
            }
            let g = check_gateway(u)?;
            if out.contains(&g) {
                bail!("--gateway {u}: listed twice");
            }
            out.push(g);
        }
        self.gateway = out[0].clone();
        self.gateways = out;
        Ok(())
    }

    /// Loads the files `args` name and checks its values.
    pub fn from_args(args: &LoadgenArgs) -> anyhow::Result<Self> {
        let profiles = Profiles::load(&args.profiles)
            .with_context(|| format!("--profiles {}", args.profiles.display()))?;
        let mut workload = Workload::load(&args.workload, &profiles)
            .with_context(|| format!("--workload {}", args.workload.display()))?;
        if let Some(l) = args.lambda {
            if !(l.is_finite() && l >= 0.0) {
                bail!("--lambda: expected clients per minute >= 0, got {l}");
            }
            workload.lambda = Lambda::Constant(l);
        }
        if !(args.duration.is_finite() && args.duration > 0.0) {
            bail!("--duration: expected seconds > 0, got {}", args.duration);
        }
        if args.timeout_ms == 0 {
            bail!("--timeout-ms: expected a timeout > 0");
        }
        if args.max_streams == Some(0) {
            bail!("--max-streams: expected at least 1");
        }
        if args.threads == Some(0) {
            bail!("--threads: expected at least 1");
        }
        let quic = match (&args.quic, &args.quic_cert) {
            (Some(a), Some(c)) => Some(QuicTarget::new(a, c)?),
            (Some(_), None) => bail!("--quic: expected --quic-cert with the certificate to trust"),
            (None, Some(_)) => bail!("--quic-cert: only with --quic"),
            (None, None) => None,
        };
        if quic.is_some() && args.body == BodyFormat::Json {
            bail!("--body json: QUIC frames carry binary tensors; leave --body out with --quic");
        }
        let gateway_tls = gateway_tls_args(args)?;
        let (progress, warning) = args.progress_lines(std::io::stderr().is_terminal())?;
        if let Some(w) = warning {
            eprintln!("{w}");
        }
        let first = args
            .gateway
            .first()
            .context("--gateway: expected at least one gateway URL")?;
        let mut o = Self::new(first.trim(), workload, &profiles)?;
        o.set_gateways(&args.gateway)?;
        o.assign = args.assign;
        if o.gateways.len() > 1 && args.quic.is_some() {
            bail!("--quic: queries over QUIC go to one gateway; give one --gateway with it");
        }
        o.duration_s = args.duration;
        o.warm_up = args.warm_up;
        o.seed = args.seed;
        o.scheduler = args.scheduler;
        o.body = args.body;
        o.timeout = Duration::from_millis(args.timeout_ms);
        o.max_streams = args.max_streams;
        o.full_streams = args.full_streams;
        o.add_radio_delay = args.add_radio_delay;
        o.http2 = args.http2;
        o.gateway_tls = gateway_tls;
        o.quic = quic;
        o.progress = progress;
        // Reads the TLS files now: a bad one must not wait for the first request.
        o.gateway_tls_config()?;
        Ok(o)
    }

    /// The rustls client configuration towards the gateways (no ALPN: the HTTP connector sets
    /// it), `None` when every gateway is plain http://. An https:// gateway without
    /// `gateway_tls`, `gateway_tls` without an https:// gateway, and unreadable files are
    /// refused naming the flag.
    pub fn gateway_tls_config(&self) -> anyhow::Result<Option<Arc<rustls::ClientConfig>>> {
        let https = self.gateways.iter().find(|g| g.starts_with("https://"));
        let tls = match (&self.gateway_tls, https) {
            (None, None) => return Ok(None),
            (None, Some(g)) => bail!(
                "--gateway {g}: https needs --gateway-ca FILE (the PEM authorities that sign \
                 the gateway's certificate)"
            ),
            (Some(_), None) => bail!(
                "--gateway-ca: only with an https:// --gateway (got {})",
                self.gateways.join(",")
            ),
            (Some(t), Some(_)) => t,
        };
        tcp_tls::read_certs(&tls.ca)
            .with_context(|| format!("--gateway-ca {}: cannot read it", tls.ca.display()))?;
        let config = tls
            .client_config(&[])
            .with_context(|| match (&tls.cert, &tls.key) {
                (Some(c), Some(k)) => format!(
                    "--gateway-cert {} and --gateway-key {}: not a usable client certificate",
                    c.display(),
                    k.display()
                ),
                _ => format!("--gateway-ca {}: not usable", tls.ca.display()),
            })?;
        Ok(Some(config))
    }

    /// What the report echoes of these options.
    pub fn run_config(&self) -> RunConfig {
        RunConfig {
            gateway: self.gateways.join(","),
            assign: self.assign.name().into(),
            lambda: self.workload.lambda.describe(),
            duration_s: self.duration_s,
            seed: self.seed,
            scheduler: self.scheduler,
            body: match &self.quic {
                Some(_) => "quic-frame".into(),
                None => format!("{:?}", self.body).to_lowercase(),
            },
            quic: self.quic.as_ref().map(|q| format!("{}:{}", q.host, q.port)),
            timeout_ms: self.timeout.as_millis() as u64,
            max_streams: self.max_streams,
            full_streams: self.full_streams,
            add_radio_delay: self.add_radio_delay,
        }
    }
}

/// The TLS flags towards the gateway: `--gateway-cert` and `--gateway-key` come together, and
/// only with `--gateway-ca`.
fn gateway_tls_args(args: &LoadgenArgs) -> anyhow::Result<Option<ClientTls>> {
    match (&args.gateway_ca, &args.gateway_cert, &args.gateway_key) {
        (_, Some(_), None) => {
            bail!("--gateway-cert: expected --gateway-key with it (both or neither)")
        }
        (_, None, Some(_)) => {
            bail!("--gateway-key: expected --gateway-cert with it (both or neither)")
        }
        (None, Some(_), Some(_)) => {
            bail!(
                "--gateway-cert: expected --gateway-ca too (the authorities of the gateway's certificate)"
            )
        }
        (None, None, None) => Ok(None),
        (Some(ca), cert, key) => Ok(Some(ClientTls {
            ca: ca.clone(),
            cert: cert.clone(),
            key: key.clone(),
        })),
    }
}

/// Checks a gateway URL (`http[s]://host[:port]`, no path) and drops a trailing slash; whether
/// https has its CA is [`LoadOptions::gateway_tls_config`]'s check.
fn check_gateway(url: &str) -> anyhow::Result<String> {
    let base = url.trim_end_matches('/');
    let uri: hyper::Uri = base
        .parse()
        .with_context(|| format!("--gateway {url}: not a URL"))?;
    match uri.scheme_str() {
        Some("http" | "https") => {}
        Some(s) => bail!("--gateway {url}: scheme {s} is not supported, use http:// or https://"),
        None => bail!("--gateway {url}: expected http://host:port or https://host:port"),
    }
    if uri.host().is_none_or(str::is_empty) {
        bail!("--gateway {url}: no host");
    }
    if !matches!(uri.path(), "" | "/") || uri.query().is_some() {
        bail!("--gateway {url}: expected a base URL without a path");
    }
    Ok(base.to_string())
}

/// Runs `continuum loadgen`.
pub fn execute(args: &LoadgenArgs) -> anyhow::Result<()> {
    let opts = LoadOptions::from_args(args)?;
    // Checked before any traffic: a run must not fail at its end for want of a folder.
    let out = match &args.out {
        Some(o) => {
            let (file, warning) = continuum_core::config::prepare_out(o, "results.json", &["json"])
                .map_err(anyhow::Error::msg)?;
            if let Some(w) = warning {
                eprintln!("{w}");
            }
            Some(file)
        }
        None => None,
    };
    let mut rt = tokio::runtime::Builder::new_multi_thread();
    rt.enable_all();
    if let Some(n) = args.threads {
        rt.worker_threads(n);
    }
    let rt = rt.build().context("starting the async runtime")?;
    let report = rt.block_on(run_until(&opts, async {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("interrupted: no new queries; waiting for those in flight");
        } else {
            std::future::pending::<()>().await;
        }
    }))?;
    let json = report.to_json();
    if let Some(path) = &out {
        std::fs::write(path, &json).with_context(|| format!("writing {}", path.display()))?;
    }
    match args.format {
        ReportFormat::Table => print!("{}", report.to_text_table()),
        ReportFormat::Json => println!("{json}"),
    }
    match no_traffic(&report, &opts) {
        Some(m) if args.strict => bail!("{m}"),
        Some(m) => eprintln!("warning: {m} (--strict makes this an error)"),
        None => {}
    }
    Ok(())
}

/// Why a finished run measured nothing, when no client arrived: what to change.
pub fn no_traffic(report: &LoadReport, opts: &LoadOptions) -> Option<String> {
    (report.streams.arrived == 0).then(|| {
        format!(
            "no client arrived in {} s at λ {} clients/min: every figure above is empty; \
             lengthen --duration, raise --lambda, or start clients at once with --warm-up N",
            opts.duration_s,
            opts.workload.lambda.describe()
        )
    })
}

#[cfg(test)]
mod tests;
