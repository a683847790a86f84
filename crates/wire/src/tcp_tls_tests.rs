use super::*;
use crate::dev_pki;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn server_tls(p: &dev_pki::DevPki, client_ca: bool) -> ServerTls {
    ServerTls {
        cert: p.server_cert.clone(),
        key: p.server_key.clone(),
        client_ca: client_ca.then(|| p.ca.clone()),
        handshake_timeout_ms: 500,
    }
}

fn client(p: &dev_pki::DevPki, with_cert: bool) -> ClientTls {
    ClientTls {
        ca: p.ca.clone(),
        cert: with_cert.then(|| p.client_cert.clone()),
        key: with_cert.then(|| p.client_key.clone()),
    }
}

#[test]
fn plaintext_is_loopback_only_unless_allowed() {
    let lo: SocketAddr = "127.0.0.1:80".parse().unwrap();
    let lo6: SocketAddr = "[::1]:80".parse().unwrap();
    let any: SocketAddr = "0.0.0.0:80".parse().unwrap();
    assert!(check_plaintext("http", lo, None, false).is_ok());
    assert!(check_plaintext("http", lo6, None, false).is_ok());
    let e = check_plaintext("grpc", any, None, false).unwrap_err();
    assert!(
        e.starts_with("grpc.listen:") && e.contains("grpc.allow_plaintext"),
        "{e}"
    );
    assert!(check_plaintext("grpc", any, None, true).is_ok());
    let dir = tempfile::tempdir().unwrap();
    let p = dev_pki::generate(dir.path(), "").unwrap();
    let mut t = server_tls(&p, false);
    assert!(check_plaintext("http", any, Some(&t), false).is_ok());
    t.handshake_timeout_ms = 0;
    let e = check_plaintext("http", any, Some(&t), false).unwrap_err();
    assert!(e.starts_with("http.tls.handshake_timeout_ms"), "{e}");
}

#[test]
fn unknown_tls_keys_are_refused() {
    let v = serde_json::json!({"cert": "c", "key": "k", "client_cert": "x"});
    let e = serde_json::from_value::<ServerTls>(v)
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown field `client_cert`"), "{e}");
    let v = serde_json::json!({"ca": "c", "cert": "k", "keys": "x"});
    let e = serde_json::from_value::<ClientTls>(v)
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown field `keys`"), "{e}");
}

#[test]
fn bad_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = dev_pki::generate(dir.path(), "").unwrap();
    let mut t = server_tls(&p, false);
    t.cert = dir.path().join("missing.pem");
    let e = format!("{:#}", server_config(&t, ALPN_HTTP).unwrap_err());
    assert!(e.contains("missing.pem"), "{e}");
    let mut t = server_tls(&p, false);
    t.key = p.client_key.clone();
    let e = format!("{:#}", server_config(&t, ALPN_HTTP).unwrap_err());
    assert!(e.contains("do not make a usable"), "{e}");
    let mut t = server_tls(&p, false);
    t.cert = p.server_key.clone();
    let e = format!("{:#}", server_config(&t, ALPN_HTTP).unwrap_err());
    assert!(e.contains("no certificate found"), "{e}");
    let mut c = client(&p, true);
    c.key = None;
    let e = format!("{:#}", c.client_config(ALPN_HTTP).unwrap_err());
    assert!(e.contains("both cert and key"), "{e}");
}

/// A listener that secures one connection with `a` and echoes what it reads; returns its port.
async fn echo_once(a: TlsAcceptor) -> SocketAddr {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, peer)) = l.accept().await {
            let a = a.clone();
            tokio::spawn(async move {
                if let Some(mut s) = secure(Some(&a), tcp, peer).await {
                    let mut b = [0u8; 5];
                    if s.read_exact(&mut b).await.is_ok() {
                        let _ = s.write_all(&b).await;
                        let _ = s.flush().await;
                    }
                }
            });
        }
    });
    addr
}

/// Connects with `c`, sends and reads back five bytes; the leaf certificate the server showed.
async fn round_trip(addr: SocketAddr, c: &ClientTls) -> io::Result<CertificateDer<'static>> {
    let cfg = c.client_config(ALPN_HTTP).map_err(io::Error::other)?;
    let tcp = TcpStream::connect(addr).await?;
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let mut s = tokio_rustls::TlsConnector::from(cfg)
        .connect(name, tcp)
        .await?;
    s.write_all(b"hello").await?;
    let mut b = [0u8; 5];
    s.read_exact(&mut b).await?;
    assert_eq!(&b, b"hello");
    Ok(s.get_ref().1.peer_certificates().unwrap()[0].clone())
}

#[tokio::test]
async fn reload_swaps_the_certificate_and_keeps_it_on_bad_files() {
    let dir = tempfile::tempdir().unwrap();
    let p1 = dev_pki::generate(dir.path(), "a-").unwrap();
    let a = TlsAcceptor::new(&server_tls(&p1, false), ALPN_HTTP).unwrap();
    let addr = echo_once(a.clone()).await;
    let first = round_trip(addr, &client(&p1, false)).await.unwrap();
    assert_eq!(first, read_certs(&p1.server_cert).unwrap()[0]);
    // A bad file: the error names it, the old certificate stays.
    let mut bad = server_tls(&p1, false);
    bad.key = dir.path().join("nope.key");
    assert!(format!("{:#}", a.stage(&bad).err().unwrap()).contains("nope.key"));
    assert_eq!(round_trip(addr, &client(&p1, false)).await.unwrap(), first);
    // Files replaced in place: reload picks them up for new handshakes.
    let p2 = dev_pki::generate(dir.path(), "b-").unwrap();
    std::fs::copy(&p2.server_cert, &p1.server_cert).unwrap();
    std::fs::copy(&p2.server_key, &p1.server_key).unwrap();
    a.reload().unwrap();
    assert!(
        round_trip(addr, &client(&p1, false)).await.is_err(),
        "old CA"
    );
    let second = round_trip(addr, &client(&p2, false)).await.unwrap();
    assert_ne!(first, second);
}

#[tokio::test]
async fn client_certificates_are_required_with_client_ca() {
    let dir = tempfile::tempdir().unwrap();
    let p = dev_pki::generate(dir.path(), "").unwrap();
    let a = TlsAcceptor::new(&server_tls(&p, true), ALPN_HTTP).unwrap();
    let addr = echo_once(a).await;
    round_trip(addr, &client(&p, true)).await.unwrap();
    assert!(round_trip(addr, &client(&p, false)).await.is_err());
    // A certificate from another authority is refused too.
    let other = dev_pki::generate(dir.path(), "other-").unwrap();
    let mut c = client(&p, true);
    (c.cert, c.key) = (Some(other.client_cert), Some(other.client_key));
    assert!(round_trip(addr, &c).await.is_err());
}

#[tokio::test]
async fn a_silent_client_is_dropped_after_the_handshake_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let p = dev_pki::generate(dir.path(), "").unwrap();
    let a = TlsAcceptor::new(&server_tls(&p, false), ALPN_HTTP).unwrap();
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let _silent = TcpStream::connect(addr).await.unwrap();
    let (tcp, peer) = l.accept().await.unwrap();
    let t = std::time::Instant::now();
    assert!(secure(Some(&a), tcp, peer).await.is_none());
    let waited = t.elapsed();
    assert!(
        waited >= Duration::from_millis(450) && waited < Duration::from_secs(3),
        "{waited:?}"
    );
    // A plaintext client talking HTTP to a TLS listener fails the handshake at once.
    let mut plain = TcpStream::connect(addr).await.unwrap();
    plain.write_all(b"GET / HTTP/1.1\r\n\r\n").await.unwrap();
    let (tcp, peer) = l.accept().await.unwrap();
    let t = std::time::Instant::now();
    assert!(secure(Some(&a), tcp, peer).await.is_none());
    assert!(t.elapsed() < Duration::from_millis(400));
}
