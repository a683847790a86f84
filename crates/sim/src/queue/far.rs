//! The far-future part of the event list: a 4-ary min-heap on (time, push sequence), holding
//! the few events scheduled beyond the calendar's span (stream ends, client arrivals, long
//! batches). Events at the same time come out in push order.

use super::Event;

/// Children per node: a 4-ary heap is shallower than a binary one and its children share a
/// cache line.
const ARITY: usize = 4;

/// An event with its push sequence number.
#[derive(Debug, Clone, Copy)]
struct Entry {
    event: Event,
    seq: u64,
}

impl Entry {
    /// Time, then push sequence.
    #[inline]
    fn order(&self) -> (u64, u64) {
        (self.event.key, self.seq)
    }
}

/// A min-heap of events on (time, push sequence).
#[derive(Debug, Clone, Default)]
pub(super) struct FarHeap {
    heap: Vec<Entry>,
    /// Sequence number of the next push.
    seq: u64,
}

impl FarHeap {
    /// Adds `event`.
    pub(super) fn push(&mut self, event: Event) {
        let e = Entry {
            event,
            seq: self.seq,
        };
        self.seq += 1;
        let key = e.order();
        let mut i = self.heap.len();
        self.heap.push(e);
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.heap[parent].order() <= key {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = e;
    }

    /// The earliest event, if any.
    #[inline]
    pub(super) fn peek(&self) -> Option<&Event> {
        self.heap.first().map(|e| &e.event)
    }

    /// Removes and returns the earliest event.
    pub(super) fn pop(&mut self) -> Option<Event> {
        let last = self.heap.pop()?;
        let n = self.heap.len();
        if n == 0 {
            return Some(last.event);
        }
        let top = self.heap[0].event;
        let key = last.order();
        let mut i = 0;
        loop {
            let first = i * ARITY + 1;
            if first >= n {
                break;
            }
            let end = (first + ARITY).min(n);
            let mut best = first;
            for c in first + 1..end {
                if self.heap[c].order() < self.heap[best].order() {
                    best = c;
                }
            }
            if self.heap[best].order() >= key {
                break;
            }
            self.heap[i] = self.heap[best];
            i = best;
        }
        self.heap[i] = last;
        Some(top)
    }
}
