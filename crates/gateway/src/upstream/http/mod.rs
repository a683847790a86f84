//! HTTP (or HTTPS) upstream to an Open Inference Protocol v2 server: NVIDIA Triton, KServe runtimes,
//! or continuum's own worker ([`continuum_wire::http`]).
//!
//! [`HttpUpstream`] forwards infer bodies unchanged (JSON, or JSON followed by binary tensors
//! when `Inference-Header-Content-Length` is given), probes readiness, fetches model metadata
//! and scrapes the server's Prometheus endpoint for per-model load ([`ScrapedLoad`]).
//!
//! Every call is bounded by the timeout given to [`HttpUpstream::new`]; failures come back as
//! [`UpstreamError`]:
//!
//! | upstream answer | error |
//! |---|---|
//! | 429 | [`UpstreamError::Rejected`] |
//! | 400, and any other 4xx but 404 (e.g. 413) | [`UpstreamError::BadRequest`] |
//! | 404 | [`UpstreamError::NotFound`] (the variant) |
//! | 503 | [`UpstreamError::Unavailable`] |
//! | other 5xx, other non-200 | [`UpstreamError::Internal`] |
//! | refused or broken connection | [`UpstreamError::Unavailable`] |
//! | nothing within the timeout | [`UpstreamError::Timeout`] |
//!
//! The messages are the `error` field of a JSON error body (the OIP v2 error shape, also
//! Triton's), else the body text, cut to [`MAX_MESSAGE_BYTES`].
//!
//! Load metrics are Triton's `nv_inference_*` family
//! (<https://github.com/triton-inference-server/server/blob/main/docs/user_guide/metrics.md>):
//! counters `nv_inference_request_success`, `nv_inference_request_failure` (requests),
//! `nv_inference_count` (items inferred) and the gauge `nv_inference_pending_request_count`,
//! labelled `model` and `version` (values are summed over every label but `model`).
//! continuum workers expose the same names (counters with the OpenMetrics `_total` suffix, see
//! `continuum_worker::metrics`) plus the gauges `continuum_incoming_qps`,
//! `continuum_throughput_qps`, `continuum_open_streams` and the counter `continuum_rejected`.

use super::UpstreamError;
use anyhow::{Context, anyhow, bail};
use bytes::Bytes;
use continuum_wire::oip::HEADER_LEN;
use http_body_util::{BodyExt, Full, Limited};
use hyper::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use hyper::{Method, Request, StatusCode, Uri};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Longest upstream error message relayed, bytes (assumption: enough for any OIP error sentence
/// while keeping a misbehaving server from flooding logs and client answers).
pub(crate) const MAX_MESSAGE_BYTES: usize = 512;

/// Largest answer body read from an upstream, bytes (assumption: 256 MiB is far above any
/// answer of the served models, whose outputs are a few floats per item, yet bounds the memory
/// one broken upstream can take).
pub(crate) const MAX_ANSWER_BYTES: usize = 256 << 20;

/// One OIP v2 HTTP server the gateway forwards to.
///
/// Connections are pooled (HTTP/1.1 keep-alive, `TCP_NODELAY`), so one value serves any number
/// of concurrent calls; share it behind an `Arc`.
pub struct HttpUpstream {
    client: Client<continuum_wire::tcp_tls::HttpsOrHttp, Full<Bytes>>,
    /// `http(s)://host:port[/prefix]`, without a trailing slash.
    base: String,
    metrics: Uri,
    timeout: Duration,
    /// Counter values of the previous scrape, and when it was taken.
    previous: Mutex<Option<Baseline>>,
}

impl fmt::Debug for HttpUpstream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpUpstream")
            .field("base", &self.base)
            .field("metrics", &self.metrics)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// An answer: the body and headers to relay.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpAnswer {
    /// The answer body, unchanged.
    pub body: Bytes,
    /// Length of the JSON part when the answer carries binary tensors (from the
    /// `Inference-Header-Content-Length` header).
    pub header_len: Option<usize>,
    /// The upstream's `Content-Type`, if any.
    pub content_type: Option<String>,
}

/// One model's load as measured from the metrics endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct ScrapedLoad {
    /// Model (variant) name, the `model` label.
    pub model: String,
    /// Offered load per second: `continuum_incoming_qps` (items, the worker's sliding window)
    /// when exposed, else the rate of requests (`nv_inference_request_success` +
    /// `nv_inference_request_failure` + `continuum_rejected`) since the previous scrape.
    pub incoming_qps: f64,
    /// Answered items per second: `continuum_throughput_qps` when exposed, else the rate of
    /// `nv_inference_count` since the previous scrape.
    pub throughput_qps: f64,
    /// Requests waiting (`nv_inference_pending_request_count`), 0 when not exposed.
    pub pending: f64,
    /// Client streams seen lately (`continuum_open_streams`), when exposed.
    pub open_streams: Option<u32>,
}

/// Counter values of one scrape, by series.
#[derive(Debug, Clone)]
struct Baseline {
    at: Instant,
    counters: HashMap<SeriesKey, f64>,
}

/// A counter series: its kind, model, and the other labels (e.g. `version`) rendered.
type SeriesKey = (Kind, String, String);

/// The metrics this module reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Success,
    Failure,
    Rejected,
    Items,
    Pending,
    IncomingGauge,
    ThroughputGauge,
    OpenStreams,
}

impl Kind {
    /// The kind of a metric name, with or without the `_total` suffix.
    fn of(name: &str) -> Option<Self> {
        let base = name.strip_suffix("_total").unwrap_or(name);
        Some(match base {
            "nv_inference_request_success" => Self::Success,
            "nv_inference_request_failure" => Self::Failure,
            "continuum_rejected" => Self::Rejected,
            "nv_inference_count" => Self::Items,
            "nv_inference_pending_request_count" => Self::Pending,
            "continuum_incoming_qps" => Self::IncomingGauge,
            "continuum_throughput_qps" => Self::ThroughputGauge,
            "continuum_open_streams" => Self::OpenStreams,
            _ => return None,
        })
    }

    fn is_counter(self) -> bool {
        matches!(
            self,
            Self::Success | Self::Failure | Self::Rejected | Self::Items
        )
    }
}

/// Checks that `s` is `http://host:port[...]` (or `https://…` when `tls`).
fn parse_http_uri(s: &str, what: &str, tls: bool) -> anyhow::Result<Uri> {
    let s = s.trim();
    let uri: Uri = s
        .parse()
        .with_context(|| format!("{what} `{s}` is not a valid URI"))?;
    match uri.scheme_str() {
        Some("http") => {}
        Some("https") if tls => {}
        Some("https") => bail!("{what} `{s}`: https needs the worker's tls settings (its CA)"),
        Some(other) => bail!("{what} `{s}`: scheme `{other}` is not supported, only http"),
        None => bail!("{what} `{s}` has no scheme: write it as http://host:port"),
    }
    let host = uri
        .host()
        .filter(|h| !h.is_empty())
        .ok_or_else(|| anyhow!("{what} `{s}` has no host: write it as http://host:port"))?;
    match uri.port_u16() {
        None => bail!("{what} `{s}` has no port: write it as http://{host}:PORT"),
        Some(0) => bail!("{what} `{s}`: port 0 cannot be connected to"),
        Some(_) => {}
    }
    if uri.query().is_some() {
        bail!("{what} `{s}` must not have a query string");
    }
    Ok(uri)
}

/// Percent-encodes `s` for use as one path segment (RFC 3986 unreserved characters pass).
fn path_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Renders a client error with its causes (hyper's own message is only "client error (Connect)").
fn describe(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(c) = src {
        s.push_str(": ");
        s.push_str(&c.to_string());
        src = c.source();
    }
    s
}

/// Cuts `s` to at most `max` bytes on a character boundary, marking the cut.
fn truncate(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push('…');
    }
    s
}

/// The message of an error answer: the `error` field of a JSON body, else the body text, else
/// the status reason.
fn error_message(status: StatusCode, body: &[u8]) -> String {
    let from_json = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_string));
    let msg = match from_json {
        Some(m) => m,
        None => String::from_utf8_lossy(body).trim().to_string(),
    };
    let msg = if msg.is_empty() {
        format!(
            "status {}",
            status.canonical_reason().unwrap_or(status.as_str())
        )
    } else {
        msg
    };
    truncate(msg, MAX_MESSAGE_BYTES)
}

/// The error of a non-200 answer; `not_found` makes the error of a 404.
fn status_error(
    status: StatusCode,
    body: &[u8],
    not_found: impl FnOnce() -> UpstreamError,
) -> UpstreamError {
    let msg = error_message(status, body);
    match status.as_u16() {
        429 => UpstreamError::Rejected(msg),
        400 => UpstreamError::BadRequest(msg),
        404 => not_found(),
        503 => UpstreamError::Unavailable(msg),
        500..=599 => UpstreamError::Internal(msg),
        401..=499 => UpstreamError::BadRequest(format!("{status}: {msg}")),
        _ => UpstreamError::Internal(format!("unexpected status {status}: {msg}")),
    }
}

/// An answer read in full.
struct Raw {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl HttpUpstream {
    /// An upstream at `base`, e.g. `"http://127.0.0.1:8000"` (plain http with an explicit host
    /// and port; a path prefix is kept, for servers behind a reverse proxy). `metrics` is the
    /// Prometheus endpoint, `{base}/metrics` by default (Triton serves it on its own port,
    /// e.g. `http://host:8002/metrics`). `timeout` bounds every call, connection included.
    pub fn new(base: &str, metrics: Option<&str>, timeout: Duration) -> anyhow::Result<Self> {
        Self::with_tls(base, metrics, timeout, None)
    }

    /// [`Self::new`], also over HTTPS (`https://` addresses) with `tls`: the rustls client
    /// configuration that trusts the worker's CA and, for workers that verify clients, presents
    /// a certificate ([`continuum_wire::tcp_tls::ClientTls::client_config`]).
    pub fn with_tls(
        base: &str,
        metrics: Option<&str>,
        timeout: Duration,
        tls: Option<std::sync::Arc<rustls::ClientConfig>>,
    ) -> anyhow::Result<Self> {
        if timeout.is_zero() {
            bail!("the upstream timeout must be above zero");
        }
        let uri = parse_http_uri(base, "upstream address", tls.is_some())?;
        let authority = uri
            .authority()
            .ok_or_else(|| anyhow!("upstream address `{base}` has no host"))?;
        let scheme = uri.scheme_str().unwrap_or("http");
        let base = format!("{scheme}://{authority}{}", uri.path().trim_end_matches('/'));
        let metrics = match metrics {
            Some(m) => parse_http_uri(m, "metrics address", tls.is_some())?,
            None => format!("{base}/metrics")
                .parse()
                .context("cannot form the metrics address")?,
        };
        // Plain http:// passes through; https:// needs `tls` (parse_http_uri has refused
        // https without it); HTTP/1.1.
        let connector = continuum_wire::tcp_tls::https_or_http(tls, false, Some(timeout))?;
        let client = Client::builder(TokioExecutor::new()).build(connector);
        Ok(Self {
            client,
            base,
            metrics,
            timeout,
            previous: Mutex::new(None),
        })
    }

    /// The base address, e.g. `http://127.0.0.1:8000`.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The bound on every call.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    fn uri(&self, path: &str) -> Result<Uri, UpstreamError> {
        format!("{}{path}", self.base)
            .parse()
            .map_err(|e| UpstreamError::BadRequest(format!("invalid upstream path {path}: {e}")))
    }

    /// Sends `req` and reads the whole answer, within the timeout.
    async fn send(&self, req: Request<Full<Bytes>>) -> Result<Raw, UpstreamError> {
        let exchange = async {
            let resp = self
                .client
                .request(req)
                .await
                .map_err(|e| UpstreamError::Unavailable(describe(&e)))?;
            let (parts, body) = resp.into_parts();
            let body = Limited::new(body, MAX_ANSWER_BYTES)
                .collect()
                .await
                .map_err(|e| {
                    if e.is::<http_body_util::LengthLimitError>() {
                        UpstreamError::Internal(format!(
                            "answer body over {MAX_ANSWER_BYTES} bytes"
                        ))
                    } else {
                        UpstreamError::Unavailable(format!("answer broken off: {}", describe(&*e)))
                    }
                })?
                .to_bytes();
            Ok(Raw {
                status: parts.status,
                headers: parts.headers,
                body,
            })
        };
        tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| UpstreamError::Timeout(self.timeout))?
    }

    async fn get(&self, uri: Uri) -> Result<Raw, UpstreamError> {
        let req = Request::builder()
            .method(Method::GET)
            .uri(uri)
            .body(Full::default())
            .map_err(|e| UpstreamError::Internal(format!("cannot build the request: {e}")))?;
        self.send(req).await
    }

    /// Forwards an OIP v2 infer body unchanged to `POST {base}/v2/models/{variant}/infer`.
    /// `header_len` is the length of the JSON part of a body with binary tensors: it is sent as
    /// `Inference-Header-Content-Length` with `Content-Type: application/octet-stream`; without
    /// it the body is sent as `application/json`.
    pub async fn infer(
        &self,
        variant: &str,
        body: Bytes,
        header_len: Option<usize>,
    ) -> Result<HttpAnswer, UpstreamError> {
        let uri = self.uri(&format!("/v2/models/{}/infer", path_segment(variant)))?;
        let mut req = Request::builder().method(Method::POST).uri(uri);
        req = match header_len {
            Some(n) => req
                .header(CONTENT_TYPE, "application/octet-stream")
                .header(HEADER_LEN, n),
            None => req.header(CONTENT_TYPE, "application/json"),
        };
        let req = req
            .body(Full::new(body))
            .map_err(|e| UpstreamError::Internal(format!("cannot build the request: {e}")))?;
        let raw = self.send(req).await?;
        if raw.status != StatusCode::OK {
            return Err(status_error(raw.status, &raw.body, || {
                UpstreamError::NotFound(variant.to_string())
            }));
        }
        let header_len = match raw.headers.get(HEADER_LEN) {
            None => None,
            Some(h) => {
                let n = h
                    .to_str()
                    .ok()
                    .and_then(|s| s.trim().parse::<usize>().ok())
                    .ok_or_else(|| {
                        UpstreamError::Internal(
                            "the answer's Inference-Header-Content-Length is not a byte count"
                                .into(),
                        )
                    })?;
                if n > raw.body.len() {
                    return Err(UpstreamError::Internal(format!(
                        "the answer's Inference-Header-Content-Length is {n} but its body has {} bytes",
                        raw.body.len()
                    )));
                }
                Some(n)
            }
        };
        let content_type = raw
            .headers
            .get(CONTENT_TYPE)
            .and_then(|h: &HeaderValue| h.to_str().ok())
            .map(str::to_string);
        Ok(HttpAnswer {
            body: raw.body,
            header_len,
            content_type,
        })
    }

    /// Whether `GET {base}/v2/health/ready` answers 200 within the timeout (false on any other
    /// status, a connection failure or a timeout).
    pub async fn ready(&self) -> bool {
        match self.uri("/v2/health/ready") {
            Ok(uri) => matches!(self.get(uri).await, Ok(r) if r.status == StatusCode::OK),
            Err(_) => false,
        }
    }

    /// The metadata of a model (`GET {base}/v2/models/{variant}`), as JSON; errors as for
    /// [`Self::infer`].
    pub async fn metadata(&self, variant: &str) -> Result<serde_json::Value, UpstreamError> {
        let uri = self.uri(&format!("/v2/models/{}", path_segment(variant)))?;
        let raw = self.get(uri).await?;
        if raw.status != StatusCode::OK {
            return Err(status_error(raw.status, &raw.body, || {
                UpstreamError::NotFound(variant.to_string())
            }));
        }
        serde_json::from_slice(&raw.body)
            .map_err(|e| UpstreamError::Internal(format!("model metadata is not JSON: {e}")))
    }

    /// Scrapes the metrics endpoint and returns the load of every model it lists, sorted by
    /// name.
    ///
    /// Gauges (`nv_inference_pending_request_count`, and continuum's `continuum_incoming_qps`,
    /// `continuum_throughput_qps`, `continuum_open_streams`) are taken as they are. Rates that
    /// must come from counters (servers without the continuum gauges, e.g. Triton) are the
    /// increase since the previous call divided by the time between the two; the first call
    /// only records the baseline and reports those rates as 0, so call it once when the
    /// upstream is registered. A counter that went down (server restart) counts from 0, and a
    /// series first seen after the baseline counts in full: rates are never negative. Meant to
    /// be called periodically from one task; concurrent calls are safe but share one baseline.
    pub async fn scrape(&self) -> Result<Vec<ScrapedLoad>, UpstreamError> {
        let raw = self.get(self.metrics.clone()).await?;
        if raw.status != StatusCode::OK {
            let uri = self.metrics.to_string();
            return Err(status_error(raw.status, &raw.body, || {
                UpstreamError::Internal(format!("no metrics at {uri} (404)"))
            }));
        }
        let now = Instant::now();
        let samples = parse_prometheus(&String::from_utf8_lossy(&raw.body));
        let mut previous = self.previous.lock().unwrap_or_else(|e| e.into_inner());
        let prev = previous.as_ref().map(|b| {
            (
                &b.counters,
                now.saturating_duration_since(b.at).as_secs_f64(),
            )
        });
        let (loads, counters) = compute_loads(&samples, prev);
        *previous = Some(Baseline { at: now, counters });
        Ok(loads)
    }
}

/// Per-model sums of one scrape.
#[derive(Debug, Default)]
struct Acc {
    request_rate: f64,
    item_rate: f64,
    pending: f64,
    incoming: Option<f64>,
    throughput: Option<f64>,
    streams: Option<f64>,
}

/// The loads of one scrape, given the counters of the previous one and the seconds since it
/// (`None` for the first scrape); also returns this scrape's counters.
fn compute_loads(
    samples: &[PromSample],
    prev: Option<(&HashMap<SeriesKey, f64>, f64)>,
) -> (Vec<ScrapedLoad>, HashMap<SeriesKey, f64>) {
    let mut models: BTreeMap<String, Acc> = BTreeMap::new();
    let mut counters = HashMap::new();
    for s in samples {
        let Some(kind) = Kind::of(&s.name) else {
            continue;
        };
        let Some(model) = s.label("model") else {
            continue;
        };
        let acc = models.entry(model.to_string()).or_default();
        if !s.value.is_finite() {
            continue;
        }
        if kind.is_counter() {
            let rest: Vec<String> = s
                .labels
                .iter()
                .filter(|(k, _)| k != "model")
                .map(|(k, v)| format!("{k}={v:?}"))
                .collect();
            let key = (kind, model.to_string(), rest.join(","));
            let rate = match prev {
                Some((before, dt)) if dt > 0.0 => {
                    let increase = match before.get(&key) {
                        Some(&p) if s.value >= p => s.value - p,
                        // Restarted (or first seen since the baseline): counts from 0.
                        _ => s.value.max(0.0),
                    };
                    increase / dt
                }
                _ => 0.0,
            };
            *counters.entry(key).or_insert(0.0) += s.value;
            match kind {
                Kind::Items => acc.item_rate += rate,
                _ => acc.request_rate += rate,
            }
        } else {
            let add = |slot: &mut Option<f64>| *slot = Some(slot.unwrap_or(0.0) + s.value);
            match kind {
                Kind::Pending => acc.pending += s.value,
                Kind::IncomingGauge => add(&mut acc.incoming),
                Kind::ThroughputGauge => add(&mut acc.throughput),
                Kind::OpenStreams => add(&mut acc.streams),
                _ => {}
            }
        }
    }
    let loads = models
        .into_iter()
        .map(|(model, a)| ScrapedLoad {
            model,
            incoming_qps: a.incoming.unwrap_or(a.request_rate).max(0.0),
            throughput_qps: a.throughput.unwrap_or(a.item_rate).max(0.0),
            pending: a.pending.max(0.0),
            open_streams: a
                .streams
                .map(|n| n.max(0.0).min(u32::MAX as f64).round() as u32),
        })
        .collect();
    (loads, counters)
}

use continuum_wire::{PromSample, parse_prometheus};

#[cfg(test)]
mod tests;
