//! TLS on every TCP listener: a worker whose HTTP and gRPC listeners verify client
//! certificates, behind a gateway that reaches it over HTTPS with a client certificate and
//! serves its own clients over HTTPS and TLS gRPC. The gateway's certificate is replaced and
//! reloaded while a client stream and its connections stay open; plaintext clients, clients
//! without a certificate and bad certificate files are refused.

use bytes::Bytes;
use continuum_testkit::gateway::*;
use continuum_wire::dev_pki::{self, DevPki};
use continuum_wire::grpc::{GrpcInferenceServiceClient, pb};
use continuum_wire::tcp_tls::ClientTls;
use http_body_util::{BodyExt, Full};
use hyper::{Request, StatusCode, Uri};
use hyper_util::rt::TokioIo;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::{Value, json};
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::TcpStream;

/// An HTTP/1.1 connection over TLS, kept open across requests.
struct Conn {
    send: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    /// The leaf certificate the server presented.
    cert: CertificateDer<'static>,
}

async fn tls_stream(
    addr: SocketAddr,
    tls: &ClientTls,
    alpn: &[u8],
) -> anyhow::Result<tokio_rustls::client::TlsStream<TcpStream>> {
    let cfg = tls.client_config(&[alpn])?;
    let tcp = TcpStream::connect(addr).await?;
    let name = ServerName::try_from("localhost")?;
    Ok(tokio_rustls::TlsConnector::from(cfg)
        .connect(name, tcp)
        .await?)
}

impl Conn {
    async fn open(addr: SocketAddr, tls: &ClientTls) -> anyhow::Result<Self> {
        let s = tls_stream(addr, tls, b"http/1.1").await?;
        let cert = s.get_ref().1.peer_certificates().unwrap()[0].clone();
        let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(s)).await?;
        tokio::spawn(conn);
        Ok(Self { send, cert })
    }

    /// Sends `req`; its status and body.
    async fn send(&mut self, req: Request<Full<Bytes>>) -> anyhow::Result<(StatusCode, Value)> {
        self.send.ready().await?;
        let r = self.send.send_request(req).await?;
        let status = r.status();
        let body = r.into_body().collect().await?.to_bytes();
        Ok((status, serde_json::from_slice(&body).unwrap_or(Value::Null)))
    }
}

/// Connects, sends one request; fails when the handshake or the request does.
async fn once(
    addr: SocketAddr,
    tls: &ClientTls,
    req: Request<Full<Bytes>>,
) -> anyhow::Result<StatusCode> {
    Ok(Conn::open(addr, tls).await?.send(req).await?.0)
}

/// A tonic connector that speaks TLS (ALPN h2) with `ClientTls`.
#[derive(Clone)]
struct GrpcTls(Arc<rustls::ClientConfig>);

impl tower_service::Service<Uri> for GrpcTls {
    type Response = TokioIo<tokio_rustls::client::TlsStream<TcpStream>>;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = std::io::Result<Self::Response>> + Send>>;
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn call(&mut self, uri: Uri) -> Self::Future {
        let cfg = self.0.clone();
        Box::pin(async move {
            let addr = format!("127.0.0.1:{}", uri.port_u16().unwrap_or(443));
            let tcp = TcpStream::connect(addr).await?;
            let name = ServerName::try_from("localhost").unwrap();
            let s = tokio_rustls::TlsConnector::from(cfg)
                .connect(name, tcp)
                .await?;
            Ok(TokioIo::new(s))
        })
    }
}

async fn grpc(
    addr: SocketAddr,
    tls: &ClientTls,
) -> anyhow::Result<GrpcInferenceServiceClient<tonic::transport::Channel>> {
    let c = GrpcTls(tls.client_config(&[b"h2"])?);
    let ch = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))?
        .connect_timeout(Duration::from_secs(5))
        .connect_with_connector(c)
        .await?;
    Ok(GrpcInferenceServiceClient::new(ch))
}

fn client(p: &DevPki, with_cert: bool) -> ClientTls {
    ClientTls {
        ca: p.ca.clone(),
        cert: with_cert.then(|| p.client_cert.clone()),
        key: with_cert.then(|| p.client_key.clone()),
    }
}

fn infer_req(addr: SocketAddr, path: &str, body: &Value) -> Request<Full<Bytes>> {
    request(addr, "POST", path, None, Some(body))
}

/// A gRPC inference of one reference item of the gateway's task, on stream `token`.
fn grpc_infer(token: &str) -> pb::ModelInferRequest {
    use pb::infer_parameter::ParameterChoice as P;
    grpc_infer_request(vec![("stream_id", P::StringParam(token.into()))])
}

/// The worker (cloud) verifies client certificates on HTTP and gRPC.
async fn tls_worker(p: &DevPki) -> continuum_worker::Worker {
    let tls = json!({"cert": p.server_cert, "key": p.server_key, "client_ca": p.ca,
                     "handshake_timeout_ms": 2000});
    start(config(
        &[("cnn-l-b1", "cnn-l", 1, 0.0), ("cnn-l-b4", "cnn-l", 4, 5.0)],
        json!({"name": "worker-cloud", "http": {"tls": tls},
               "grpc": {"listen": "127.0.0.1:0", "tls": tls}}),
    ))
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn worker_listeners_require_tls_and_a_client_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let p = dev_pki::generate(dir.path(), "").unwrap();
    let w = tls_worker(&p).await;
    let a = w.http_addr();
    let ok = once(a, &client(&p, true), get(a, "/v2/health/ready")).await;
    assert_eq!(ok.unwrap(), StatusCode::OK);
    let (st, out) = Conn::open(a, &client(&p, true))
        .await
        .unwrap()
        .send(infer_req(a, "/v2/models/cnn-l-b1/infer", &infer_json(1)))
        .await
        .unwrap();
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_close(&output_of_json(&out), &direct("cnn-l", 1), 1e-4);
    // HTTP/2 over TLS (ALPN h2) on the same listener.
    let s = tls_stream(a, &client(&p, true), b"h2").await.unwrap();
    assert_eq!(s.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let exec = hyper_util::rt::TokioExecutor::new();
    let (mut h2, conn) = hyper::client::conn::http2::handshake(exec, TokioIo::new(s))
        .await
        .unwrap();
    tokio::spawn(conn);
    let req = Request::get(format!("https://{a}/v2/health/ready"))
        .body(Full::new(Bytes::new()))
        .unwrap();
    assert_eq!(h2.send_request(req).await.unwrap().status(), StatusCode::OK);
    // No client certificate, or plaintext: refused.
    let no_cert = once(a, &client(&p, false), get(a, "/v2/health/ready")).await;
    assert!(no_cert.is_err(), "{no_cert:?}");
    assert_eq!(try_status(a, get(a, "/v2/health/ready")).await, None);
    // gRPC: the same.
    let g = w.grpc_addr().unwrap();
    let mut c = grpc(g, &client(&p, true)).await.unwrap();
    let r = c.server_ready(pb::ServerReadyRequest {}).await.unwrap();
    assert!(r.into_inner().ready);
    let refused = match grpc(g, &client(&p, false)).await {
        Ok(mut c) => c.server_ready(pb::ServerReadyRequest {}).await.is_err(),
        Err(_) => true,
    };
    assert!(refused, "a gRPC client without a certificate was served");
    let plain = GrpcInferenceServiceClient::connect(format!("http://{g}")).await;
    let refused = match plain {
        Ok(mut c) => c.server_ready(pb::ServerReadyRequest {}).await.is_err(),
        Err(_) => true,
    };
    assert!(refused, "a plaintext gRPC client was served");
    w.reload_tls().unwrap();
    assert_eq!(
        once(a, &client(&p, true), get(a, "/v2/health/ready"))
            .await
            .unwrap(),
        StatusCode::OK
    );
    w.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn gateway_serves_https_and_tls_grpc_and_reloads_its_certificate_mid_stream() {
    let dir = tempfile::tempdir().unwrap();
    let p = dev_pki::generate(dir.path(), "").unwrap();
    let cloud = tls_worker(&p).await;
    let co = start(co_config(dir.path(), "127.0.0.1:0")).await;
    // The gateway's own certificate files, replaced in place later.
    let (gw_cert, gw_key) = (dir.path().join("gw.pem"), dir.path().join("gw.key"));
    std::fs::copy(&p.server_cert, &gw_cert).unwrap();
    std::fs::copy(&p.server_key, &gw_key).unwrap();
    let tls = json!({"cert": gw_cert, "key": gw_key});
    let cloud_up = json!({"name": "worker-cloud", "cluster": "cloud", "protocol": "http",
        "address": format!("https://{}", cloud.http_addr()),
        "tls": {"ca": p.ca, "cert": p.client_cert, "key": p.client_key}});
    let extra = json!({"http": {"listen": "127.0.0.1:0", "tls": tls},
                       "grpc": {"listen": "127.0.0.1:0", "tls": tls}});
    let file = dir.path().join("gateway.yaml");
    write_json(
        &file,
        &gateway_json_with(dir.path(), co.quic_addr(), cloud_up, extra),
    );
    let gw = continuum_gateway::Gateway::start_from_file(&file)
        .await
        .expect("gateway starts");
    assert!(
        gw.wait_workers_up(Duration::from_secs(20)).await,
        "workers up over HTTPS and QUIC"
    );
    let (a, g) = (gw.http_addr(), gw.grpc_addr().unwrap());

    // A client stream over one kept-alive HTTPS connection; accuracy 0.5 binds the cloud's
    // cnn-l, reached over HTTPS with the gateway's client certificate.
    let mut conn = Conn::open(a, &client(&p, false)).await.unwrap();
    let (st, s) = conn
        .send(infer_req(a, "/v1/streams", &stream_req(3000.0, 0.5)))
        .await
        .unwrap();
    assert_eq!(st, StatusCode::CREATED, "{s}");
    let token = s["stream_id"].as_str().unwrap().to_string();
    let path = format!("/v1/streams/{token}/infer");
    let (st, out) = conn
        .send(infer_req(a, &path, &infer_json(1)))
        .await
        .unwrap();
    assert_eq!(st, StatusCode::OK, "{out}");
    assert_close(&output_of_json(&out), &direct("cnn-l", 1), 1e-4);
    let mut gc = grpc(g, &client(&p, false)).await.unwrap();
    gc.model_infer(grpc_infer(&token)).await.unwrap();
    // Plaintext clients are refused on both listeners.
    assert_eq!(try_status(a, get(a, "/v2/health/ready")).await, None);
    let plain = GrpcInferenceServiceClient::connect(format!("http://{g}")).await;
    assert!(match plain {
        Ok(mut c) => c.server_ready(pb::ServerReadyRequest {}).await.is_err(),
        Err(_) => true,
    });

    // A broken key file: the reload fails, naming it, and the running certificate stays.
    std::fs::write(&gw_key, "not a key").unwrap();
    let reload = || request(a, "POST", "/v1/reload", Some("s3cret"), None);
    let (st, e) = conn.send(reload()).await.unwrap();
    assert!(!st.is_success(), "{st} {e}");
    assert!(e.to_string().contains("gw.key"), "{e}");
    let again = Conn::open(a, &client(&p, false)).await.unwrap();
    assert_eq!(again.cert, conn.cert);

    // A certificate from a new authority, reloaded over the open connection.
    let p2 = dev_pki::generate(dir.path(), "new-").unwrap();
    std::fs::copy(&p2.server_cert, &gw_cert).unwrap();
    std::fs::copy(&p2.server_key, &gw_key).unwrap();
    let (st, r) = conn.send(reload()).await.unwrap();
    assert_eq!(st, StatusCode::OK, "{r}");
    // The open connection, its stream and the open gRPC channel keep going.
    let (st, out) = conn
        .send(infer_req(a, &path, &infer_json(1)))
        .await
        .unwrap();
    assert_eq!(st, StatusCode::OK, "{out}");
    gc.model_infer(grpc_infer(&token)).await.unwrap();
    // New handshakes get the new certificate: clients trusting only the old CA fail.
    assert!(Conn::open(a, &client(&p, false)).await.is_err());
    assert!(grpc(g, &client(&p, false)).await.is_err());
    let mut fresh = Conn::open(a, &client(&p2, false)).await.unwrap();
    assert_ne!(fresh.cert, conn.cert);
    let (st, out) = fresh
        .send(infer_req(a, &path, &infer_json(1)))
        .await
        .unwrap();
    assert_eq!(st, StatusCode::OK, "the stream survives the reload: {out}");
    let mut gc2 = grpc(g, &client(&p2, false)).await.unwrap();
    gc2.model_infer(grpc_infer(&token)).await.unwrap();
    gw.shutdown().await;
    co.shutdown().await;
    cloud.shutdown().await;
}

/// The shipped gateway and worker settings bind loopback without TLS: they still load under
/// the plaintext rule.
#[test]
fn shipped_settings_still_load() {
    let mut n = 0;
    for d in ["config", "config/fleet", "config/live-fleet"] {
        for e in std::fs::read_dir(repo(d)).unwrap() {
            let p = e.unwrap().path();
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            if p.extension().is_none_or(|x| x != "yaml") {
                continue;
            }
            if text.lines().any(|l| l.starts_with("scheduler:")) {
                continuum_gateway::GatewayConfig::load(&p).unwrap();
            } else if text.lines().any(|l| l.starts_with("variants:")) {
                continuum_worker::WorkerConfig::load(&p).unwrap();
            } else {
                continue;
            }
            n += 1;
        }
    }
    assert!(n >= 8, "{n} settings files");
}
