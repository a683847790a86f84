//! The gRPC listener's incoming connections: accepted within the connection caps, secured
//! by the shared TLS path ([`crate::tcp_tls::secure`]) when configured, handed to tonic.

use crate::serve::{ConnCaps, ConnSlot};
use crate::tcp_tls::{MaybeTls, TlsAcceptor};
use std::sync::Arc;
use tokio::net::TcpListener;

/// Accepted (and, with `tls`, secured) connections as a stream. The accept loop runs in a
/// task of its own and each TLS handshake in another, so that a slow handshake never holds up
/// the next accept; the loop ends when the server drops the stream.
pub(crate) fn accepted(
    listener: TcpListener,
    caps: Arc<ConnCaps>,
    tls: Option<TlsAcceptor>,
) -> impl futures_util::Stream<Item = std::io::Result<Capped>> {
    let (tx, rx) = tokio::sync::mpsc::channel::<Capped>(64);
    tokio::spawn(accept_loop(listener, caps, tls, tx));
    futures_util::stream::unfold(
        rx,
        |mut rx| async move { rx.recv().await.map(|c| (Ok(c), rx)) },
    )
}

/// Accepts until `tx` closes, backing off when `accept` fails (as the HTTP loop does).
/// Connections over the caps are closed at once.
async fn accept_loop(
    listener: TcpListener,
    caps: Arc<ConnCaps>,
    tls: Option<TlsAcceptor>,
    tx: tokio::sync::mpsc::Sender<Capped>,
) {
    let log = crate::rate_log::RateLimitedLog::new(std::time::Duration::from_secs(1));
    let mut backoff = crate::serve::AcceptBackoff::default();
    loop {
        let r = tokio::select! {
            r = listener.accept() => r,
            _ = tx.closed() => return,
        };
        match r {
            Ok((s, peer)) => {
                backoff.reset();
                let Some(slot) = caps.admit(peer.ip()) else {
                    continue;
                };
                let _ = s.set_nodelay(true);
                if tls.is_none() {
                    let io = MaybeTls::Plain(s);
                    let _ = tx.send(Capped { io, _slot: slot }).await;
                    continue;
                }
                let (tls, tx) = (tls.clone(), tx.clone());
                tokio::spawn(async move {
                    if let Some(io) = crate::tcp_tls::secure(tls.as_ref(), s, peer).await {
                        let _ = tx.send(Capped { io, _slot: slot }).await;
                    }
                });
            }
            Err(e) => {
                let wait = backoff.fail();
                if let Some(suppressed) = log.allow() {
                    tracing::warn!(error = %e, retry_in_ms = wait.as_millis() as u64,
                    suppressed, "gRPC accept failed");
                }
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = tx.closed() => return,
                }
            }
        }
    }
}

/// A gRPC connection holding its place under the connection caps until it closes.
pub(crate) struct Capped {
    io: MaybeTls,
    _slot: ConnSlot,
}

impl tonic::transport::server::Connected for Capped {
    type ConnectInfo = tonic::transport::server::TcpConnectInfo;
    fn connect_info(&self) -> Self::ConnectInfo {
        self.io.tcp().connect_info()
    }
}

impl tokio::io::AsyncRead for Capped {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for Capped {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }
    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }
    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}
