//! The accept side every TCP listener shares (the HTTP serve loop and the gRPC listener):
//! the connection caps, back-off with a rate-limited log line when `accept` fails, and, when
//! the process runs out of file descriptors, one reserved descriptor freed at once and idle
//! connections shed ([`super::conns`]). Each admitted connection comes back guarded: shed on
//! demand, and closed when it sends no byte within the header read timeout.

use super::conns::{self, ConnCaps, ConnSlot, Guarded};
use super::{AcceptBackoff, ServeLimits};
use crate::rate_log::RateLimitedLog;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};

/// Descriptors held in reserve for an `accept` that runs out of them.
const RESERVED_FDS: usize = 2;
/// Idle connections shed for each `accept` that runs out of descriptors.
const SHED_PER_FAILURE: usize = 4;

/// One admitted connection: its guarded stream, its place under the caps, its addresses.
pub(crate) struct Admitted {
    /// The stream, shed on demand and closed if silent.
    pub(crate) io: Guarded<TcpStream>,
    /// Its place under the caps (held until the connection ends).
    pub(crate) slot: ConnSlot,
    /// The client's address.
    pub(crate) peer: SocketAddr,
    /// The listener's address the client reached.
    pub(crate) local: Option<SocketAddr>,
}

/// A listener with the caps, the reserve, the back-off and the logs of one endpoint.
pub(crate) struct Acceptor {
    listener: TcpListener,
    caps: Arc<ConnCaps>,
    reserve: conns::Reserve,
    backoff: AcceptBackoff,
    accept_log: RateLimitedLog,
    cap_log: RateLimitedLog,
    first_byte: Duration,
    what: &'static str,
}

impl Acceptor {
    /// Accepts from `listener` within `limits`; `what` names the endpoint in log lines.
    pub(crate) fn new(listener: TcpListener, limits: &ServeLimits, what: &'static str) -> Self {
        Self {
            listener,
            caps: ConnCaps::new(limits),
            reserve: conns::Reserve::new(RESERVED_FDS),
            backoff: AcceptBackoff::default(),
            accept_log: RateLimitedLog::new(Duration::from_secs(1)),
            cap_log: RateLimitedLog::new(Duration::from_secs(1)),
            first_byte: Duration::from_millis(limits.header_read_timeout_ms),
            what,
        }
    }

    /// The next connection admitted under the caps, or `None` once `stop` completes.
    /// Connections over the caps are closed at once; failed accepts are waited out.
    pub(crate) async fn next(&mut self, stop: impl Future<Output = ()>) -> Option<Admitted> {
        tokio::pin!(stop);
        loop {
            let r = tokio::select! {
                r = self.listener.accept() => r,
                _ = &mut stop => return None,
            };
            let (tcp, peer) = match r {
                Ok(x) => {
                    self.backoff.reset();
                    self.reserve.refill();
                    x
                }
                Err(e) => {
                    let wait = self.failed(&e);
                    tokio::select! {
                        _ = tokio::time::sleep(wait) => {}
                        _ = &mut stop => return None,
                    }
                    continue;
                }
            };
            let Some(slot) = self.caps.admit(peer.ip()) else {
                if let Some(suppressed) = self.cap_log.allow() {
                    tracing::warn!(endpoint = self.what, peer = %peer.ip(), suppressed,
                        "connection refused: over the connection cap");
                }
                continue;
            };
            let _ = tcp.set_nodelay(true);
            let local = tcp.local_addr().ok();
            let io = slot.guard(tcp, self.first_byte);
            return Some(Admitted {
                io,
                slot,
                peer,
                local,
            });
        }
    }

    /// What a failed accept does: out of descriptors, frees one reserved descriptor for the
    /// connection waiting and sheds idle connections for the ones behind it; otherwise backs
    /// off. Returns how long to wait before the next accept.
    fn failed(&mut self, e: &std::io::Error) -> Duration {
        if conns::out_of_descriptors(e) {
            let shed = self.caps.shed_idle(SHED_PER_FAILURE);
            let freed = self.reserve.release_one();
            if let Some(suppressed) = self.accept_log.allow() {
                tracing::warn!(endpoint = self.what, error = %e, shed, suppressed,
                    "accept failed: out of descriptors, shedding idle connections");
            }
            if freed || shed > 0 {
                return Duration::from_millis(1);
            }
            return self.backoff.fail();
        }
        let wait = self.backoff.fail();
        if let Some(suppressed) = self.accept_log.allow() {
            tracing::warn!(endpoint = self.what, error = %e, retry_in_ms = wait.as_millis() as u64,
                suppressed, "accept failed");
        }
        wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn limits(first_byte_ms: u64) -> ServeLimits {
        ServeLimits {
            header_read_timeout_ms: first_byte_ms,
            ..ServeLimits::default()
        }
    }

    async fn acceptor(first_byte_ms: u64) -> (Acceptor, SocketAddr) {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let a = l.local_addr().unwrap();
        (Acceptor::new(l, &limits(first_byte_ms), "test"), a)
    }

    #[tokio::test]
    async fn a_silent_connection_fails_its_read_after_the_timeout_and_a_speaking_one_does_not() {
        let (mut acc, a) = acceptor(200).await;
        let _silent = TcpStream::connect(a).await.unwrap();
        let mut conn = acc.next(std::future::pending()).await.unwrap();
        assert_eq!(conn.peer.ip(), a.ip());
        assert_eq!(conn.local, Some(a));
        let t = Instant::now();
        let mut buf = [0u8; 8];
        let e = conn.io.read(&mut buf).await.unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
        assert!(
            t.elapsed() >= Duration::from_millis(150),
            "{:?}",
            t.elapsed()
        );

        let mut talker = TcpStream::connect(a).await.unwrap();
        let mut conn = acc.next(std::future::pending()).await.unwrap();
        talker.write_all(b"x").await.unwrap();
        assert_eq!(conn.io.read(&mut buf).await.unwrap(), 1);
        // Past the first byte, silence is the protocol's business (hyper's header timeout).
        let pending = tokio::time::timeout(Duration::from_millis(400), conn.io.read(&mut buf));
        assert!(pending.await.is_err(), "a read after the first byte waits");
    }

    #[tokio::test]
    async fn over_the_cap_connections_are_closed_and_stop_ends_the_wait() {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let a = l.local_addr().unwrap();
        let lim = ServeLimits {
            max_connections_per_ip: 1,
            ..ServeLimits::default()
        };
        let mut acc = Acceptor::new(l, &lim, "test");
        let _first = TcpStream::connect(a).await.unwrap();
        let held = acc.next(std::future::pending()).await.unwrap();
        let mut second = TcpStream::connect(a).await.unwrap();
        // The second is refused (closed at once); stop then ends the wait.
        let next = acc.next(tokio::time::sleep(Duration::from_millis(300)));
        assert!(next.await.is_none());
        let mut b = [0u8; 1];
        let n = tokio::time::timeout(Duration::from_secs(5), second.read(&mut b)).await;
        assert!(matches!(n, Ok(Ok(0)) | Ok(Err(_))), "{n:?}");
        drop(held);
    }
}
