//! Several gateways (`--gateway A,B,C`): which gateway each stream opens at ([`Assign`]), and
//! failover. A stream is held by one gateway at a time, its [`Route`]. When that gateway stops
//! answering — the connection is refused or reset, no HTTP answer at all — the stream moves to
//! the next gateway of the list with the same token (the gateways share the stream key, so the
//! next one verifies the token and re-binds the stream: a handover), and the query that found
//! the gateway gone is sent again there if its deadline still allows. A stream that no gateway
//! of the list answers any more is lost. An HTTP answer of any status, or a timeout, is not a
//! reason to move: the gateway is there, and the query is judged on what it said.

use clap::ValueEnum;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use tokio::time::Instant;

/// Which gateway of the list a new stream opens at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Assign {
    /// Client i (in arrival order) opens at gateway i mod n: the load is spread evenly.
    Spread,
    /// Every client opens at the first gateway; the others take streams over only when it
    /// stops answering.
    First,
}

impl Assign {
    /// The gateway client `i` opens at, among `n`.
    pub fn gateway_of(self, i: usize, n: usize) -> usize {
        match self {
            Assign::Spread => i % n.max(1),
            Assign::First => 0,
        }
    }

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Assign::Spread => "spread",
            Assign::First => "first",
        }
    }
}

/// Where one stream is held now, shared by its queries.
pub(super) struct Route {
    current: AtomicUsize,
    n: usize,
    /// When the stream last left a gateway that stopped answering, until the first answer at
    /// the next one (the failover time).
    moved_at: Mutex<Option<Instant>>,
    lost: AtomicBool,
}

/// What became of a move away from a failed gateway.
pub(super) enum Move {
    /// The stream now goes to this gateway (moved by this call or by another query).
    To(usize),
    /// Every gateway of the list has failed this query: the stream is lost (`true` for the
    /// call that lost it, which counts it).
    Lost(bool),
}

impl Route {
    /// A stream held by gateway `first` of `n`.
    pub(super) fn new(first: usize, n: usize) -> Self {
        Self {
            current: AtomicUsize::new(first),
            n,
            moved_at: Mutex::new(None),
            lost: AtomicBool::new(false),
        }
    }

    /// The gateway that holds it now.
    pub(super) fn current(&self) -> usize {
        self.current.load(Ordering::Acquire)
    }

    /// Whether it was lost.
    pub(super) fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    /// Gateway `failed` did not answer a query that has now tried `tried` gateways (this one
    /// included), first failing at `since`. Moves the stream to the next gateway unless
    /// another query already moved it; returns where to go, whether this call made the
    /// handover, or that the stream is lost.
    pub(super) fn failed(&self, failed: usize, tried: usize, since: Instant) -> (Move, bool) {
        if self.is_lost() {
            return (Move::Lost(false), false);
        }
        let next = (failed + 1) % self.n;
        let moved = self
            .current
            .compare_exchange(failed, next, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if moved {
            let mut m = self.moved_at.lock().unwrap_or_else(|e| e.into_inner());
            m.get_or_insert(since);
        }
        if tried >= self.n {
            let first = !self.lost.swap(true, Ordering::AcqRel);
            return (Move::Lost(first), false);
        }
        (Move::To(self.current()), moved && self.n > 1)
    }

    /// A gateway answered a query of the stream: the failover time, if this ends one.
    pub(super) fn answered(&self, now: Instant) -> Option<std::time::Duration> {
        let mut m = self.moved_at.lock().unwrap_or_else(|e| e.into_inner());
        m.take().map(|t| now.saturating_duration_since(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_assigned_round_robin_or_all_to_the_first() {
        let spread: Vec<usize> = (0..5).map(|i| Assign::Spread.gateway_of(i, 3)).collect();
        assert_eq!(spread, [0, 1, 2, 0, 1]);
        assert!((0..5).all(|i| Assign::First.gateway_of(i, 3) == 0));
    }

    /// Two queries find gateway 0 gone: the first moves the stream to 1 (one handover), the
    /// second follows without a second handover; the failover time runs from the first
    /// failure to the first answer, once.
    #[test]
    fn a_failed_gateway_hands_the_stream_to_the_next_once() {
        let r = Route::new(0, 3);
        let t0 = Instant::now();
        let (m, handover) = r.failed(0, 1, t0);
        assert!(matches!(m, Move::To(1)) && handover);
        let (m, handover) = r.failed(0, 1, t0);
        assert!(matches!(m, Move::To(1)) && !handover);
        assert!(r.answered(t0).is_some());
        assert!(r.answered(t0).is_none());
        // Every gateway failed one query: lost, counted by one call only.
        let (m, _) = r.failed(1, 2, t0);
        assert!(matches!(m, Move::To(2)));
        let (m, _) = r.failed(2, 3, t0);
        assert!(matches!(m, Move::Lost(true)));
        assert!(matches!(r.failed(0, 1, t0).0, Move::Lost(false)));
        assert!(r.is_lost());
    }
}
