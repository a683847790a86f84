//! The HTTP serve loop the worker and the gateway share, hardened against hostile clients:
//! header and body read timeouts (a connection silent from its start is closed at the header
//! timeout), a global and a per-IP connection cap, back-off (with a rate-limited log line) when
//! `accept` fails, descriptors held in reserve and idle connections shed when the process runs
//! out of file descriptors (modules `accept` and `conns`, shared with gRPC), header size and count
//! limits answered with a JSON 431, and request bodies read within a byte limit that applies
//! after `gzip`/`deflate` decompression (other encodings get 415); a body not received within
//! its timeout is answered 408 with `Connection: close` and its connection is closed.

mod accept;
mod conns;

pub use crate::rate_log::RateLimitedLog;
pub(crate) use accept::Acceptor;
pub(crate) use conns::{ConnSlot, Guarded};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{CONNECTION, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE, HeaderValue};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use serde::Deserialize;
use serde_json::Value;
use std::convert::Infallible;
use std::io::Read;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// A complete response.
pub type Resp = Response<Full<Bytes>>;

/// A JSON response.
pub fn json_resp(status: StatusCode, v: &Value) -> Resp {
    let mut r = Response::new(Full::new(Bytes::from(
        serde_json::to_vec(v).expect("JSON values serialise"),
    )));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

/// Connection and request limits of an HTTP endpoint (the `http` section of the worker's and
/// the gateway's settings).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ServeLimits {
    /// Largest request body after decompression; larger ones get 413. Default 8 MiB
    /// (assumption: 40× a batch of 8 images of 3×64×64 FP32, room for JSON tensors).
    #[serde(default = "default_max_body")]
    pub max_body_bytes: usize,
    /// Longest time a client may take to send a request's headers, ms; also the longest a new
    /// connection (HTTP or gRPC) may stay silent before its first byte, and an HTTP/1.1
    /// connection kept alive between requests. assumption: 10 s, far above any honest client
    /// on the networks of the topologies here.
    #[serde(default = "default_header_timeout")]
    pub header_read_timeout_ms: u64,
    /// Longest time a client may take to send a request's body, ms. assumption: 30 s, an
    /// 8 MiB body at ~2 Mbit/s.
    #[serde(default = "default_body_timeout")]
    pub body_read_timeout_ms: u64,
    /// Most open connections in all; more are closed at once. assumption: 4096, below the
    /// common 1024–65536 descriptor limits less a reserve (raise both together).
    #[serde(default = "default_max_conns")]
    pub max_connections: usize,
    /// Most open connections from one IP address. assumption: 1024 (load generators and
    /// gateways hold many from one address).
    #[serde(default = "default_max_conns_ip")]
    pub max_connections_per_ip: usize,
    /// Largest total size of a request's header fields; larger gets 431. assumption: 16 KiB.
    #[serde(default = "default_max_header_bytes")]
    pub max_header_bytes: usize,
    /// Most header fields in one request; more gets 431. assumption: 64.
    #[serde(default = "default_max_headers")]
    pub max_headers: usize,
    /// Keys of the section that name no setting (refused by [`ServeLimits::validate`]; serde
    /// cannot deny unknown fields of a flattened struct).
    #[serde(flatten)]
    pub unknown: std::collections::BTreeMap<String, serde::de::IgnoredAny>,
}

fn default_max_body() -> usize {
    8 << 20
}
fn default_header_timeout() -> u64 {
    10_000
}
fn default_body_timeout() -> u64 {
    30_000
}
fn default_max_conns() -> usize {
    4096
}
fn default_max_conns_ip() -> usize {
    1024
}
fn default_max_header_bytes() -> usize {
    16 << 10
}
fn default_max_headers() -> usize {
    64
}

impl Default for ServeLimits {
    fn default() -> Self {
        Self {
            max_body_bytes: default_max_body(),
            header_read_timeout_ms: default_header_timeout(),
            body_read_timeout_ms: default_body_timeout(),
            max_connections: default_max_conns(),
            max_connections_per_ip: default_max_conns_ip(),
            max_header_bytes: default_max_header_bytes(),
            max_headers: default_max_headers(),
            unknown: Default::default(),
        }
    }
}

impl ServeLimits {
    /// Checks that every limit is positive; the error names the field (under `http.`).
    pub fn validate(&self) -> Result<(), String> {
        if let Some(k) = self.unknown.keys().next() {
            return Err(format!(
                "http.{k}: unknown setting; expected listen, tls, allow_plaintext, max_body_bytes, \
                 header_read_timeout_ms, body_read_timeout_ms, max_connections, \
                 max_connections_per_ip, max_header_bytes or max_headers"
            ));
        }
        let fields = [
            ("max_body_bytes", self.max_body_bytes as u64),
            ("header_read_timeout_ms", self.header_read_timeout_ms),
            ("body_read_timeout_ms", self.body_read_timeout_ms),
            ("max_connections", self.max_connections as u64),
            ("max_connections_per_ip", self.max_connections_per_ip as u64),
            ("max_header_bytes", self.max_header_bytes as u64),
            ("max_headers", self.max_headers as u64),
        ];
        match fields.iter().find(|(_, v)| *v == 0) {
            Some((k, _)) => Err(format!("http.{k}: expected >= 1")),
            None => Ok(()),
        }
    }
}

/// Back-off after a failed `accept`: doubles from 5 ms to 1 s, reset by a success. Failing
/// accepts are usually descriptor exhaustion (`EMFILE`), which only closing connections cures;
/// retrying at once spins a core and floods the log.
#[derive(Debug, Default)]
pub struct AcceptBackoff {
    next: Option<Duration>,
}

impl AcceptBackoff {
    /// The wait after one more failure.
    pub fn fail(&mut self) -> Duration {
        let d = self.next.map_or(Duration::from_millis(5), |d| {
            (d * 2).min(Duration::from_secs(1))
        });
        self.next = Some(d);
        d
    }

    /// An accept succeeded.
    pub fn reset(&mut self) {
        self.next = None;
    }
}

/// Serves `handler` on every connection accepted from `listener` (HTTP/1.1, and HTTP/2 over
/// cleartext) within `limits` until `stop` turns true; open connections then finish their
/// current request and close. Plaintext: [`serve_tls_with`] without TLS.
pub async fn serve_with<H, F>(
    listener: TcpListener,
    limits: ServeLimits,
    stop: watch::Receiver<bool>,
    handler: H,
) where
    H: Fn(Request<Incoming>) -> F + Clone + Send + Sync + 'static,
    F: std::future::Future<Output = Result<Resp, Infallible>> + Send + 'static,
{
    serve_tls_with(listener, limits, None, stop, handler).await
}

/// [`serve_with`], over TLS when `tls` is given (HTTP/1.1 or HTTP/2, chosen by ALPN): each
/// connection's handshake runs in its own task, under its connection slot and within the
/// handshake timeout ([`crate::tcp_tls::secure`], shared with the gRPC listener). The worker's
/// and the gateway's front ends both run on it.
pub async fn serve_tls_with<H, F>(
    listener: TcpListener,
    limits: ServeLimits,
    tls: Option<crate::tcp_tls::TlsAcceptor>,
    mut stop: watch::Receiver<bool>,
    handler: H,
) where
    H: Fn(Request<Incoming>) -> F + Clone + Send + Sync + 'static,
    F: std::future::Future<Output = Result<Resp, Infallible>> + Send + 'static,
{
    let mut acceptor = accept::Acceptor::new(listener, &limits, "HTTP");
    let limits = Arc::new(limits);
    loop {
        let Some(accept::Admitted {
            io: tcp,
            slot,
            peer,
            ..
        }) = acceptor
            .next(async {
                let _ = stop.changed().await;
            })
            .await
        else {
            break;
        };
        let conn_state = slot.state();
        let handler = handler.clone();
        let limits = limits.clone();
        let mut stop = stop.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            let _slot = slot;
            let Some(tcp) = crate::tcp_tls::secure(tls.as_ref(), tcp, peer).await else {
                return;
            };
            let l = limits.clone();
            let svc = hyper::service::service_fn(move |req: Request<Incoming>| {
                let handler = handler.clone();
                let l = l.clone();
                let busy = conn_state.busy();
                async move {
                    let r = match check_headers(&req, &l) {
                        Some(r) => Ok(r),
                        None => handler(req).await.map(close_on_timeout),
                    };
                    drop(busy);
                    r
                }
            });
            let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            builder
                .http1()
                .timer(TokioTimer::new())
                .header_read_timeout(Duration::from_millis(limits.header_read_timeout_ms))
                // hyper's own limits sit above ours so that ours answer with a JSON body.
                .max_headers(limits.max_headers.saturating_mul(2).max(100))
                .max_buf_size((limits.max_header_bytes.saturating_mul(4)).max(8192));
            builder
                .http2()
                .timer(TokioTimer::new())
                .max_header_list_size(limits.max_header_bytes.saturating_mul(2) as u32);
            let conn = builder.serve_connection(TokioIo::new(tcp), svc);
            tokio::pin!(conn);
            tokio::select! {
                r = conn.as_mut() => { let _ = r; }
                _ = stop.changed() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
        });
    }
}

/// A 408 (the body was not received in time) closes its connection: hyper then neither keeps it
/// alive nor waits for the rest of the body.
fn close_on_timeout(mut r: Resp) -> Resp {
    if r.status() == StatusCode::REQUEST_TIMEOUT {
        r.headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
    }
    r
}

/// 431 with a JSON body when the request's header fields exceed the limits.
fn check_headers(req: &Request<Incoming>, l: &ServeLimits) -> Option<Resp> {
    let h = req.headers();
    let bytes: usize = h.iter().map(|(k, v)| k.as_str().len() + v.len() + 4).sum();
    let msg = if h.len() > l.max_headers {
        format!(
            "{} header fields, over the limit of {}",
            h.len(),
            l.max_headers
        )
    } else if bytes > l.max_header_bytes {
        format!(
            "{bytes} bytes of header fields, over the limit of {}",
            l.max_header_bytes
        )
    } else {
        return None;
    };
    Some(json_resp(
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        &serde_json::json!({ "error": msg }),
    ))
}

/// Why a request body could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BodyError {
    /// Over the limit (after decompression).
    #[error("request body over the limit of {0} bytes")]
    TooLarge(usize),
    /// A `Content-Encoding` other than gzip, deflate or identity.
    #[error("unsupported Content-Encoding `{0}`: gzip, deflate and identity are accepted")]
    Unsupported(String),
    /// Not sent within the body read timeout.
    #[error("the request body was not received within {0} ms")]
    Timeout(u64),
    /// Broken: a transport error, a corrupt compressed stream or a bad header.
    #[error("{0}")]
    Bad(String),
}

impl BodyError {
    /// The HTTP status of this error.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::Unsupported(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::Timeout(_) => StatusCode::REQUEST_TIMEOUT,
            Self::Bad(_) => StatusCode::BAD_REQUEST,
        }
    }
}

/// Reads a request's body within `limits` (declared length, read timeout, size after
/// decompression); also returns the binary-tensor extension's JSON length
/// (`Inference-Header-Content-Length`), when present.
pub async fn read_body(
    req: Request<Incoming>,
    limits: &ServeLimits,
) -> Result<(Bytes, Option<usize>), BodyError> {
    let limit = limits.max_body_bytes;
    let h = req.headers();
    let encoding = match h.get(CONTENT_ENCODING).map(|v| v.to_str()) {
        None => Encoding::Identity,
        Some(Ok(v)) => Encoding::parse(v)?,
        Some(Err(_)) => return Err(BodyError::Unsupported("<not text>".into())),
    };
    let declared = h
        .get(CONTENT_LENGTH)
        .and_then(|h| h.to_str().ok())
        .and_then(|s| s.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(BodyError::TooLarge(limit));
    }
    let header_len = match h.get(crate::oip::HEADER_LEN) {
        None => None,
        Some(v) => Some(
            v.to_str()
                .ok()
                .and_then(|s| s.trim().parse::<usize>().ok())
                .ok_or_else(|| {
                    BodyError::Bad("Inference-Header-Content-Length must be a byte count".into())
                })?,
        ),
    };
    let timeout = Duration::from_millis(limits.body_read_timeout_ms);
    let collected = tokio::time::timeout(timeout, Limited::new(req.into_body(), limit).collect())
        .await
        .map_err(|_| BodyError::Timeout(limits.body_read_timeout_ms))?;
    let raw = match collected {
        Ok(b) => b.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            return Err(BodyError::TooLarge(limit));
        }
        Err(e) => return Err(BodyError::Bad(format!("cannot read the request body: {e}"))),
    };
    Ok((decode(encoding, raw, limit)?, header_len))
}

/// A request body's content coding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Identity,
    Gzip,
    Deflate,
}

impl Encoding {
    fn parse(v: &str) -> Result<Self, BodyError> {
        match v.trim().to_ascii_lowercase().as_str() {
            "" | "identity" => Ok(Self::Identity),
            "gzip" | "x-gzip" => Ok(Self::Gzip),
            "deflate" => Ok(Self::Deflate),
            other => Err(BodyError::Unsupported(other.chars().take(64).collect())),
        }
    }
}

/// Decompresses `raw`, refusing output over `limit` bytes (a small body can inflate to
/// gigabytes: the limit is applied while inflating, not after).
fn decode(enc: Encoding, raw: Bytes, limit: usize) -> Result<Bytes, BodyError> {
    fn inflate(r: impl Read, limit: usize, what: &str) -> Result<Bytes, BodyError> {
        let mut out = Vec::new();
        r.take(limit as u64 + 1)
            .read_to_end(&mut out)
            .map_err(|e| BodyError::Bad(format!("corrupt {what} request body: {e}")))?;
        if out.len() > limit {
            return Err(BodyError::TooLarge(limit));
        }
        Ok(Bytes::from(out))
    }
    match enc {
        Encoding::Identity => Ok(raw),
        Encoding::Gzip => inflate(flate2::read::GzDecoder::new(&raw[..]), limit, "gzip"),
        // HTTP's `deflate` is the zlib format (RFC 9110 §8.4.1.2); some clients send raw
        // deflate, recognised by the missing zlib header.
        Encoding::Deflate if looks_like_zlib(&raw) => {
            inflate(flate2::read::ZlibDecoder::new(&raw[..]), limit, "deflate")
        }
        Encoding::Deflate => inflate(
            flate2::read::DeflateDecoder::new(&raw[..]),
            limit,
            "deflate",
        ),
    }
}

fn looks_like_zlib(b: &[u8]) -> bool {
    b.len() >= 2 && b[0] & 0x0f == 8 && (u16::from(b[0]) << 8 | u16::from(b[1])) % 31 == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gz(b: &[u8]) -> Bytes {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(b).unwrap();
        Bytes::from(e.finish().unwrap())
    }

    #[test]
    fn gzip_and_both_deflate_forms_decode() {
        let body = b"{\"inputs\": []}".repeat(10);
        assert_eq!(
            decode(Encoding::Gzip, gz(&body), 1 << 20).unwrap(),
            &body[..]
        );
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(&body).unwrap();
        let z = Bytes::from(z.finish().unwrap());
        assert_eq!(decode(Encoding::Deflate, z, 1 << 20).unwrap(), &body[..]);
        let mut d = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        d.write_all(&body).unwrap();
        let d = Bytes::from(d.finish().unwrap());
        assert_eq!(decode(Encoding::Deflate, d, 1 << 20).unwrap(), &body[..]);
    }

    #[test]
    fn the_limit_applies_to_the_decompressed_size() {
        let bomb = gz(&vec![b' '; 1 << 20]);
        assert!(bomb.len() < 16 << 10, "{} bytes", bomb.len());
        assert_eq!(
            decode(Encoding::Gzip, bomb, 64 << 10),
            Err(BodyError::TooLarge(64 << 10))
        );
        assert!(matches!(
            decode(Encoding::Gzip, Bytes::from_static(b"not gzip"), 1024),
            Err(BodyError::Bad(_))
        ));
        assert!(matches!(
            Encoding::parse("br"),
            Err(BodyError::Unsupported(e)) if e == "br"
        ));
    }

    #[test]
    fn accept_backoff_doubles_to_a_cap_and_resets() {
        let mut b = AcceptBackoff::default();
        let waits: Vec<u128> = (0..10).map(|_| b.fail().as_millis()).collect();
        assert_eq!(waits, [5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000]);
        b.reset();
        assert_eq!(b.fail().as_millis(), 5);
    }
}
