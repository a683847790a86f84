//! Endpoint settings shared by every server (worker and gateway): the HTTP, gRPC and QUIC
//! listeners and their limits, as they appear in the configuration files.

use crate::serve::ServeLimits;
use crate::tcp_tls::ServerTls;
use serde::Deserialize;
use std::net::SocketAddr;
use std::path::PathBuf;

/// HTTP endpoint settings.
#[derive(Debug, Clone, Deserialize)]
pub struct HttpConfig {
    /// Listen address (port 0: any free port).
    #[serde(default = "default_http_addr")]
    pub listen: SocketAddr,
    /// TLS (certificate, key, optional client CA); plaintext when absent.
    #[serde(default)]
    pub tls: Option<ServerTls>,
    /// Serve plaintext on a non-loopback `listen` (refused unless set).
    #[serde(default)]
    pub allow_plaintext: bool,
    /// Body size, read timeouts, connection caps and header limits (unknown keys are refused
    /// here).
    #[serde(flatten)]
    pub limits: ServeLimits,
}

impl HttpConfig {
    /// Checks the limits and the plaintext rule ([`crate::tcp_tls::check_plaintext`]).
    pub fn validate(&self) -> Result<(), String> {
        self.limits.validate()?;
        crate::tcp_tls::check_plaintext(
            "http",
            self.listen,
            self.tls.as_ref(),
            self.allow_plaintext,
        )
    }
}

/// gRPC endpoint settings (KServe v2 / Triton `GRPCInferenceService`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrpcConfig {
    /// Listen address (port 0: any free port); Triton's default port is 8001.
    pub listen: SocketAddr,
    /// TLS (certificate, key, optional client CA); plaintext when absent.
    #[serde(default)]
    pub tls: Option<ServerTls>,
    /// Serve plaintext on a non-loopback `listen` (refused unless set).
    #[serde(default)]
    pub allow_plaintext: bool,
}

impl GrpcConfig {
    /// Checks the plaintext rule ([`crate::tcp_tls::check_plaintext`]).
    pub fn validate(&self) -> Result<(), String> {
        crate::tcp_tls::check_plaintext(
            "grpc",
            self.listen,
            self.tls.as_ref(),
            self.allow_plaintext,
        )
    }
}

/// QUIC endpoint settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuicConfig {
    /// Listen address (port 0: any free port).
    #[serde(default = "default_quic_addr")]
    pub listen: SocketAddr,
    /// PEM certificate chain; with `key`. Without both, a self-signed certificate for
    /// `localhost`/`127.0.0.1` is generated (development only).
    #[serde(default)]
    pub cert: Option<PathBuf>,
    /// PEM private key of `cert`.
    #[serde(default)]
    pub key: Option<PathBuf>,
    /// Where to write the generated development certificate (DER) so that clients can trust it.
    #[serde(default)]
    pub dev_cert_out: Option<PathBuf>,
    /// Largest request frame accepted; larger ones get a `TOO_LARGE` error frame. Default 8 MiB
    /// (assumption: as `http.max_body_bytes`).
    #[serde(default = "default_max_body")]
    pub max_frame_bytes: usize,
    /// Shortest load report period a SUBSCRIBE may ask for, ms; shorter asks get this.
    /// assumption: 20 ms, 5× finer than the gateways' default publication period Δ = 100 ms.
    #[serde(default = "default_min_report_ms")]
    pub min_report_ms: u64,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            listen: default_http_addr(),
            tls: None,
            allow_plaintext: false,
            limits: ServeLimits::default(),
        }
    }
}

impl Default for QuicConfig {
    fn default() -> Self {
        Self {
            listen: default_quic_addr(),
            cert: None,
            key: None,
            dev_cert_out: None,
            max_frame_bytes: default_max_body(),
            min_report_ms: default_min_report_ms(),
        }
    }
}

fn default_min_report_ms() -> u64 {
    20
}

fn default_http_addr() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 8000))
}

fn default_quic_addr() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 8001))
}

fn default_max_body() -> usize {
    8 << 20
}
