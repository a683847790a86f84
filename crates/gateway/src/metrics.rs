//! The gateway's Prometheus metrics (`GET /metrics`): queries by outcome, app, variant and
//! cluster; stream opens; decision time and added latency histograms; the active policy of
//! each stream class; load view age and worker health.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;

/// Labels of a query count.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub(crate) struct QueryLabels {
    /// `success`, `failure` or `rejected`.
    pub(crate) outcome: &'static str,
    /// Application class: a configured class, `other`, or `-` if the client named none.
    pub(crate) app: String,
    /// Variant that served it (`-` if none).
    pub(crate) variant: String,
    /// Cluster that served it (`-` if none).
    pub(crate) cluster: String,
}

/// A label set with one `result`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub(crate) struct ResultLabel {
    /// What happened.
    pub(crate) result: &'static str,
}

/// A label set naming a stream class and a policy.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub(crate) struct ClassPolicyLabel {
    /// Stream class name (`all` when the gateway has one class).
    pub(crate) class: String,
    /// Policy name.
    pub(crate) policy: &'static str,
}

/// A label set naming an application class.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub(crate) struct AppLabel {
    /// Application class (`other` outside the configured `app_classes`).
    pub(crate) app: String,
}

/// A label set naming a live worker.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub(crate) struct WorkerLabel {
    /// Worker name.
    pub(crate) worker: String,
}

/// The query counters of one (app, variant, cluster): what a binding counts its queries with.
#[derive(Debug, Clone, Default)]
pub(crate) struct QueryCounters {
    /// Queries answered within the stream's end-to-end budget.
    pub(crate) success: Counter,
    /// Queries answered late, or not answered.
    pub(crate) failure: Counter,
    /// Queries refused before reaching a worker.
    pub(crate) rejected: Counter,
}

/// A label set naming a QUIC worker connection and one of its transport counters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub(crate) struct QuicStatLabel {
    /// Worker name.
    pub(crate) worker: String,
    /// `lost_packets`, `congestion_events`, `cwnd_bytes`, `sent_packets`, `data_blocked`
    /// (DATA_BLOCKED frames sent: the worker's connection window stopped us) or
    /// `stream_data_blocked` (the same for one stream's window).
    pub(crate) stat: &'static str,
}

/// Every gateway metric, registered in one registry.
pub(crate) struct GatewayMetrics {
    registry: Registry,
    /// Queries by outcome, app, variant and cluster.
    pub(crate) queries: Family<QueryLabels, Counter>,
    /// Stream opens by result (`bound`, `infeasible`, `limited`, `bad_request`).
    pub(crate) stream_opens: Family<ResultLabel, Counter>,
    /// Declared query rates of the streams refused as infeasible, per app, queries per
    /// second: demand the deployment does not serve (an allocator reads it beside the
    /// queries). Exported as `continuum_gateway_refused_qps` and, while deprecated, under its
    /// old name `continuum_gateway_refused_fps`.
    pub(crate) refused_qps: Family<AppLabel, Counter<f64, AtomicU64>>,
    /// Requests refused before becoming queries (malformed, unknown stream/task, too large).
    pub(crate) bad_requests: Family<ResultLabel, Counter>,
    /// Streams open now.
    pub(crate) streams_open: Gauge,
    /// Streams moved to another worker (their worker went down or was removed).
    pub(crate) rebinds: Counter,
    /// Streams re-bound from their token (after a restart, or after being dropped idle).
    pub(crate) stream_resumes: Counter,
    /// Time of one binding decision (feasibility + policy), s.
    pub(crate) decision_seconds: Histogram,
    /// Gateway time of a forwarded query minus the worker call and any injected delay, s.
    pub(crate) added_latency_seconds: Histogram,
    /// Per stream class: 1 for its active policy, 0 for the others.
    pub(crate) active_policy: Family<ClassPolicyLabel, Gauge>,
    /// Age of the oldest report in the published load view, s.
    pub(crate) load_view_age_seconds: Gauge<f64, AtomicU64>,
    /// 1 while a worker is up.
    pub(crate) worker_up: Family<WorkerLabel, Gauge>,
    /// Meta-policy decisions taken.
    pub(crate) agent_decisions: Counter,
    /// Time of one meta-policy step (the window's observation closed, the network evaluated,
    /// the choices applied), s.
    pub(crate) meta_step_seconds: Histogram,
    /// Tail-latency mitigation events by `result`: `reissued`, `reissue_won`, `cancelled`,
    /// `reissue_no_target`, `discarded`.
    pub(crate) mitigation: Family<ResultLabel, Counter>,
    /// Retry-on-reset events by `result`: `retried` (re-sent to another worker), `answered`
    /// (the retry got an answer), `budget_refused` (the retry budget was spent), `no_target`
    /// (no other worker feasible in the time left), `too_late` (the deadline had passed).
    pub(crate) retries: Family<ResultLabel, Counter>,
    /// End-to-end latency of answered queries at the gateway, s (the tail mitigation acts on).
    pub(crate) answer_seconds: Histogram,
    /// Transport counters of each QUIC worker connection (since it was opened), sampled at
    /// every load publication.
    pub(crate) upstream_quic: Family<QuicStatLabel, Gauge>,
}

impl Default for GatewayMetrics {
    fn default() -> Self {
        Self::new()
    }
}

impl GatewayMetrics {
    /// Counts one mitigation event.
    pub(crate) fn mitigation(&self, result: &'static str) {
        self.mitigation.get_or_create(&ResultLabel { result }).inc();
    }

    /// Counts one retry-on-reset event.
    pub(crate) fn retry(&self, result: &'static str) {
        self.retries.get_or_create(&ResultLabel { result }).inc();
    }

    /// Records the transport counters of `worker`'s QUIC connection.
    pub(crate) fn quic_stats(&self, worker: &str, s: &quinn::ConnectionStats) {
        let clamp = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        for (stat, v) in [
            ("lost_packets", s.path.lost_packets),
            ("congestion_events", s.path.congestion_events),
            ("cwnd_bytes", s.path.cwnd),
            ("sent_packets", s.path.sent_packets),
            ("data_blocked", s.frame_tx.data_blocked),
            ("stream_data_blocked", s.frame_tx.stream_data_blocked),
        ] {
            self.upstream_quic
                .get_or_create(&QuicStatLabel {
                    worker: worker.to_string(),
                    stat,
                })
                .set(clamp(v));
        }
    }

    /// Creates and registers every metric.
    pub(crate) fn new() -> Self {
        let mut registry = Registry::default();
        // 100 ns … ~0.4 s in ×2 steps: decisions take µs, added latency tens of µs to ms.
        let hist = || Histogram::new(exponential_buckets(1e-7, 2.0, 22));
        let m = Self {
            registry: Registry::default(),
            queries: Family::default(),
            stream_opens: Family::default(),
            refused_qps: Family::default(),
            bad_requests: Family::default(),
            streams_open: Gauge::default(),
            rebinds: Counter::default(),
            stream_resumes: Counter::default(),
            decision_seconds: hist(),
            added_latency_seconds: hist(),
            active_policy: Family::default(),
            load_view_age_seconds: Gauge::default(),
            worker_up: Family::default(),
            agent_decisions: Counter::default(),
            meta_step_seconds: hist(),
            mitigation: Family::default(),
            retries: Family::default(),
            // 1 ms … ~4.4 s in ×1.5 steps: inference deadlines are tens of ms to seconds.
            answer_seconds: Histogram::new(exponential_buckets(1e-3, 1.5, 21)),
            upstream_quic: Family::default(),
        };
        let r = &mut registry;
        r.register(
            "continuum_gateway_queries",
            "Queries by outcome, app, variant and cluster",
            m.queries.clone(),
        );
        r.register(
            "continuum_gateway_stream_opens",
            "Stream opens by result",
            m.stream_opens.clone(),
        );
        r.register(
            "continuum_gateway_refused_qps",
            "Declared query rates of streams refused as infeasible, by app (demand not served)",
            m.refused_qps.clone(),
        );
        r.register(
            "continuum_gateway_refused_fps",
            "Deprecated name of continuum_gateway_refused_qps (the same counter)",
            m.refused_qps.clone(),
        );
        r.register(
            "continuum_gateway_bad_requests",
            "Requests refused before becoming queries",
            m.bad_requests.clone(),
        );
        r.register(
            "continuum_gateway_streams_open",
            "Streams open now",
            m.streams_open.clone(),
        );
        r.register(
            "continuum_gateway_rebinds",
            "Streams moved to another worker",
            m.rebinds.clone(),
        );
        r.register(
            "continuum_gateway_stream_resumes",
            "Streams re-bound from their token (after a restart or an idle drop)",
            m.stream_resumes.clone(),
        );
        r.register(
            "continuum_gateway_decision_seconds",
            "Time of one binding decision (feasibility and policy)",
            m.decision_seconds.clone(),
        );
        r.register(
            "continuum_gateway_added_latency_seconds",
            "Gateway time of a forwarded query minus the worker call and injected delays",
            m.added_latency_seconds.clone(),
        );
        r.register(
            "continuum_gateway_active_policy",
            "Per stream class, 1 for its active dispatch policy and 0 for the others",
            m.active_policy.clone(),
        );
        r.register(
            "continuum_gateway_load_view_age_seconds",
            "Age of the oldest worker report in the published load view",
            m.load_view_age_seconds.clone(),
        );
        r.register(
            "continuum_gateway_mitigation",
            "Tail-latency mitigation events: reissued, reissue_won, cancelled, reissue_no_target, discarded",
            m.mitigation.clone(),
        );
        r.register(
            "continuum_gateway_retries",
            "Retry-on-reset events: retried, answered, budget_refused, no_target, too_late",
            m.retries.clone(),
        );
        r.register(
            "continuum_gateway_answer_seconds",
            "End-to-end latency of answered queries at the gateway",
            m.answer_seconds.clone(),
        );
        r.register(
            "continuum_gateway_upstream_quic",
            "Transport counters of each QUIC worker connection since it opened: lost_packets, congestion_events, cwnd_bytes, sent_packets, data_blocked, stream_data_blocked",
            m.upstream_quic.clone(),
        );
        r.register(
            "continuum_gateway_worker_up",
            "1 while a worker is up",
            m.worker_up.clone(),
        );
        m.register_meta(r);
        Self { registry, ..m }
    }

    /// Registers the meta-policy's metrics.
    fn register_meta(&self, r: &mut Registry) {
        r.register(
            "continuum_gateway_agent_decisions",
            "Meta-policy decisions taken",
            self.agent_decisions.clone(),
        );
        r.register(
            "continuum_gateway_meta_step_seconds",
            "Time of one meta-policy step (window observation closed, network evaluated, choices applied)",
            self.meta_step_seconds.clone(),
        );
    }

    /// Counts one query.
    pub(crate) fn query(&self, outcome: &'static str, app: &str, variant: &str, cluster: &str) {
        self.counter(outcome, app, variant, cluster).inc();
    }

    /// The three query counters of a stream's binding (handles: they count without a lookup).
    pub(crate) fn query_counters(&self, app: &str, variant: &str, cluster: &str) -> QueryCounters {
        QueryCounters {
            success: self.counter("success", app, variant, cluster),
            failure: self.counter("failure", app, variant, cluster),
            rejected: self.counter("rejected", app, variant, cluster),
        }
    }

    /// The query counter of these labels (a handle: keep it to count without a lookup).
    pub(crate) fn counter(
        &self,
        outcome: &'static str,
        app: &str,
        variant: &str,
        cluster: &str,
    ) -> Counter {
        self.queries
            .get_or_create(&QueryLabels {
                outcome,
                app: app.to_string(),
                variant: variant.to_string(),
                cluster: cluster.to_string(),
            })
            .clone()
    }

    /// Marks each class's active policy, and drops the series of the classes in `previous`
    /// that are no longer there (after a reload).
    pub(crate) fn set_policies(&self, classes: &[ClassPolicyLabel], previous: &[String]) {
        for gone in previous
            .iter()
            .filter(|p| !classes.iter().any(|c| &c.class == *p))
        {
            for p in continuum_core::policy::every() {
                self.active_policy.remove(&ClassPolicyLabel {
                    class: gone.clone(),
                    policy: p.name(),
                });
            }
        }
        for c in classes {
            for p in continuum_core::policy::every() {
                self.active_policy
                    .get_or_create(&ClassPolicyLabel {
                        class: c.class.clone(),
                        policy: p.name(),
                    })
                    .set(i64::from(p.name() == c.policy));
            }
        }
    }

    /// The metrics in Prometheus text format.
    pub(crate) fn encode(&self) -> String {
        let mut s = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut s, &self.registry);
        s
    }
}
