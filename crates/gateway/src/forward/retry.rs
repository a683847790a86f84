//! Retry-on-reset (as Envoy's `retry_on: reset`): a query whose worker dies or resets under it
//! (the connection is lost, the worker says it is shutting down) is re-sent once to the stream's
//! next feasible binding when its deadline still allows, and the stream stays re-bound there.
//! Where it goes is the decide layer's choice. Retries are bounded by the query's own deadline
//! and by the state's `RetryBudget`, so that a dying cluster cannot multiply the load on the
//! rest: over a sliding window, retries may be at most `min_per_s` × window + `budget_ratio` ×
//! the queries received (Finagle's `RetryBudget`).

use crate::forward::Forwarder;
use crate::state::streams::{Binding, Stream};
use crate::upstream::UpstreamError;

impl Forwarder<'_> {
    /// Where a query of `stream` whose worker (of `failed`) died or reset under it with `e` is
    /// re-sent, `remaining_ms` before the latest answer it may take: `None` (counted by reason)
    /// when retries are off, `e` is not a reset, the time is gone, the budget is spent, or no
    /// other worker is feasible in the time left (the decide layer's
    /// [`crate::decide::Decider::retry_binding`]). The failed worker is marked down and the
    /// stream is re-bound to the target.
    pub(crate) fn retry_target(
        &self,
        stream: &Stream,
        failed: &Binding,
        e: &UpstreamError,
        remaining_ms: f64,
    ) -> Option<Binding> {
        let snap = self.state.snapshot();
        let settings = &snap.plan.cfg.retry;
        if !settings.enabled || !e.worker_down() {
            return None;
        }
        // Its streams (this one included) re-bind while it is down.
        failed.upstream.mark_failed(&e.to_string());
        if remaining_ms <= 0.0 {
            self.state.metrics().retry("too_late");
            return None;
        }
        if !self.state.withdraw_retry(settings) {
            self.state.metrics().retry("budget_refused");
            return None;
        }
        let Some(b) = self
            .decide()
            .retry_binding(&snap, stream, failed, remaining_ms)
        else {
            self.state.metrics().retry("no_target");
            return None;
        };
        self.state.metrics().retry("retried");
        self.state.metrics().rebinds.inc();
        stream.set_binding(Some(b.clone()));
        tracing::info!(stream = stream.id(), from = %failed.upstream.cfg.name,
            to = %b.upstream.cfg.name, remaining_ms, "query retried after a worker reset");
        Some(b)
    }
}
