//! The future-event list: a binary min-heap of compact events ordered by (time, insertion
//! sequence), so simultaneous events run in the order they were scheduled — deterministic.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What an event does; the payload says to whom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// A candidate client arrival at scheduler `a` (thinned Poisson process).
    ClientArrival = 0,
    /// Stream `a` emits a query.
    Emit = 1,
    /// Query `a` reaches its worker.
    Arrive = 2,
    /// Server `b` of worker `a` finishes its batch.
    BatchDone = 3,
    /// Workers' loads are published to the schedulers.
    Publish = 4,
}

/// One scheduled event: 24 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// `f64::to_bits` of the time in ms: for non-negative times the bit patterns order like the
    /// numbers, so comparing integers is comparing times.
    key: u64,
    seq: u64,
    payload: u64,
}

impl Event {
    /// Time of the event, ms.
    #[inline]
    pub fn time(&self) -> f64 {
        f64::from_bits(self.key)
    }
    /// Kind of the event.
    #[inline]
    pub fn kind(&self) -> Kind {
        match self.payload >> 56 {
            0 => Kind::ClientArrival,
            1 => Kind::Emit,
            2 => Kind::Arrive,
            3 => Kind::BatchDone,
            _ => Kind::Publish,
        }
    }
    /// First operand (scheduler, stream, query or worker index).
    #[inline]
    pub fn a(&self) -> u32 {
        self.payload as u32
    }
    /// Second operand (server index for [`Kind::BatchDone`]).
    #[inline]
    pub fn b(&self) -> u32 {
        ((self.payload >> 32) & 0x00FF_FFFF) as u32
    }
}

impl Ord for Event {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap.
        other.key.cmp(&self.key).then(other.seq.cmp(&self.seq))
    }
}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The pending events.
#[derive(Debug, Clone, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Event>,
    seq: u64,
}

impl EventQueue {
    /// Schedules an event at `time_ms` (≥ 0).
    #[inline]
    pub fn push(&mut self, time_ms: f64, kind: Kind, a: u32, b: u32) {
        debug_assert!(
            time_ms >= 0.0 && time_ms.is_finite(),
            "bad event time {time_ms}"
        );
        debug_assert!(b < (1 << 24));
        self.seq += 1;
        self.heap.push(Event {
            key: time_ms.to_bits(),
            seq: self.seq,
            payload: ((kind as u64) << 56) | (u64::from(b) << 32) | u64::from(a),
        });
    }

    /// The time of the next event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<f64> {
        self.heap.peek().map(Event::time)
    }

    /// Removes and returns the next event.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        self.heap.pop()
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut q = EventQueue::default();
        q.push(5.0, Kind::Emit, 1, 0);
        q.push(1.5, Kind::Arrive, 2, 0);
        q.push(5.0, Kind::BatchDone, 3, 7);
        q.push(0.0, Kind::Publish, 0, 0);
        let order: Vec<_> = std::iter::from_fn(|| q.pop())
            .map(|e| (e.time(), e.kind(), e.a(), e.b()))
            .collect();
        assert_eq!(
            order,
            vec![
                (0.0, Kind::Publish, 0, 0),
                (1.5, Kind::Arrive, 2, 0),
                (5.0, Kind::Emit, 1, 0),
                (5.0, Kind::BatchDone, 3, 7)
            ]
        );
    }
}
