//! The worker call of one query (through the upstream layer), and its hedge under `reissue@r`
//! ([`continuum_core::mitigation`]): when the bound worker has not answered by emission + r ×
//! the query's deadline ([`crate::forward::relay::query_times`]), a copy goes to the binding the
//! core picks ([`crate::decide::Decider::hedge_binding`]); the first answer wins and the other
//! call is dropped — its QUIC stream is stopped, its HTTP request abandoned.

use crate::forward::Forwarder;
use crate::forward::relay::{QueryTimes, sleep_ms};
use crate::state::live::Snapshot;
use crate::state::streams::{Binding, Stream};
use crate::upstream::{Answered, Outgoing, UpstreamError};
use std::time::{Duration, Instant};

impl Forwarder<'_> {
    /// Sends `q` to the worker of `b`, which must answer within `deadline_us` (its admission
    /// drops the query otherwise): the upstream layer's [`crate::upstream::Upstream::infer`].
    pub(crate) async fn call(
        &self,
        q: &Outgoing<'_>,
        b: &Binding,
        deadline_us: u32,
    ) -> Result<Answered, UpstreamError> {
        b.upstream.infer(q, &b.variant, deadline_us).await
    }

    /// Calls the worker of `b` and, if it has not answered by `times.reissue_at_ms` after the
    /// receipt `t0`, a second worker too, with the time left before `times.due_ms`; the first
    /// success wins (a failure waits for the other call). Returns the result and, when the
    /// copy's call gave it, the copy's binding.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn hedged(
        &self,
        snap: &Snapshot,
        stream: &Stream,
        q: &Outgoing<'_>,
        b: &Binding,
        t0: Instant,
        times: QueryTimes,
        down_ms: f64,
        deadline_us: u32,
    ) -> (Result<Answered, UpstreamError>, Option<Binding>) {
        let Some(at_ms) = times.reissue_at_ms else {
            return (self.call(q, b, deadline_us).await, None);
        };
        let primary = self.call(q, b, deadline_us);
        tokio::pin!(primary);
        let at = t0 + Duration::from_secs_f64(at_ms.max(0.0) / 1e3);
        tokio::select! {
            r = &mut primary => return (r, None),
            _ = tokio::time::sleep_until(at.into()) => {}
        }
        let remaining_ms = times.due_ms - t0.elapsed().as_secs_f64() * 1e3;
        let Some(b2) = self.decide().hedge_binding(snap, stream, b, remaining_ms) else {
            self.state.metrics().mitigation("reissue_no_target");
            return (primary.await, None);
        };
        let upstream = b2.upstream.clone();
        let Ok(_permit) = upstream.permits.try_acquire() else {
            self.state.metrics().mitigation("reissue_no_target");
            return (primary.await, None);
        };
        self.state.metrics().mitigation("reissued");
        let inject = snap.plan.cfg.inject_delays;
        let copy_deadline_us =
            ((remaining_ms - down_ms) * 1e3).clamp(1.0, f64::from(u32::MAX)) as u32;
        let copy = async {
            // The copy leaves from here: the network to its worker, no radio uplink again.
            if inject {
                sleep_ms(self.net_sample(stream, &b2)).await;
            }
            self.call(q, &b2, copy_deadline_us).await
        };
        tokio::pin!(copy);
        // The loser is dropped on return: its QUIC stream is stopped, its HTTP request
        // abandoned.
        tokio::select! {
            r = &mut primary => match r {
                Ok(a) => {
                    self.state.metrics().mitigation("cancelled");
                    (Ok(a), None)
                }
                Err(_) => (copy.await, Some(b2.clone())),
            },
            r = &mut copy => match r {
                Ok(a) => {
                    self.state.metrics().mitigation("reissue_won");
                    self.state.metrics().mitigation("cancelled");
                    (Ok(a), Some(b2.clone()))
                }
                Err(_) => (primary.await, None),
            },
        }
    }
}
