//! The future-event list: a binary min-heap of compact events ordered by (time, insertion
//! sequence), so simultaneous events run in the order they were scheduled — deterministic.

/// What an event does; the payload says to whom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
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
    /// A stream bound to worker `a` reaches its end.
    StreamEnd = 5,
}

/// One scheduled event: 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// `f64::to_bits` of the time in ms: for non-negative times the bit patterns order like the
    /// numbers, so comparing integers is comparing times.
    key: u64,
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
            4 => Kind::Publish,
            _ => Kind::StreamEnd,
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

/// Children per node of the heap: a 4-ary heap is shallower than a binary one and its
/// children share a cache line.
const ARITY: usize = 4;

/// The pending events, in a 4-ary min-heap on time. Events at the same time come out in an
/// order fixed by the sequence of operations, so runs are reproducible (and forks, which
/// clone the heap, continue identically).
#[derive(Debug, Clone, Default)]
pub struct EventQueue {
    heap: Vec<Event>,
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
        let e = Event {
            key: time_ms.to_bits(),
            payload: ((kind as u64) << 56) | (u64::from(b) << 32) | u64::from(a),
        };
        let mut i = self.heap.len();
        self.heap.push(e);
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.heap[parent].key <= e.key {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = e;
    }

    /// The time of the next event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<f64> {
        self.heap.first().map(Event::time)
    }

    /// Removes and returns the next event.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        let last = self.heap.pop()?;
        let n = self.heap.len();
        if n == 0 {
            return Some(last);
        }
        let top = self.heap[0];
        let mut i = 0;
        loop {
            let first = i * ARITY + 1;
            if first >= n {
                break;
            }
            let end = (first + ARITY).min(n);
            let mut best = first;
            for c in first + 1..end {
                if self.heap[c].key < self.heap[best].key {
                    best = c;
                }
            }
            if self.heap[best].key >= last.key {
                break;
            }
            self.heap[i] = self.heap[best];
            i = best;
        }
        self.heap[i] = last;
        Some(top)
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn pops_in_time_order() {
        let mut q = EventQueue::default();
        q.push(5.0, Kind::Emit, 1, 0);
        q.push(1.5, Kind::Arrive, 2, 0);
        q.push(6.0, Kind::BatchDone, 3, 7);
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
                (6.0, Kind::BatchDone, 3, 7)
            ]
        );
    }

    #[test]
    fn agrees_with_a_sort_under_interleaved_pushes_and_pops() {
        let mut rng = crate::rng::stream_rng(3, crate::rng::Purpose::Other, 0, 0);
        let mut q = EventQueue::default();
        let mut now = 0.0;
        let mut popped = Vec::new();
        let mut pushed = 0;
        for _ in 0..20_000 {
            if rng.random::<f64>() < 0.55 {
                q.push(now + rng.random::<f64>() * 100.0, Kind::Emit, pushed, 0);
                pushed += 1;
            } else if let Some(e) = q.pop() {
                assert!(e.time() >= now);
                now = e.time();
                popped.push(now);
            }
        }
        while let Some(e) = q.pop() {
            assert!(e.time() >= now);
            now = e.time();
            popped.push(now);
        }
        assert_eq!(popped.len(), pushed as usize);
    }
}
