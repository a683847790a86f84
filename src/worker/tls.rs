//! TLS material for the QUIC endpoint: a certificate and key from PEM files, or a self-signed
//! development certificate for `localhost` and `127.0.0.1`.

use anyhow::{Context, Result};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::path::Path;
use std::sync::Arc;

/// Concurrent queries (bidirectional streams) a peer may have open on one connection: a gateway
/// multiplexes all its queries to a worker on one connection, and quinn's default of 100 would
/// make the 101st wait for a stream. assumption: 1024, the gateway's default
/// `max_in_flight_per_worker`.
pub const MAX_CONCURRENT_STREAMS: u32 = 1024;

/// Transport settings shared by workers and their clients: [`MAX_CONCURRENT_STREAMS`] streams.
/// (quinn's default packet sizes are kept: 64 KiB datagrams on loopback did not raise the
/// throughput and, in bursts, overflowed the default socket receive buffers.)
pub fn transport() -> quinn::TransportConfig {
    let mut t = quinn::TransportConfig::default();
    t.max_concurrent_bidi_streams(MAX_CONCURRENT_STREAMS.into());
    t
}

/// ALPN protocol id of the worker's QUIC protocol.
pub const ALPN: &[u8] = b"continuum/1";

/// A certificate chain and its key.
#[derive(Debug)]
pub struct TlsMaterial {
    /// Certificate chain, leaf first.
    pub chain: Vec<CertificateDer<'static>>,
    /// Private key of the leaf.
    pub key: PrivateKeyDer<'static>,
}

impl TlsMaterial {
    /// Reads a PEM certificate chain and key.
    pub fn from_pem(cert: &Path, key: &Path) -> Result<Self> {
        let chain = CertificateDer::pem_file_iter(cert)
            .and_then(|it| it.collect::<Result<Vec<_>, _>>())
            .with_context(|| format!("cannot read certificates from {}", cert.display()))?;
        if chain.is_empty() {
            anyhow::bail!("{}: no certificate found", cert.display());
        }
        let key = PrivateKeyDer::from_pem_file(key)
            .with_context(|| format!("cannot read a private key from {}", key.display()))?;
        Ok(Self { chain, key })
    }

    /// A fresh self-signed certificate for `localhost` and `127.0.0.1` (development only).
    pub fn self_signed() -> Result<Self> {
        let ck = rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()])
            .context("cannot generate a development certificate")?;
        Ok(Self {
            chain: vec![ck.cert.der().clone()],
            key: PrivatePkcs8KeyDer::from(ck.signing_key.serialize_der()).into(),
        })
    }

    /// The quinn server configuration for this material.
    pub fn server_config(&self) -> Result<quinn::ServerConfig> {
        let mut tls = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .context("TLS 1.3 unavailable")?
        .with_no_client_auth()
        .with_single_cert(self.chain.clone(), self.key.clone_key())
        .context("certificate and key do not match")?;
        tls.alpn_protocols = vec![ALPN.to_vec()];
        let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(tls)
            .context("TLS configuration unusable for QUIC")?;
        let mut server = quinn::ServerConfig::with_crypto(Arc::new(crypto));
        server.transport_config(Arc::new(transport()));
        Ok(server)
    }
}

/// A quinn client configuration that trusts exactly these certificates.
pub fn client_config(trusted: &[CertificateDer<'static>]) -> Result<quinn::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for c in trusted {
        roots
            .add(c.clone())
            .context("unusable trusted certificate")?;
    }
    let mut tls = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_protocol_versions(&[&rustls::version::TLS13])
    .context("TLS 1.3 unavailable")?
    .with_root_certificates(roots)
    .with_no_client_auth();
    tls.alpn_protocols = vec![ALPN.to_vec()];
    let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(tls)
        .context("TLS configuration unusable for QUIC")?;
    let mut client = quinn::ClientConfig::new(Arc::new(crypto));
    client.transport_config(Arc::new(transport()));
    Ok(client)
}
