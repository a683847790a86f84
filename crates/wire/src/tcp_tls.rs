//! TLS on the TCP listeners (HTTP and gRPC) and on the gateway's HTTPS upstreams: settings
//! ([`ServerTls`], [`ClientTls`]), the loopback-only plaintext rule ([`check_plaintext`]), a
//! server configuration that can be swapped while connections stay open ([`TlsAcceptor`]), and
//! the one handshake path both listeners take ([`secure`]), bounded by a timeout so that a
//! silent client cannot hold a connection slot.

use crate::rate_log::RateLimitedLog;
use anyhow::{Context, Result, bail};
use arc_swap::ArcSwap;
use hyper_util::client::legacy::connect::HttpConnector;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use serde::Deserialize;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// ALPN ids offered by the HTTP listener (HTTP/2, then HTTP/1.1).
pub const ALPN_HTTP: &[&[u8]] = &[b"h2", b"http/1.1"];
/// ALPN id offered by the gRPC listener (HTTP/2 only).
pub const ALPN_GRPC: &[&[u8]] = &[b"h2"];

/// TLS of one TCP listener: the `tls` key of the `http` and `grpc` sections.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerTls {
    /// PEM certificate chain, leaf first.
    pub cert: PathBuf,
    /// PEM private key of the leaf (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
    /// PEM certificates of the authorities whose client certificates are accepted; when set,
    /// a client without a certificate signed by one of them is refused.
    #[serde(default)]
    pub client_ca: Option<PathBuf>,
    /// Longest time a client may take to complete the TLS handshake, ms. assumption: 10 s,
    /// as `http.header_read_timeout_ms`.
    #[serde(default = "default_handshake_ms")]
    pub handshake_timeout_ms: u64,
}

fn default_handshake_ms() -> u64 {
    10_000
}

/// TLS towards one upstream (the gateway's `workers[].tls`): the authority to trust and,
/// for workers that verify clients, the certificate to present.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientTls {
    /// PEM certificates of the authorities that sign the upstream's certificate.
    pub ca: PathBuf,
    /// PEM client certificate chain presented to the upstream; with `key`.
    #[serde(default)]
    pub cert: Option<PathBuf>,
    /// PEM private key of `cert`.
    #[serde(default)]
    pub key: Option<PathBuf>,
}

/// Checks a TCP listener's transport settings; the error names the field under `section`
/// (e.g. `http`). Without TLS, only a loopback address is accepted unless `allow_plaintext`.
pub fn check_plaintext(
    section: &str,
    listen: SocketAddr,
    tls: Option<&ServerTls>,
    allow_plaintext: bool,
) -> Result<(), String> {
    match tls {
        Some(t) if t.handshake_timeout_ms == 0 => {
            Err(format!("{section}.tls.handshake_timeout_ms: expected >= 1"))
        }
        Some(_) => Ok(()),
        None if listen.ip().is_loopback() || allow_plaintext => Ok(()),
        None => Err(format!(
            "{section}.listen: {listen} is not a loopback address and {section}.tls is not set; \
             give {section}.tls (cert and key) or set {section}.allow_plaintext: true to serve \
             plaintext there"
        )),
    }
}

/// The crypto provider of every TLS configuration here (ring).
fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Reads a non-empty PEM certificate list.
pub fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .with_context(|| format!("cannot read certificates from {}", path.display()))?;
    if certs.is_empty() {
        bail!("{}: no certificate found", path.display());
    }
    Ok(certs)
}

fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>> {
    PrivateKeyDer::from_pem_file(path)
        .with_context(|| format!("cannot read a private key from {}", path.display()))
}

fn roots(path: &Path) -> Result<rustls::RootCertStore> {
    let mut roots = rustls::RootCertStore::empty();
    for c in read_certs(path)? {
        roots
            .add(c)
            .with_context(|| format!("{}: unusable CA certificate", path.display()))?;
    }
    Ok(roots)
}

/// The rustls server configuration of `tls`, offering `alpn`.
pub fn server_config(tls: &ServerTls, alpn: &[&[u8]]) -> Result<Arc<rustls::ServerConfig>> {
    let chain = read_certs(&tls.cert)?;
    let key = read_key(&tls.key)?;
    let builder = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .context("no TLS version available")?;
    let builder = match &tls.client_ca {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let verifier =
                WebPkiClientVerifier::builder_with_provider(Arc::new(roots(ca)?), provider())
                    .build()
                    .with_context(|| format!("{}: unusable client CA", ca.display()))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut cfg = builder.with_single_cert(chain, key).with_context(|| {
        format!(
            "{} and {} do not make a usable certificate and key",
            tls.cert.display(),
            tls.key.display()
        )
    })?;
    cfg.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(Arc::new(cfg))
}

/// The connector of an HTTP client whose servers may be `http://` or `https://`.
pub type HttpsOrHttp = hyper_rustls::HttpsConnector<HttpConnector>;

/// The one connector of every HTTP client (the gateway to its workers, the load generator to its
/// gateways): plain `http://` passes through; `https://` takes `tls`, or trusts no server when
/// `tls` is `None`. It offers ALPN `h2` when `http2` and none (HTTP/1.1) otherwise, setting
/// ALPN itself (any in `tls` is dropped); `TCP_NODELAY` on, `connect_timeout` when given.
pub fn https_or_http(
    tls: Option<Arc<rustls::ClientConfig>>,
    http2: bool,
    connect_timeout: Option<Duration>,
) -> Result<HttpsOrHttp> {
    let tls = match tls {
        Some(t) => t,
        None => trust_nothing()?,
    };
    // hyper-rustls refuses a configuration that already has ALPN protocols.
    let mut tls = (*tls).clone();
    tls.alpn_protocols.clear();
    let mut tcp = HttpConnector::new();
    tcp.set_nodelay(true);
    tcp.set_connect_timeout(connect_timeout);
    tcp.enforce_http(false);
    let builder = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http();
    Ok(if http2 {
        builder.enable_http2().wrap_connector(tcp)
    } else {
        builder.enable_http1().wrap_connector(tcp)
    })
}

/// A client configuration that trusts no server (for a connector that serves plain `http://`
/// only, yet needs one).
fn trust_nothing() -> Result<Arc<rustls::ClientConfig>> {
    Ok(Arc::new(
        rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .context("no TLS version available")?
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth(),
    ))
}

impl ClientTls {
    /// Checks what the types cannot (`cert` and `key` come together); the error starts with
    /// `field`.
    pub fn validate(&self, field: &str) -> Result<(), String> {
        match self.cert.is_some() == self.key.is_some() {
            true => Ok(()),
            false => Err(format!("{field}: give both cert and key, or neither")),
        }
    }

    /// The rustls client configuration: trusts `ca`, presents `cert` when given, offers `alpn`.
    pub fn client_config(&self, alpn: &[&[u8]]) -> Result<Arc<rustls::ClientConfig>> {
        let builder = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .context("no TLS version available")?
            .with_root_certificates(roots(&self.ca)?);
        let mut cfg = match (&self.cert, &self.key) {
            (Some(c), Some(k)) => builder
                .with_client_auth_cert(read_certs(c)?, read_key(k)?)
                .with_context(|| {
                    format!(
                        "{} and {} do not make a usable client certificate",
                        c.display(),
                        k.display()
                    )
                })?,
            (None, None) => builder.with_no_client_auth(),
            _ => bail!("tls: give both cert and key, or neither"),
        };
        cfg.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        Ok(Arc::new(cfg))
    }
}

/// A listener's TLS: the server configuration in use (swapped on reload: open connections keep
/// the one they were accepted with, new handshakes use the new one) and the handshake timeout.
/// Cheap to clone; clones share the configuration.
#[derive(Clone)]
pub struct TlsAcceptor {
    inner: Arc<AcceptorInner>,
}

struct AcceptorInner {
    config: ArcSwap<rustls::ServerConfig>,
    settings: Mutex<ServerTls>,
    alpn: Vec<Vec<u8>>,
    timeout_ms: AtomicU64,
    log: RateLimitedLog,
}

impl std::fmt::Debug for TlsAcceptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsAcceptor")
            .field("settings", &self.settings())
            .finish_non_exhaustive()
    }
}

/// A server configuration read and checked, not yet in use ([`StagedTls::commit`] installs it),
/// so that a reload can check everything before changing anything.
#[must_use = "nothing changes until commit"]
pub struct StagedTls {
    target: TlsAcceptor,
    settings: ServerTls,
    config: Arc<rustls::ServerConfig>,
}

impl StagedTls {
    /// Installs the configuration: handshakes from now on use it.
    pub fn commit(self) {
        let inner = &self.target.inner;
        inner.config.store(self.config);
        inner
            .timeout_ms
            .store(self.settings.handshake_timeout_ms, Ordering::Relaxed);
        *inner.settings.lock().unwrap_or_else(|e| e.into_inner()) = self.settings;
    }
}

impl TlsAcceptor {
    /// Reads `tls`'s files; the acceptor offers `alpn` ([`ALPN_HTTP`], [`ALPN_GRPC`]).
    pub fn new(tls: &ServerTls, alpn: &[&[u8]]) -> Result<Self> {
        Ok(Self {
            inner: Arc::new(AcceptorInner {
                config: ArcSwap::new(server_config(tls, alpn)?),
                settings: Mutex::new(tls.clone()),
                alpn: alpn.iter().map(|p| p.to_vec()).collect(),
                timeout_ms: AtomicU64::new(tls.handshake_timeout_ms),
                log: RateLimitedLog::new(Duration::from_secs(1)),
            }),
        })
    }

    /// An acceptor for `tls` when given (`None`: plaintext).
    pub fn optional(tls: Option<&ServerTls>, alpn: &[&[u8]]) -> Result<Option<Self>> {
        tls.map(|t| Self::new(t, alpn)).transpose()
    }

    /// The settings in use.
    pub fn settings(&self) -> ServerTls {
        self.inner
            .settings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Reads and checks `tls`'s files without installing them.
    pub fn stage(&self, tls: &ServerTls) -> Result<StagedTls> {
        let alpn: Vec<&[u8]> = self.inner.alpn.iter().map(Vec::as_slice).collect();
        Ok(StagedTls {
            target: self.clone(),
            settings: tls.clone(),
            config: server_config(tls, &alpn)?,
        })
    }

    /// Re-reads the files in use (e.g. renewed in place); on error the running certificate
    /// stays.
    pub fn reload(&self) -> Result<()> {
        self.stage(&self.settings())?.commit();
        Ok(())
    }

    /// The TLS handshake on `tcp`, within the handshake timeout.
    pub async fn accept<IO>(&self, tcp: IO) -> io::Result<MaybeTls<IO>>
    where
        IO: AsyncRead + AsyncWrite + Unpin,
    {
        let acceptor = tokio_rustls::TlsAcceptor::from(self.inner.config.load_full());
        let timeout = Duration::from_millis(self.inner.timeout_ms.load(Ordering::Relaxed));
        match tokio::time::timeout(timeout, acceptor.accept(tcp)).await {
            Ok(r) => r.map(|s| MaybeTls::Tls(Box::new(s))),
            Err(_) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("no TLS handshake within {} ms", timeout.as_millis()),
            )),
        }
    }
}

/// The one way both listeners secure an accepted connection: plaintext without `tls`, else the
/// handshake (a failure is logged, rate-limited, and the connection dropped: `None`).
pub async fn secure<IO>(
    tls: Option<&TlsAcceptor>,
    tcp: IO,
    peer: SocketAddr,
) -> Option<MaybeTls<IO>>
where
    IO: AsyncRead + AsyncWrite + Unpin,
{
    let Some(a) = tls else {
        return Some(MaybeTls::Plain(tcp));
    };
    match a.accept(tcp).await {
        Ok(s) => Some(s),
        Err(e) => {
            if let Some(suppressed) = a.inner.log.allow() {
                tracing::info!(%peer, error = %e, suppressed, "TLS handshake failed");
            }
            None
        }
    }
}

/// An accepted connection, plaintext or TLS.
#[derive(Debug)]
pub enum MaybeTls<IO = TcpStream> {
    /// Plaintext.
    Plain(IO),
    /// After a completed TLS handshake.
    Tls(Box<tokio_rustls::server::TlsStream<IO>>),
}

impl<IO: AsyncRead + AsyncWrite + Unpin> AsyncRead for MaybeTls<IO> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl<IO: AsyncRead + AsyncWrite + Unpin> AsyncWrite for MaybeTls<IO> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }
    fn is_write_vectored(&self) -> bool {
        match self {
            Self::Plain(s) => s.is_write_vectored(),
            Self::Tls(s) => s.is_write_vectored(),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_flush(cx),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Self::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Self::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

#[cfg(test)]
#[path = "tcp_tls_tests.rs"]
mod tests;
