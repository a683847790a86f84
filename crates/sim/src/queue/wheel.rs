//! The near-future part of the event list: a ring of buckets, each an unordered singly linked
//! list threaded through one node vector, with a bitmap of the non-empty buckets. Everything
//! lives in four flat vectors, so cloning it (forking a run) is a few copies, not one
//! allocation per bucket.

use super::Event;

/// End of a list.
const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Node {
    event: Event,
    next: u32,
}

/// `slots` buckets (a power of two) of unordered events.
#[derive(Debug, Clone)]
pub(super) struct Wheel {
    /// First node of each bucket's list, or `NIL`.
    heads: Vec<u32>,
    /// One bit per bucket: set when its list is not empty.
    occupied: Vec<u64>,
    nodes: Vec<Node>,
    /// First free node, or `NIL` (free nodes are linked through `next`).
    free: u32,
}

impl Wheel {
    /// An empty wheel of `slots` buckets (a power of two, ≥ 64).
    pub(super) fn new(slots: usize) -> Self {
        assert!(
            slots.is_power_of_two() && slots >= 64,
            "bad wheel size {slots}"
        );
        Self {
            heads: vec![NIL; slots],
            occupied: vec![0; slots / 64],
            nodes: Vec::new(),
            free: NIL,
        }
    }

    /// Number of buckets.
    #[inline]
    pub(super) fn slots(&self) -> usize {
        self.heads.len()
    }

    /// Adds `event` to bucket `slot`.
    #[inline]
    pub(super) fn push(&mut self, slot: usize, event: Event) {
        let next = self.heads[slot];
        let node = Node { event, next };
        let i = if self.free == NIL {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        } else {
            let i = self.free;
            self.free = self.nodes[i as usize].next;
            self.nodes[i as usize] = node;
            i
        };
        self.heads[slot] = i;
        self.occupied[slot / 64] |= 1 << (slot % 64);
    }

    /// Appends every event of bucket `slot` to `out`, in push order, and empties the bucket.
    #[inline]
    pub(super) fn take(&mut self, slot: usize, out: &mut Vec<Event>) {
        let from = out.len();
        let mut i = std::mem::replace(&mut self.heads[slot], NIL);
        self.occupied[slot / 64] &= !(1 << (slot % 64));
        while i != NIL {
            let node = &mut self.nodes[i as usize];
            out.push(node.event);
            let next = std::mem::replace(&mut node.next, self.free);
            self.free = i;
            i = next;
        }
        // The list runs from the latest push to the earliest.
        out[from..].reverse();
    }

    /// The distance d in `1..slots` of the first non-empty bucket after `slot` going round the
    /// ring (bucket `(slot + d) mod slots`), or `None` when every bucket is empty. Bucket `slot`
    /// itself must be empty.
    pub(super) fn next_occupied(&self, slot: usize) -> Option<usize> {
        let n = self.slots();
        debug_assert_eq!(self.heads[slot], NIL, "the current bucket is drained");
        let words = self.occupied.len();
        let start = (slot + 1) % n;
        // The first word, from `start` on; then whole words round the ring; then the part of
        // the first word before `start` (bits before `slot + 1`, `slot`'s own bit excluded).
        let w0 = start / 64;
        let first = self.occupied[w0] & (u64::MAX << (start % 64));
        if first != 0 {
            let at = w0 * 64 + first.trailing_zeros() as usize;
            return Some((at + n - slot) % n);
        }
        for k in 1..=words {
            let w = (w0 + k) % words;
            let mut bits = self.occupied[w];
            if k == words {
                bits &= !(u64::MAX << (start % 64));
            }
            if bits != 0 {
                let at = w * 64 + bits.trailing_zeros() as usize;
                return Some((at + n - slot) % n);
            }
        }
        None
    }
}
