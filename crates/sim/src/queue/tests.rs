use super::*;
use continuum_core::rng::{Purpose, stream_rng};
use rand::Rng;
use std::collections::BTreeSet;

fn drain(q: &mut EventQueue) -> Vec<(f64, Kind, u32, u32)> {
    std::iter::from_fn(|| q.pop())
        .map(|e| (e.time(), e.kind(), e.a(), e.b()))
        .collect()
}

#[test]
fn pops_in_time_order() {
    let mut q = EventQueue::default();
    q.push(5.0, Kind::Emit, 1, 0);
    q.push(1.5, Kind::Arrive, 2, 0);
    q.push(6.0, Kind::BatchDone, 3, 7);
    q.push(0.0, Kind::Publish, 0, 0);
    q.push(90_000.0, Kind::StreamEnd, 4, 0);
    assert_eq!(
        drain(&mut q),
        vec![
            (0.0, Kind::Publish, 0, 0),
            (1.5, Kind::Arrive, 2, 0),
            (5.0, Kind::Emit, 1, 0),
            (6.0, Kind::BatchDone, 3, 7),
            (90_000.0, Kind::StreamEnd, 4, 0),
        ]
    );
    assert!(q.is_empty());
}

#[test]
fn events_at_the_same_time_come_out_in_push_order() {
    // Ties in the bucket being drained, in a later bucket and beyond the ring.
    for t in [0.0, 3.0, 10_000.0] {
        let mut q = EventQueue::with_buckets(1.0, 64);
        for a in 0..5 {
            q.push(t, Kind::Emit, a, 0);
        }
        let order: Vec<u32> = drain(&mut q).iter().map(|e| e.2).collect();
        assert_eq!(order, vec![0, 1, 2, 3, 4], "ties at {t}");
    }
}

/// Interleaved pushes and pops against a sorted set of (time, sequence): the queue must give
/// exactly the same sequence, for bucket widths from much finer to much coarser than the gaps,
/// with events in the current bucket, in the ring and beyond it, and with exact ties.
#[test]
fn agrees_with_a_sorted_set_under_interleaved_pushes_and_pops() {
    for (width, slots, seed) in [
        (1.0, 64, 1),
        (0.01, 64, 2),
        (50.0, 128, 3),
        (1.0 / 256.0, 1024, 4),
    ] {
        let mut rng = stream_rng(seed, Purpose::Other, 0, 0);
        let mut q = EventQueue::with_buckets(width, slots);
        let mut reference = BTreeSet::new();
        let mut now = 0.0f64;
        let mut seq = 0u32;
        for step in 0..40_000 {
            if rng.random::<f64>() < 0.55 {
                let ahead = match rng.random_range(0..10) {
                    0 => 0.0,
                    1 => rng.random::<f64>() * 10_000.0,
                    2 => (rng.random_range(0..4) as f64) * 0.5,
                    _ => rng.random::<f64>() * 100.0,
                };
                let t = now + ahead;
                q.push(t, Kind::Arrive, seq, 0);
                reference.insert((t.to_bits(), seq));
                seq += 1;
            } else {
                let want = reference.pop_first();
                let got = q.pop().map(|e| (e.time().to_bits(), e.a()));
                assert_eq!(got, want, "width {width}, step {step}");
                if let Some((t, _)) = want {
                    now = f64::from_bits(t);
                }
            }
            if step % 1000 == 0 {
                // A clone continues exactly like the original.
                let mut fork = q.clone();
                let mut orig = q.clone();
                assert_eq!(drain(&mut fork), drain(&mut orig));
            }
            assert_eq!(q.len(), reference.len());
        }
        while let Some(want) = reference.pop_first() {
            assert_eq!(q.pop().map(|e| (e.time().to_bits(), e.a())), Some(want));
        }
        assert!(q.pop().is_none() && q.is_empty());
    }
}

#[test]
fn peek_does_not_consume() {
    let mut q = EventQueue::with_buckets(1.0, 64);
    assert_eq!(q.peek_time(), None);
    q.push(700.0, Kind::Publish, 0, 0);
    q.push(2.0, Kind::Emit, 9, 0);
    assert_eq!(q.peek_time(), Some(2.0));
    assert_eq!(q.peek_time(), Some(2.0));
    assert_eq!(q.pop().map(|e| e.a()), Some(9));
    // Pushed after the far event was seen: still comes out before it.
    q.push(600.0, Kind::Emit, 1, 0);
    assert_eq!(q.peek_time(), Some(600.0));
    assert_eq!(q.len(), 2);
}

#[test]
fn width_follows_the_event_rate() {
    let slow = EventQueue::for_rate(0.001);
    let fast = EventQueue::for_rate(20.0);
    let huge = EventQueue::for_rate(1e7);
    assert_eq!(slow.per_ms, 1.0 / MAX_WIDTH_MS);
    assert_eq!(fast.per_ms, 2.0);
    assert_eq!(fast.wheel.slots(), 1024);
    assert_eq!(huge.per_ms, 1.0 / MIN_WIDTH_MS);
    assert_eq!(huge.wheel.slots(), MAX_SLOTS);
    assert_eq!(EventQueue::for_rate(f64::NAN).per_ms, 0.125);
}
