//! TLS material for the QUIC endpoint: a certificate and key from PEM files, or a self-signed
//! development certificate for `localhost` and `127.0.0.1`.

use anyhow::{Context, Result};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

/// Concurrent queries (bidirectional streams) a peer may have open on one connection: a gateway
/// multiplexes all its queries to a worker on one connection, and quinn's default of 100 would
/// make the 101st wait for a stream. assumption: 1024, the gateway's default
/// `max_in_flight_per_worker`.
pub const MAX_CONCURRENT_STREAMS: u32 = 1024;

/// Largest UDP payload a QUIC endpoint sends or accepts, and the ceiling of its path-MTU
/// discovery: packets start at quinn's 1 200 bytes and grow only where the path carries them
/// (loopback's 64 KiB MTU, jumbo-frame links); elsewhere discovery stops at the path's MTU.
/// Per-packet work (encryption set-up, headers, acknowledgements, a share of a system call)
/// dominated the QUIC hop: at quinn's 1 452-byte packets ≈ 100 µs of CPU per 48 KB query on
/// each side, 35–45 µs at 4 000–6 500 bytes (docs/performance.md); at this ceiling a 48 KB
/// query is one packet. GSO batches are kept within the kernel's 64 KiB by
/// [`crate::udp::CappedSegments`]. 65 000 leaves room under IPv4's 65 507-byte UDP payload.
pub const MAX_UDP_PAYLOAD: u16 = 65_000;

/// Send and receive buffer asked of the kernel for a QUIC socket. A burst of large packets
/// overflows Linux's default (208 KiB) and every loss halves the congestion window. The kernel
/// grants at most `net.core.rmem_max` / `wmem_max`. assumption: 4 MiB, 16 bandwidth-delay
/// products of a 1 GB/s loopback flow at 250 µs RTT.
pub const SOCKET_BUFFER: usize = 4 << 20;

/// Bytes a peer may send on one connection beyond what the application has read (QUIC's
/// connection flow-control window), and the most this side keeps unacknowledged in its send
/// buffer. quinn's default receive window is unbounded: a sender whose peer is descheduled for
/// a few milliseconds keeps sending at its congestion window, the peer's socket buffer
/// ([`SOCKET_BUFFER`]) overflows, and every loss costs a loss-detection delay and halves the
/// window. Bounded to half the socket buffer, what the peer has not read always fits in its
/// kernel buffer. assumption: 2 MiB = 43 queries of 48 KB, some 170 bandwidth-delay products of
/// a 5 000 qps × 48 KB flow at loopback's ~50 µs RTT, so throughput is not limited by it.
pub const RECEIVE_WINDOW: u32 = (SOCKET_BUFFER / 2) as u32;

/// Bytes a peer may send on one stream beyond what the application has read. assumption:
/// 1 MiB (quinn's default is 1.25 MB): one query is one stream, 48 KB to a few MB of tensor,
/// and one stream the application is slow to read cannot take the whole connection window.
/// Both windows bound throughput at window / RTT: over a 20 ms WAN hop the connection carries
/// at most ~100 MB/s (about 2 000 queries of 48 KB a second); raise both for such links.
pub const STREAM_RECEIVE_WINDOW: u32 = 1 << 20;

/// Transport settings shared by workers and their clients: [`MAX_CONCURRENT_STREAMS`] streams,
/// path-MTU discovery up to [`MAX_UDP_PAYLOAD`], flow-control windows [`RECEIVE_WINDOW`] and
/// [`STREAM_RECEIVE_WINDOW`] (send buffer: [`RECEIVE_WINDOW`]).
pub fn transport() -> quinn::TransportConfig {
    let mut t = quinn::TransportConfig::default();
    t.max_concurrent_bidi_streams(MAX_CONCURRENT_STREAMS.into());
    t.receive_window(RECEIVE_WINDOW.into());
    t.stream_receive_window(STREAM_RECEIVE_WINDOW.into());
    t.send_window(u64::from(RECEIVE_WINDOW));
    let mut mtu = quinn::MtuDiscoveryConfig::default();
    mtu.upper_bound(MAX_UDP_PAYLOAD);
    t.mtu_discovery_config(Some(mtu));
    t
}

/// A QUIC endpoint on `addr` (a server when `server` is given) whose socket has
/// [`SOCKET_BUFFER`]-sized buffers, which accepts [`MAX_UDP_PAYLOAD`]-byte packets and whose
/// GSO batches stay within the kernel's limit ([`crate::udp::CappedSegments`]).
pub fn endpoint(addr: SocketAddr, server: Option<quinn::ServerConfig>) -> Result<quinn::Endpoint> {
    let domain = socket2::Domain::for_address(addr);
    let socket = socket2::Socket::new(domain, socket2::Type::DGRAM, Some(socket2::Protocol::UDP))
        .context("cannot open a UDP socket")?;
    // Best effort: a kernel that refuses the size keeps its default.
    let _ = socket.set_recv_buffer_size(SOCKET_BUFFER);
    let _ = socket.set_send_buffer_size(SOCKET_BUFFER);
    socket
        .bind(&addr.into())
        .with_context(|| format!("cannot bind UDP on {addr}"))?;
    let mut cfg = quinn::EndpointConfig::default();
    cfg.max_udp_payload_size(MAX_UDP_PAYLOAD)
        .expect("within QUIC's bounds");
    let runtime = quinn::default_runtime().context("no async runtime for QUIC")?;
    let udp = runtime
        .wrap_udp_socket(socket.into())
        .context("cannot start QUIC")?;
    let udp = Arc::new(crate::udp::CappedSegments::new(udp));
    quinn::Endpoint::new_with_abstract_socket(cfg, server, udp, runtime)
        .context("cannot start QUIC")
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
