//! Open connections: the global and per-IP caps, and what keeps valid queries answered when
//! the process runs out of file descriptors — a few descriptors held in reserve (released one
//! at a time when `accept` fails with `EMFILE`/`ENFILE`, so that the waiting connection is
//! taken at once) and the shedding of idle connections, those that never sent a byte first
//! (oldest first), then those with no request in flight (least recently read first). A
//! connection with a request in flight is never shed.

use dashmap::DashMap;
use futures_util::task::AtomicWaker;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Semaphore;

/// Open connections in all and per IP, and the live ones that can be shed.
pub(crate) struct ConnCaps {
    all: Arc<Semaphore>,
    per_ip: DashMap<IpAddr, usize>,
    max_per_ip: usize,
    live: DashMap<u64, Arc<ConnState>>,
    next_id: AtomicU64,
    epoch: Instant,
}

/// What the shedding needs to know of one connection, and its shed signal.
pub(crate) struct ConnState {
    epoch: Instant,
    accepted_ms: u64,
    last_read_ms: AtomicU64,
    read_any: AtomicBool,
    busy: AtomicUsize,
    shed: AtomicBool,
    waker: AtomicWaker,
}

impl ConnState {
    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// Marks a request in flight until the guard drops (the connection is not shed meanwhile).
    pub(crate) fn busy(self: &Arc<Self>) -> Busy {
        self.busy.fetch_add(1, Ordering::AcqRel);
        Busy(self.clone())
    }
}

/// A request in flight on a connection.
pub(crate) struct Busy(Arc<ConnState>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0
            .last_read_ms
            .store(self.0.now_ms(), Ordering::Release);
        self.0.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Holds one connection's place under the caps.
pub(crate) struct ConnSlot {
    caps: Arc<ConnCaps>,
    ip: IpAddr,
    id: u64,
    state: Arc<ConnState>,
    _permit: tokio::sync::OwnedSemaphorePermit,
}

impl Drop for ConnSlot {
    fn drop(&mut self) {
        self.caps.live.remove(&self.id);
        if let dashmap::mapref::entry::Entry::Occupied(mut e) = self.caps.per_ip.entry(self.ip) {
            *e.get_mut() -= 1;
            if *e.get() == 0 {
                e.remove();
            }
        }
    }
}

impl ConnSlot {
    /// The connection's state (for [`ConnState::busy`]).
    pub(crate) fn state(&self) -> Arc<ConnState> {
        self.state.clone()
    }

    /// `io` made sheddable: once this connection is shed its reads and writes fail, which ends
    /// the connection and closes the descriptor; bytes read are recorded for the shed order.
    /// Reads also fail when no byte has arrived `first_byte` after this call: a silent client
    /// (no request line, no TLS hello, no HTTP/2 preface) does not keep its descriptor.
    pub(crate) fn guard<T>(&self, io: T, first_byte: Duration) -> Guarded<T> {
        Guarded {
            io,
            state: self.state.clone(),
            first_byte: Some(Box::pin(tokio::time::sleep(first_byte))),
        }
    }
}

impl ConnCaps {
    /// Caps of `limits`.
    pub(crate) fn new(limits: &super::ServeLimits) -> Arc<Self> {
        Self::with(limits.max_connections, limits.max_connections_per_ip)
    }

    fn with(max_all: usize, max_per_ip: usize) -> Arc<Self> {
        Arc::new(Self {
            all: Arc::new(Semaphore::new(max_all)),
            per_ip: DashMap::new(),
            max_per_ip,
            live: DashMap::new(),
            next_id: AtomicU64::new(0),
            epoch: Instant::now(),
        })
    }

    /// A place for one more connection from `ip`, if the caps allow.
    pub(crate) fn admit(self: &Arc<Self>, ip: IpAddr) -> Option<ConnSlot> {
        let permit = self.all.clone().try_acquire_owned().ok()?;
        let mut n = self.per_ip.entry(ip).or_insert(0);
        if *n >= self.max_per_ip {
            return None;
        }
        *n += 1;
        drop(n);
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let now = self.epoch.elapsed().as_millis() as u64;
        let state = Arc::new(ConnState {
            epoch: self.epoch,
            accepted_ms: now,
            last_read_ms: AtomicU64::new(now),
            read_any: AtomicBool::new(false),
            busy: AtomicUsize::new(0),
            shed: AtomicBool::new(false),
            waker: AtomicWaker::new(),
        });
        self.live.insert(id, state.clone());
        Some(ConnSlot {
            caps: self.clone(),
            ip,
            id,
            state,
            _permit: permit,
        })
    }

    /// Sheds up to `n` idle connections: those that never sent a byte, oldest first, then
    /// those with no request in flight, least recently read first. Returns how many.
    pub(crate) fn shed_idle(&self, n: usize) -> usize {
        let mut idle: Vec<(bool, u64, Arc<ConnState>)> = self
            .live
            .iter()
            .filter(|e| {
                let s = e.value();
                !s.shed.load(Ordering::Acquire) && s.busy.load(Ordering::Acquire) == 0
            })
            .map(|e| {
                let s = e.value();
                let read_any = s.read_any.load(Ordering::Acquire);
                let at = if read_any {
                    s.last_read_ms.load(Ordering::Acquire)
                } else {
                    s.accepted_ms
                };
                (read_any, at, s.clone())
            })
            .collect();
        idle.sort_by_key(|(read_any, at, _)| (*read_any, *at));
        let mut shed = 0;
        for (_, _, s) in idle.into_iter().take(n) {
            s.shed.store(true, Ordering::Release);
            s.waker.wake();
            shed += 1;
        }
        shed
    }
}

/// A connection's I/O that fails once the connection is shed, or when its first byte is late.
pub(crate) struct Guarded<T> {
    io: T,
    state: Arc<ConnState>,
    /// Until the first byte arrives: when it must have arrived by.
    first_byte: Option<Pin<Box<tokio::time::Sleep>>>,
}

fn silent_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        "connection closed: no byte within the header read timeout",
    )
}

fn shed_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "connection shed: out of file descriptors",
    )
}

impl<T: AsyncRead + Unpin> AsyncRead for Guarded<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.state.waker.register(cx.waker());
        if self.state.shed.load(Ordering::Acquire) {
            return Poll::Ready(Err(shed_error()));
        }
        let before = buf.filled().len();
        let r = Pin::new(&mut self.io).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            let now = self.state.now_ms();
            self.state.last_read_ms.store(now, Ordering::Release);
            self.state.read_any.store(true, Ordering::Release);
            self.first_byte = None;
        } else if r.is_pending()
            && let Some(late) = self.first_byte.as_mut()
            && late.as_mut().poll(cx).is_ready()
        {
            return Poll::Ready(Err(silent_error()));
        }
        r
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Guarded<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.state.shed.load(Ordering::Acquire) {
            return Poll::Ready(Err(shed_error()));
        }
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if self.state.shed.load(Ordering::Acquire) {
            return Poll::Ready(Err(shed_error()));
        }
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// Descriptors held open (on `/dev/null`) so that one can be freed at once when `accept` runs
/// out of them.
pub(crate) struct Reserve {
    held: Vec<std::fs::File>,
    want: usize,
}

impl Reserve {
    /// Holds up to `want` descriptors (fewer where they cannot be opened).
    pub(crate) fn new(want: usize) -> Self {
        let mut r = Self {
            held: Vec::new(),
            want,
        };
        r.refill();
        r
    }

    /// Frees one held descriptor; whether there was one.
    pub(crate) fn release_one(&mut self) -> bool {
        self.held.pop().is_some()
    }

    /// Takes back the descriptors released, as far as the process has some free.
    pub(crate) fn refill(&mut self) {
        while self.held.len() < self.want {
            match std::fs::File::open("/dev/null") {
                Ok(f) => self.held.push(f),
                Err(_) => break,
            }
        }
    }
}

/// Whether `e` is the process or the system running out of file descriptors.
pub(crate) fn out_of_descriptors(e: &io::Error) -> bool {
    // EMFILE and ENFILE on Linux and the BSDs.
    matches!(e.raw_os_error(), Some(24 | 23))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_caps_hold_per_ip_and_release_on_drop() {
        let caps = ConnCaps::with(3, 2);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let s1 = caps.admit(a).unwrap();
        let _s2 = caps.admit(a).unwrap();
        assert!(caps.admit(a).is_none(), "per-IP cap");
        let _s3 = caps.admit(b).unwrap();
        assert!(caps.admit(b).is_none(), "global cap");
        drop(s1);
        assert!(caps.admit(a).is_some());
        assert!(caps.per_ip.get(&a).is_some_and(|n| *n == 1));
        assert_eq!(caps.live.len(), 2, "the dropped slots left the registry");
    }

    #[test]
    fn shedding_takes_silent_connections_first_and_never_busy_ones() {
        let caps = ConnCaps::with(10, 10);
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        let slots: Vec<ConnSlot> = (0..4).map(|_| caps.admit(ip).unwrap()).collect();
        // 0 sent a request long ago, 1 has one in flight, 2 and 3 never sent a byte.
        slots[0].state.read_any.store(true, Ordering::Release);
        let _busy = slots[1].state().busy();
        let flags = |slots: &[ConnSlot]| -> Vec<bool> {
            slots
                .iter()
                .map(|s| s.state.shed.load(Ordering::Acquire))
                .collect()
        };
        assert_eq!(caps.shed_idle(2), 2);
        assert_eq!(flags(&slots), [false, false, true, true]);
        assert_eq!(caps.shed_idle(5), 1);
        assert_eq!(flags(&slots), [true, false, true, true]);
        assert_eq!(caps.shed_idle(5), 0, "only the busy connection is left");
    }

    #[test]
    fn silent_connections_go_in_accept_order() {
        let caps = ConnCaps::with(10, 10);
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        let slots: Vec<ConnSlot> = (0..3).map(|_| caps.admit(ip).unwrap()).collect();
        slots[0].state.read_any.store(true, Ordering::Release);
        assert_eq!(caps.shed_idle(1), 1);
        let flags: Vec<bool> = slots
            .iter()
            .map(|s| s.state.shed.load(Ordering::Acquire))
            .collect();
        // Accepted in the same millisecond: either silent one, never the one that spoke.
        assert!(!flags[0] && flags[1..].iter().filter(|f| **f).count() == 1);
    }

    #[test]
    fn reserve_releases_and_refills() {
        let mut r = Reserve::new(2);
        assert!(r.release_one() && r.release_one());
        assert!(!r.release_one());
        r.refill();
        assert!(r.release_one());
    }

    #[test]
    fn descriptor_exhaustion_is_recognised() {
        assert!(out_of_descriptors(&io::Error::from_raw_os_error(24)));
        assert!(!out_of_descriptors(&io::Error::from_raw_os_error(104)));
    }
}
