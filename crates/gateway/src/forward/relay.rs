//! What travels between a client and a worker through the gateway: a query as it leaves
//! ([`Outgoing`], in its [`Wire`] form) and its answer ([`Relayed`]), the times its mitigation
//! acts at ([`query_times`]), plus the precise sleep that injects network delays in
//! sim-to-live mode. Forwarding and hedging share these.

use crate::plan::TaskSpec;
use crate::state::streams::Stream;
use bytes::Bytes;
use continuum_core::mitigation::Mitigation;
use continuum_wire::oip::ParsedInfer;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// An answer body in the query's wire form and, for OIP, its
/// `Inference-Header-Content-Length`.
pub(crate) type Answered = (Bytes, Option<usize>);

/// One query as it leaves for a worker.
pub(crate) struct Outgoing<'a> {
    /// Its stream.
    pub stream: &'a Stream,
    /// The stream's task, if still served.
    pub task: Option<&'a TaskSpec>,
    /// The parsed query (needed for QUIC workers).
    pub parsed: Option<&'a ParsedInfer>,
    /// The body as it came.
    pub body: &'a Bytes,
    /// The body's wire form, which its answer takes too.
    pub wire: Wire,
}

/// The wire form of a query's body, which is also the form of its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    /// An OIP v2 body (HTTP and gRPC clients), with its `Inference-Header-Content-Length`
    /// when its tensor follows as binary data.
    Oip(Option<usize>),
    /// A QUIC INFER frame ([`frame`]), its tensor's location in the parsed query's `raw`;
    /// the answer is a response frame.
    Frame,
}

/// A query's answer, ready to relay.
pub struct Relayed {
    /// Response body, in the query's wire form (`Wire`).
    pub body: Bytes,
    /// `Inference-Header-Content-Length` when the output is binary.
    pub header_len: Option<usize>,
    /// Time of the worker call.
    pub upstream: Duration,
    /// `success` or `failure`.
    pub outcome: &'static str,
    /// Variant that served it.
    pub variant: Arc<str>,
    /// Cluster that served it.
    pub cluster: Arc<str>,
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
    pub due_ms: f64,
    /// When it is reissued if still unanswered: emission + r · D^i (`reissue@r` only).
    pub reissue_at_ms: Option<f64>,
    /// The latest answer its worker's admission accepts: emission + r · D^i under
    /// `discard@r`, the deadline otherwise.
    pub answer_limit_ms: f64,
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

/// Sleeps `ms` (if positive) precisely; returns the time actually slept. tokio's timer has a
/// 1 ms granularity and fires up to a tick late, which would add 1–2 ms to every injected
/// delay: the last 2 ms are waited by yielding instead (only in sim-to-live mode).
pub(crate) async fn sleep_ms(ms: f64) -> Duration {
    if ms <= 0.0 {
        return Duration::ZERO;
    }
    let t = Instant::now();
    let target = t + Duration::from_secs_f64(ms / 1e3);
    let coarse = Duration::from_millis(2);
    if let Some(early) = target.checked_sub(coarse).filter(|e| *e > t) {
        tokio::time::sleep_until(early.into()).await;
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
