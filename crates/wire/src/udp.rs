//! The UDP socket under every QUIC endpoint: the runtime's own socket, with GSO batches kept
//! within what the kernel sends in one call.
//!
//! quinn hands the socket batches of up to 10 equal-size packets (one `sendmsg` with UDP
//! segmentation offload), but Linux refuses a batch whose payload passes 64 KiB: with packets
//! above 6 553 bytes every full batch fails. [`CappedSegments`] remembers the largest packet it
//! has been asked to send — with path-MTU discovery, the path's packet size — and offers quinn
//! only as many segments per batch as fit in 64 KiB at that size. At quinn's 1 200–1 452-byte
//! packets that is still 10; once discovery has grown packets to tens of KB (loopback), one.

use quinn::udp::{RecvMeta, Transmit};
use quinn::{AsyncUdpSocket, UdpPoller};
use std::io::{self, IoSliceMut};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};

/// Payload the kernel sends in one segmented batch (`UDP_GSO`: the whole batch is one IP
/// datagram of at most 65 535 bytes, less the IPv6 and UDP headers).
pub(crate) const GSO_BATCH_BYTES: usize = 65_535 - 40 - 8;

/// A runtime socket whose batches stay within [`GSO_BATCH_BYTES`].
#[derive(Debug)]
pub(crate) struct CappedSegments {
    inner: Arc<dyn AsyncUdpSocket>,
    /// The largest packet sent so far, bytes (quinn's initial 1 200 until one is sent).
    largest: AtomicUsize,
}

impl CappedSegments {
    /// Wraps `inner`.
    pub(crate) fn new(inner: Arc<dyn AsyncUdpSocket>) -> Self {
        Self {
            inner,
            largest: AtomicUsize::new(1200),
        }
    }
}

/// Segments of `packet` bytes that fit in one batch (at least one).
pub(crate) fn segments_for(packet: usize) -> usize {
    (GSO_BATCH_BYTES / packet.max(1)).max(1)
}

impl AsyncUdpSocket for CappedSegments {
    fn create_io_poller(self: Arc<Self>) -> Pin<Box<dyn UdpPoller>> {
        self.inner.clone().create_io_poller()
    }

    fn try_send(&self, transmit: &Transmit) -> io::Result<()> {
        let packet = transmit.segment_size.unwrap_or(transmit.contents.len());
        self.largest.fetch_max(packet, Ordering::Relaxed);
        self.inner.try_send(transmit)
    }

    fn poll_recv(
        &self,
        cx: &mut Context,
        bufs: &mut [IoSliceMut<'_>],
        meta: &mut [RecvMeta],
    ) -> Poll<io::Result<usize>> {
        self.inner.poll_recv(cx, bufs, meta)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    fn max_transmit_segments(&self) -> usize {
        self.inner
            .max_transmit_segments()
            .min(segments_for(self.largest.load(Ordering::Relaxed)))
    }

    fn max_receive_segments(&self) -> usize {
        self.inner.max_receive_segments()
    }

    fn may_fragment(&self) -> bool {
        self.inner.may_fragment()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_stay_within_what_the_kernel_sends_at_once() {
        assert_eq!(segments_for(1200), 54);
        assert_eq!(segments_for(1452), 45);
        assert_eq!(segments_for(6000), 10);
        assert_eq!(segments_for(9000), 7);
        assert_eq!(segments_for(32_000), 2);
        assert_eq!(segments_for(60_000), 1);
        assert_eq!(segments_for(0), GSO_BATCH_BYTES);
        for p in [1200, 1452, 6000, 9000, 32_000, 60_000, 65_000] {
            assert!(segments_for(p) * p <= GSO_BATCH_BYTES, "{p}");
        }
    }
}
