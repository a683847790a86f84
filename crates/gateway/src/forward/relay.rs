//! What travels back from a worker to a client through the gateway: a query's answer
//! ([`Relayed`]; the query as it leaves is the upstream layer's
//! [`Outgoing`](crate::upstream::Outgoing)), the times its mitigation acts at
//! ([`query_times`]), plus the precise sleep that injects network delays in sim-to-live mode.
//! Forwarding and hedging share these.

pub(crate) use crate::upstream::Wire;
use bytes::Bytes;
use continuum_core::mitigation::Mitigation;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A query's answer, ready to relay.
pub(crate) struct Relayed {
    /// Response body, in the query's wire form ([`Wire`]).
    pub(crate) body: Bytes,
    /// `Inference-Header-Content-Length` when the output is binary.
    pub(crate) header_len: Option<usize>,
    /// Time of the worker call.
    pub(crate) upstream: Duration,
    /// `success` or `failure`.
    pub(crate) outcome: &'static str,
    /// Variant that served it.
    pub(crate) variant: Arc<str>,
    /// Cluster that served it.
    pub(crate) cluster: Arc<str>,
}

/// How long before its receipt at the gateway a query was emitted, ms: the radio uplink its
/// stream declared, δ_i + t_i (`access_ms`, `tx_ms`; docs/model.md §7.1 — the scheduler sits at
/// the antenna, so the network to the worker comes after the receipt). In sim-to-live mode
/// (`inject_delays`) the gateway sleeps the whole uplink itself after the receipt, which is
/// then the emission: 0.
pub(crate) fn age_at_receipt_ms(inject_delays: bool, access_ms: f64, tx_ms: f64) -> f64 {
    if inject_delays {
        0.0
    } else {
        (access_ms + tx_ms).max(0.0)
    }
}

/// When a query's mitigation acts, ms from its receipt at the gateway, timed from its emission
/// as in the simulator (docs/model.md §12).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct QueryTimes {
    /// When it is due: emission + D^i (its `max_delay_ms`).
    pub(crate) due_ms: f64,
    /// When it is reissued if still unanswered: emission + r · D^i (`reissue@r` only).
    pub(crate) reissue_at_ms: Option<f64>,
    /// The latest answer its worker's admission accepts: emission + r · D^i under
    /// `discard@r`, the deadline otherwise.
    pub(crate) answer_limit_ms: f64,
}

/// The times of a query of deadline `max_delay_ms` under `m`, emitted `age_ms` before its
/// receipt ([`age_at_receipt_ms`]): the core's [`Mitigation::reissue_at_ms`] and
/// [`Mitigation::answer_limit_ms`] with the emission at −`age_ms`.
pub(crate) fn query_times(m: &Mitigation, max_delay_ms: f64, age_ms: f64) -> QueryTimes {
    let t_emit = -age_ms;
    let due_ms = t_emit + max_delay_ms;
    QueryTimes {
        due_ms,
        reissue_at_ms: m.reissue_at_ms(t_emit, due_ms),
        answer_limit_ms: m.answer_limit_ms(t_emit, due_ms),
    }
}

/// What an injected delay waits by yielding at its end. assumption: 0.3 ms, above a thread's
/// usual wake-up latency (tens of µs) with room for a busy machine.
const FINE: Duration = Duration::from_micros(300);

/// Sleeps `ms` (if positive) precisely; returns the time actually slept. tokio's timer has a
/// 1 ms granularity and fires up to a tick late, which would add 1–2 ms to every injected
/// delay; so the delay is slept on a blocking thread (a thread's sleep ends within tens of µs)
/// up to its last [`FINE`], which is waited by yielding (only in sim-to-live mode). Yielding
/// through the last 2 ms instead, as before, kept the runtime's threads busy whenever a few
/// dozen queries were in their delays at once (four gateways at 230 qps on 2 cores).
pub(crate) async fn sleep_ms(ms: f64) -> Duration {
    if ms <= 0.0 {
        return Duration::ZERO;
    }
    let t = Instant::now();
    let target = t + Duration::from_secs_f64(ms / 1e3);
    if let Some(early) = target.checked_sub(FINE).filter(|e| *e > t) {
        let slept = tokio::task::spawn_blocking(move || {
            std::thread::sleep(early.saturating_duration_since(Instant::now()));
        })
        .await;
        if slept.is_err() {
            // The blocking pool is shutting down: the runtime's timer still waits.
            tokio::time::sleep_until(early.into()).await;
        }
    }
    while Instant::now() < target {
        tokio::task::yield_now().await;
    }
    t.elapsed()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream declaring δ = 2 ms and t = 3 ms, deadline 100 ms: its queries reach the gateway
    /// 5 ms after emission, so `reissue@0.8` fires 80 − 5 = 75 ms after the receipt and
    /// `discard@0.9` gives the worker until 90 − 5 = 85 ms; with no mitigation the limit is the
    /// deadline, 95 ms after the receipt. In sim-to-live mode the receipt is the emission.
    #[test]
    fn mitigation_times_run_from_the_emission() {
        let age = age_at_receipt_ms(false, 2.0, 3.0);
        assert_eq!(age, 5.0);
        let r = query_times(&Mitigation::Reissue { ratio: 0.8 }, 100.0, age);
        assert_eq!(
            (r.reissue_at_ms, r.answer_limit_ms, r.due_ms),
            (Some(75.0), 95.0, 95.0)
        );
        let d = query_times(&Mitigation::Discard { ratio: 0.9 }, 100.0, age);
        assert_eq!((d.reissue_at_ms, d.answer_limit_ms), (None, 85.0));
        let n = query_times(&Mitigation::None, 100.0, age);
        assert_eq!((n.reissue_at_ms, n.answer_limit_ms), (None, 95.0));
        let live = age_at_receipt_ms(true, 2.0, 3.0);
        assert_eq!(live, 0.0);
        let r = query_times(&Mitigation::Reissue { ratio: 0.8 }, 100.0, live);
        assert_eq!((r.reissue_at_ms, r.answer_limit_ms), (Some(80.0), 100.0));
    }
}
