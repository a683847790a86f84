//! The gRPC listener's incoming connections: accepted as the HTTP listener's are (caps,
//! back-off, descriptor reserve and idle shedding, silent connections closed: [`Acceptor`]),
//! secured by the shared TLS path ([`crate::tcp_tls::secure`]) when configured, handed to
//! tonic.

use crate::serve::{Acceptor, ConnSlot, Guarded, ServeLimits};
use crate::tcp_tls::{MaybeTls, TlsAcceptor};
use tokio::net::{TcpListener, TcpStream};

/// Accepted (and, with `tls`, secured) connections as a stream. The accept loop runs in a
/// task of its own and each TLS handshake in another, so that a slow handshake never holds up
/// the next accept; the loop ends when the server drops the stream.
pub(crate) fn accepted(
    listener: TcpListener,
    limits: &ServeLimits,
    tls: Option<TlsAcceptor>,
) -> impl futures_util::Stream<Item = std::io::Result<Capped>> + use<> {
    let (tx, rx) = tokio::sync::mpsc::channel::<Capped>(64);
    tokio::spawn(accept_loop(
        Acceptor::new(listener, limits, "gRPC"),
        tls,
        tx,
    ));
    futures_util::stream::unfold(
        rx,
        |mut rx| async move { rx.recv().await.map(|c| (Ok(c), rx)) },
    )
}

/// Accepts until `tx` closes.
async fn accept_loop(
    mut acceptor: Acceptor,
    tls: Option<TlsAcceptor>,
    tx: tokio::sync::mpsc::Sender<Capped>,
) {
    while let Some(a) = acceptor.next(tx.closed()).await {
        let info = tonic::transport::server::TcpConnectInfo {
            local_addr: a.local,
            remote_addr: Some(a.peer),
        };
        let plain = tls.is_none();
        let (tls, tx) = (tls.clone(), tx.clone());
        // Plaintext needs no handshake (`secure` returns at once): handed over in order here.
        let hand_over = async move {
            if let Some(io) = crate::tcp_tls::secure(tls.as_ref(), a.io, a.peer).await {
                let _slot = a.slot;
                let _ = tx.send(Capped { io, info, _slot }).await;
            }
        };
        if plain {
            hand_over.await;
        } else {
            tokio::spawn(hand_over);
        }
    }
}

/// A gRPC connection holding its place under the connection caps until it closes.
pub(crate) struct Capped {
    io: MaybeTls<Guarded<TcpStream>>,
    info: tonic::transport::server::TcpConnectInfo,
    _slot: ConnSlot,
}

impl tonic::transport::server::Connected for Capped {
    type ConnectInfo = tonic::transport::server::TcpConnectInfo;
    fn connect_info(&self) -> Self::ConnectInfo {
        self.info.clone()
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
