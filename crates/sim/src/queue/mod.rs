//! The future-event list: a calendar queue. Events come out in time order, and events at the
//! same time in the order they were pushed (FIFO), whatever the structure holding them — runs
//! are reproducible, forks (clones) continue identically, and the bucket width never changes a
//! result.
//!
//! Time is cut into buckets of equal width. Events of the bucket being drained sit sorted in
//! a small vector; events of the next `slots − 1` buckets sit unordered, in push order, in a
//! ring of buckets ([`wheel`]); later ones in a 4-ary heap ([`far`]). Opening a bucket moves
//! the far events that fall into it, then its own, into the vector and sorts it by time with a
//! stable sort. Every far push for a bucket happens before every ring push for it (the ring's
//! window only moves forward) and pushes into the bucket being drained come last, so the
//! stable sort leaves events at the same time in push order. With the bucket width set from
//! the expected event rate (a handful of events per bucket), a push and a pop each cost a few
//! nanoseconds, against a heap's log-depth of cache misses and mispredicted branches.

mod far;
mod wheel;

use far::FarHeap;
use wheel::Wheel;

/// What an event does; the payload says to whom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kind {
    /// A candidate client arrival at scheduler `a` (thinned Poisson process).
    ClientArrival = 0,
    /// Stream `a` emits a query (only when the previous query's arrival comes after it; see
    /// `Simulation::emit`).
    Emit = 1,
    /// Query `a` reaches its worker.
    Arrive = 2,
    /// Server `b` of worker `a` finishes its batch.
    BatchDone = 3,
    /// Workers' loads are published to the schedulers.
    Publish = 4,
    /// The stream of serial `a` reaches its end (its worker loses one open stream).
    StreamEnd = 5,
    /// Query `a` reaches its reissue time (mitigation `reissue`).
    Reissue = 6,
    /// The answer of query `a`, one of two copies of a reissued query, reaches the client.
    Answer = 7,
    /// `b` replicas of worker `a` finish loading (a deployment change).
    Load = 8,
    /// Worker `a`, withdrawn by a deployment change, unloads its last idle replica.
    Retire = 9,
}

/// One scheduled event: 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Event {
    /// `f64::to_bits` of the time in ms: for non-negative times the bit patterns order like the
    /// numbers, so comparing integers is comparing times.
    key: u64,
    payload: u64,
}

impl Event {
    /// Time of the event, ms.
    #[inline]
    pub(crate) fn time(&self) -> f64 {
        f64::from_bits(self.key)
    }
    /// Kind of the event.
    #[inline]
    pub(crate) fn kind(&self) -> Kind {
        match self.payload >> 56 {
            0 => Kind::ClientArrival,
            1 => Kind::Emit,
            2 => Kind::Arrive,
            3 => Kind::BatchDone,
            4 => Kind::Publish,
            5 => Kind::StreamEnd,
            6 => Kind::Reissue,
            7 => Kind::Answer,
            8 => Kind::Load,
            _ => Kind::Retire,
        }
    }
    /// First operand (scheduler, stream, query or worker index).
    #[inline]
    pub(crate) fn a(&self) -> u32 {
        self.payload as u32
    }
    /// Second operand (server index for [`Kind::BatchDone`]).
    #[inline]
    pub(crate) fn b(&self) -> u32 {
        ((self.payload >> 32) & 0x00FF_FFFF) as u32
    }
}

/// Events per bucket the width is chosen for: enough to amortise opening a bucket, few enough
/// that sorting one is a short insertion sort.
const EVENTS_PER_BUCKET: f64 = 8.0;
/// Time the ring of buckets should span, ms: the processing, network and emission delays of
/// inference queries are tens to hundreds of ms, so nearly every event lands in the ring.
const SPAN_MS: f64 = 512.0;
/// Bounds of the bucket width, ms (powers of two: the bucket of a time is then exact).
const MIN_WIDTH_MS: f64 = 1.0 / 256.0;
const MAX_WIDTH_MS: f64 = 64.0;
/// Bounds of the number of buckets.
const MIN_SLOTS: usize = 64;
const MAX_SLOTS: usize = 1 << 16;

/// The pending events of a simulation.
#[derive(Debug, Clone)]
pub(crate) struct EventQueue {
    /// Buckets per ms (the inverse of the width).
    per_ms: f64,
    /// Absolute index of the bucket being drained; every earlier bucket is empty.
    cursor: u64,
    /// The events of bucket `cursor` in order; those before `head` are gone.
    current: Vec<Event>,
    /// Index in `current` of the next event.
    head: usize,
    /// Buckets `cursor + 1 .. cursor + slots`, at `bucket mod slots`.
    wheel: Wheel,
    /// Events of later buckets.
    far: FarHeap,
    /// Events held in all three.
    len: usize,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::for_rate(10.0)
    }
}

impl EventQueue {
    /// An empty queue sized for about `events_per_ms` events per simulated ms.
    pub(crate) fn for_rate(events_per_ms: f64) -> Self {
        let rate = if events_per_ms > 0.0 && events_per_ms.is_finite() {
            events_per_ms
        } else {
            1.0
        };
        let width = (EVENTS_PER_BUCKET / rate)
            .log2()
            .round()
            .exp2()
            .clamp(MIN_WIDTH_MS, MAX_WIDTH_MS);
        let slots = ((SPAN_MS / width) as usize)
            .next_power_of_two()
            .clamp(MIN_SLOTS, MAX_SLOTS);
        Self::with_buckets(width, slots)
    }

    /// An empty queue of `slots` buckets (a power of two, ≥ 64) of `width_ms` each.
    pub(crate) fn with_buckets(width_ms: f64, slots: usize) -> Self {
        assert!(
            width_ms > 0.0 && width_ms.is_finite(),
            "bad width {width_ms}"
        );
        Self {
            per_ms: 1.0 / width_ms,
            cursor: 0,
            current: Vec::new(),
            head: 0,
            wheel: Wheel::new(slots),
            far: FarHeap::default(),
            len: 0,
        }
    }

    /// The bucket of time `t` (monotone in `t`; through `i64`, whose conversion from `f64` is
    /// a few instructions shorter than `u64`'s; times are never negative).
    #[inline]
    fn bucket(&self, t: f64) -> u64 {
        (t * self.per_ms) as i64 as u64
    }

    #[inline]
    fn slot(&self, bucket: u64) -> usize {
        (bucket as usize) & (self.wheel.slots() - 1)
    }

    /// Schedules an event at `time_ms` (≥ 0, and no earlier than the last event popped).
    #[inline]
    pub(crate) fn push(&mut self, time_ms: f64, kind: Kind, a: u32, b: u32) {
        debug_assert!(
            time_ms >= 0.0 && time_ms.is_finite(),
            "bad event time {time_ms}"
        );
        debug_assert!(b < (1 << 24));
        let e = Event {
            key: time_ms.to_bits(),
            payload: ((kind as u64) << 56) | (u64::from(b) << 32) | u64::from(a),
        };
        self.len += 1;
        let bucket = self.bucket(time_ms);
        if bucket <= self.cursor {
            // The bucket being drained: after every pending event at the same time or earlier.
            let at = self.head + self.current[self.head..].partition_point(|x| x.key <= e.key);
            self.current.insert(at, e);
        } else if bucket - self.cursor < self.wheel.slots() as u64 {
            let slot = self.slot(bucket);
            self.wheel.push(slot, e);
        } else {
            self.far.push(e);
        }
    }

    /// Makes `current` hold the next bucket's events, if it is drained and any remain.
    #[inline]
    fn refill(&mut self) {
        if self.head < self.current.len() || self.len == 0 {
            return;
        }
        self.current.clear();
        self.head = 0;
        self.open_next_bucket();
    }

    #[cold]
    fn open_next_bucket(&mut self) {
        let near = self
            .wheel
            .next_occupied(self.slot(self.cursor))
            .map(|d| self.cursor + d as u64);
        let far = self.far.peek().map(|e| self.bucket(e.time()));
        let next = match (near, far) {
            (Some(n), Some(f)) => n.min(f),
            (Some(n), None) => n,
            (None, Some(f)) => f,
            (None, None) => unreachable!("len > 0 but no event held"),
        };
        self.cursor = next;
        // Far events first (pushed before any ring event of this bucket), then the ring's, in
        // push order; the stable sort keeps that order among events at the same time.
        while self
            .far
            .peek()
            .is_some_and(|e| self.bucket(e.time()) == next)
        {
            let e = self.far.pop().expect("peeked");
            self.current.push(e);
        }
        if near == Some(next) {
            let slot = self.slot(next);
            self.wheel.take(slot, &mut self.current);
        }
        sort_stable(&mut self.current);
    }

    /// The time of the next event, if any.
    #[cfg(test)]
    pub(crate) fn peek_time(&mut self) -> Option<f64> {
        self.refill();
        self.current.get(self.head).map(Event::time)
    }

    /// Removes and returns the next event if it comes before `t_ms`.
    #[inline]
    pub(crate) fn pop_before(&mut self, t_ms: f64) -> Option<Event> {
        self.refill();
        let e = *self.current.get(self.head)?;
        if e.time() >= t_ms {
            return None;
        }
        self.head += 1;
        self.len -= 1;
        Some(e)
    }

    /// The `k`-th next event (from 0) when it is already in the bucket being drained (a hint
    /// for prefetching; `None` says nothing about later buckets).
    #[inline]
    pub(crate) fn peek_ready(&self, k: usize) -> Option<Event> {
        self.current.get(self.head + k).copied()
    }

    /// Removes and returns the next event.
    #[cfg(test)]
    pub(crate) fn pop(&mut self) -> Option<Event> {
        self.refill();
        let e = *self.current.get(self.head)?;
        self.head += 1;
        self.len -= 1;
        Some(e)
    }

    /// Whether no event is pending.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Events pending.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

/// Sorts a bucket's events by time, keeping push order among equal times: an insertion sort
/// (buckets hold a handful of events), with the library's stable sort for a crowded one.
#[inline]
fn sort_stable(v: &mut [Event]) {
    if v.len() > 32 {
        v.sort_by_key(|e| e.key);
        return;
    }
    for i in 1..v.len() {
        let e = v[i];
        let mut j = i;
        while j > 0 && v[j - 1].key > e.key {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = e;
    }
}

#[cfg(test)]
mod tests;
