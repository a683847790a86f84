//! Outcome classification, the recorder a run fills in, and the report it produces (JSON and a
//! text table).

use continuum_core::metrics::Outcome;
use hdrhistogram::Histogram;
use serde::Serialize;
use std::collections::BTreeMap;

/// Largest latency the histograms track, µs; longer ones are clamped. assumption: one hour,
/// as the simulator's histograms (`metrics::MAX_LATENCY_US`).
const MAX_LATENCY_US: u64 = 3_600_000_000;
/// Significant digits of the histograms. assumption: 3 digits (0.1 % relative error) is finer
/// than any timing the network gives.
const SIG_DIGITS: u8 = 3;
/// How many error messages a report keeps. assumption: a handful show the cause without
/// flooding the output.
const MAX_ERRORS: usize = 10;

/// The outcome of one query from what the load generator saw: `status` is the HTTP status of a
/// fully read response (`None`: no response, e.g. a timeout or a transport error), and
/// `latency_ms` the time from send to the end of the response, as judged against the stream's
/// deadline `max_delay_ms`.
pub fn classify(status: Option<u16>, latency_ms: f64, max_delay_ms: f64) -> Outcome {
    match status {
        Some(200) if latency_ms <= max_delay_ms => Outcome::Success,
        Some(200) => Outcome::Failure,
        _ => Outcome::Rejected,
    }
}

/// Offered / success / failure / rejected query counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct QueryCounts {
    /// Queries offered: sent, or counted for streams that were refused.
    pub offered: u64,
    /// Answered with 200 within the stream's deadline.
    pub success: u64,
    /// Answered with 200 after the deadline.
    pub failure: u64,
    /// Not answered with 200 (refused, failed, timed out, or of a refused stream).
    pub rejected: u64,
    /// success / offered (0 when nothing was offered).
    pub success_ratio: f64,
}

impl QueryCounts {
    fn count(&mut self, o: Outcome, n: u64) {
        self.offered += n;
        match o {
            Outcome::Success => self.success += n,
            Outcome::Failure => self.failure += n,
            // A live query is never degraded (the gateway has no `tdp`, a simulator-only
            // mitigation); were one counted so, it was not answered.
            Outcome::Rejected | Outcome::Degraded => self.rejected += n,
        }
        self.success_ratio = if self.offered == 0 {
            0.0
        } else {
            self.success as f64 / self.offered as f64
        };
    }

    /// Whether every offered query has exactly one outcome.
    pub fn conserved(&self) -> bool {
        self.offered == self.success + self.failure + self.rejected
    }
}

/// Percentiles of a latency distribution, ms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct LatencySummary {
    /// Number of samples.
    pub count: u64,
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest.
    pub max: f64,
}

impl LatencySummary {
    fn of(h: &Histogram<u64>) -> Self {
        let ms = |us: u64| us as f64 / 1000.0;
        Self {
            count: h.len(),
            mean: if h.is_empty() { 0.0 } else { h.mean() / 1000.0 },
            p50: ms(h.value_at_quantile(0.5)),
            p95: ms(h.value_at_quantile(0.95)),
            p99: ms(h.value_at_quantile(0.99)),
            max: ms(h.max()),
        }
    }
}

/// Streams of one app class (or of all).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StreamCounts {
    /// Clients that arrived (each opens one stream).
    pub arrived: u64,
    /// Streams the gateway bound (201).
    pub opened: u64,
    /// Streams refused, by reason: the gateway's `constraint` of a 503, `rate-limited` (429),
    /// `max-streams` (the load generator's own cap), `http-<status>` for errors, `timeout`,
    /// `transport`.
    pub refused: BTreeMap<String, u64>,
}

/// Results of one app class.
#[derive(Debug, Clone, Serialize)]
pub struct AppReport {
    /// App class name.
    pub app: String,
    /// Its streams.
    pub streams: StreamCounts,
    /// Its queries.
    pub queries: QueryCounts,
    /// Latency of its answered (200) queries, send to end of response.
    pub latency_ms: LatencySummary,
}

/// What one gateway of the fleet did for the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GatewayCounts {
    /// Its base URL.
    pub url: String,
    /// Streams opened there (201).
    pub opened: u64,
    /// Queries it answered (any HTTP status).
    pub answered: u64,
    /// Requests it did not answer at all (connection refused or reset).
    pub unreachable: u64,
    /// Streams handed over to it from a gateway that stopped answering.
    pub handovers_in: u64,
}

/// Failover across the gateways of the fleet.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FleetReport {
    /// Per gateway, in the order given.
    pub gateways: Vec<GatewayCounts>,
    /// Streams moved from a gateway that stopped answering to the next one.
    pub handovers: u64,
    /// Queries sent again at the next gateway after theirs stopped answering (each is still
    /// judged once).
    pub resent: u64,
    /// Time from a stream's first failed request at a gateway to its first answer at the
    /// next one.
    pub failover_ms: LatencySummary,
    /// Streams that had been opened and could not continue at any gateway.
    pub streams_lost: u64,
}

/// What a load run was asked to do, echoed in its report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RunConfig {
    /// Gateway base URLs, comma-separated, in failover order.
    pub gateway: String,
    /// How streams were assigned to the gateways (`spread` or `first`).
    pub assign: String,
    /// Client arrival rate λ, clients/min (description).
    pub lambda: String,
    /// Duration of client arrivals, s.
    pub duration_s: f64,
    /// Seed of the random streams.
    pub seed: u64,
    /// The scheduler whose random streams were drawn.
    pub scheduler: u64,
    /// Body format (`binary`, `json`, or `quic-frame` when queries went over QUIC).
    pub body: String,
    /// The gateway's QUIC endpoint the queries went to, when they went over QUIC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quic: Option<String>,
    /// Request timeout, ms.
    pub timeout_ms: u64,
    /// Cap on concurrently open streams.
    pub max_streams: Option<usize>,
    /// Whether streams ran to their full duration rather than stopping at the end of arrivals.
    pub full_streams: bool,
    /// Whether 2·δ_i + t_i (radio access both ways, transmission) was added to each measured
    /// latency before judging it.
    pub add_radio_delay: bool,
}

/// The report of a load run.
#[derive(Debug, Clone, Serialize)]
pub struct LoadReport {
    /// What was asked.
    pub config: RunConfig,
    /// Whether the run was interrupted (no further arrivals or emissions after that).
    pub interrupted: bool,
    /// Wall-clock time from the first arrival to the last answer, s.
    pub elapsed_s: f64,
    /// Streams of all apps.
    pub streams: StreamCounts,
    /// Queries of all apps.
    pub queries: QueryCounts,
    /// Queries actually sent to the gateway (offered minus those of refused streams).
    pub sent: u64,
    /// Offered queries per second of the arrival window.
    pub offered_qps: f64,
    /// Sent queries per second of the arrival window.
    pub sent_qps: f64,
    /// Latency of answered (200) queries, send to end of response.
    pub latency_ms: LatencySummary,
    /// How late the load generator sent queries after their scheduled time (its own overhead).
    pub send_lag_ms: LatencySummary,
    /// HTTP statuses of stream opens (`timeout`, `transport` when there was no response).
    pub open_status: BTreeMap<String, u64>,
    /// HTTP statuses of inference requests (`timeout`, `transport` when there was none).
    pub infer_status: BTreeMap<String, u64>,
    /// HTTP statuses of stream closes.
    pub close_status: BTreeMap<String, u64>,
    /// The gateway's own judgement of answered queries (`x-continuum-outcome`).
    pub gateway_outcome: BTreeMap<String, u64>,
    /// Per app class.
    pub per_app: Vec<AppReport>,
    /// Per gateway and failover (one entry in `gateways` for a single gateway).
    pub fleet: FleetReport,
    /// The first few unexpected answers and errors.
    pub errors: Vec<String>,
}

struct AppState {
    streams: StreamCounts,
    queries: QueryCounts,
    latency: Histogram<u64>,
}

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_US, SIG_DIGITS).expect("valid histogram bounds")
}

/// Collects the outcomes of a run as they happen.
pub struct Recorder {
    apps: Vec<(String, AppState)>,
    lag: Histogram<u64>,
    sent: u64,
    open_status: BTreeMap<String, u64>,
    infer_status: BTreeMap<String, u64>,
    close_status: BTreeMap<String, u64>,
    gateway_outcome: BTreeMap<String, u64>,
    errors: Vec<String>,
    fleet: FleetReport,
    failover: Histogram<u64>,
}

fn bump(m: &mut BTreeMap<String, u64>, key: &str, n: u64) {
    match m.get_mut(key) {
        Some(v) => *v += n,
        None => {
            m.insert(key.to_string(), n);
        }
    }
}

impl Recorder {
    /// A recorder for these app classes (indexed as in the workload).
    pub fn new(apps: &[String]) -> Self {
        Self {
            apps: apps
                .iter()
                .map(|a| {
                    let s = AppState {
                        streams: StreamCounts::default(),
                        queries: QueryCounts::default(),
                        latency: histogram(),
                    };
                    (a.clone(), s)
                })
                .collect(),
            lag: histogram(),
            sent: 0,
            open_status: BTreeMap::new(),
            infer_status: BTreeMap::new(),
            close_status: BTreeMap::new(),
            gateway_outcome: BTreeMap::new(),
            errors: Vec::new(),
            fleet: FleetReport::default(),
            failover: histogram(),
        }
    }

    /// Names the gateways of the fleet (indexed as in the failover order).
    pub fn set_gateways(&mut self, urls: &[String]) {
        self.fleet.gateways = urls
            .iter()
            .map(|u| GatewayCounts {
                url: u.clone(),
                ..GatewayCounts::default()
            })
            .collect();
    }

    fn gw(&mut self, g: usize) -> Option<&mut GatewayCounts> {
        self.fleet.gateways.get_mut(g)
    }

    /// A stream was opened at gateway `g`.
    pub fn opened_at(&mut self, g: usize) {
        if let Some(c) = self.gw(g) {
            c.opened += 1;
        }
    }

    /// Gateway `g` answered a query (any HTTP status).
    pub fn answered_at(&mut self, g: usize) {
        if let Some(c) = self.gw(g) {
            c.answered += 1;
        }
    }

    /// Gateway `g` did not answer a request at all.
    pub fn unreachable_at(&mut self, g: usize) {
        if let Some(c) = self.gw(g) {
            c.unreachable += 1;
        }
    }

    /// A stream was handed over to gateway `g`.
    pub fn handover_to(&mut self, g: usize) {
        self.fleet.handovers += 1;
        if let Some(c) = self.gw(g) {
            c.handovers_in += 1;
        }
    }

    /// A query was sent again at the next gateway.
    pub fn resent(&mut self) {
        self.fleet.resent += 1;
    }

    /// A failover took `us` µs (first failure to first answer at the next gateway).
    pub fn failover(&mut self, us: u64) {
        self.failover.saturating_record(us.max(1));
    }

    /// An opened stream could not continue at any gateway.
    pub fn stream_lost(&mut self) {
        self.fleet.streams_lost += 1;
    }

    /// A client of app `app` arrived and asks to open a stream.
    pub fn arrived(&mut self, app: u16) {
        self.apps[usize::from(app)].1.streams.arrived += 1;
    }

    /// The answer to a stream open: `status` is the HTTP status or `timeout` / `transport`.
    pub fn open_status(&mut self, status: &str) {
        bump(&mut self.open_status, status, 1);
    }

    /// A stream of app `app` was bound.
    pub fn opened(&mut self, app: u16) {
        self.apps[usize::from(app)].1.streams.opened += 1;
    }

    /// A stream of app `app` was refused for `reason`; the `queries` it would have sent are
    /// offered and rejected.
    pub fn refused(&mut self, app: u16, reason: &str, queries: u64) {
        let a = &mut self.apps[usize::from(app)].1;
        bump(&mut a.streams.refused, reason, 1);
        a.queries.count(Outcome::Rejected, queries);
    }

    /// A query was sent `lag_us` after its scheduled time.
    pub fn sent(&mut self, lag_us: u64) {
        self.sent += 1;
        self.lag.saturating_record(lag_us.max(1));
    }

    /// A query of app `app` ended: `status` is the HTTP status of its response (`None`: none,
    /// and `no_answer` says why), `latency_us` the time from send to end of response,
    /// `judged_ms` the latency judged against `max_delay_ms`, `gateway` the gateway's outcome
    /// header. Returns the outcome.
    #[allow(clippy::too_many_arguments)]
    pub fn query(
        &mut self,
        app: u16,
        status: Option<u16>,
        no_answer: &str,
        latency_us: u64,
        judged_ms: f64,
        max_delay_ms: f64,
        gateway: Option<&str>,
    ) -> Outcome {
        let o = classify(status, judged_ms, max_delay_ms);
        let a = &mut self.apps[usize::from(app)].1;
        a.queries.count(o, 1);
        if status == Some(200) {
            a.latency.saturating_record(latency_us.max(1));
        }
        match status {
            Some(s) => bump(&mut self.infer_status, &s.to_string(), 1),
            None => bump(&mut self.infer_status, no_answer, 1),
        }
        if let Some(g) = gateway {
            bump(&mut self.gateway_outcome, g, 1);
        }
        o
    }

    /// The answer to a stream close.
    pub fn close_status(&mut self, status: &str) {
        bump(&mut self.close_status, status, 1);
    }

    /// Keeps an error message (only the first few).
    pub fn error(&mut self, msg: String) {
        if self.errors.len() < MAX_ERRORS {
            self.errors.push(msg);
        }
    }

    /// Queries sent so far.
    pub fn sent_count(&self) -> u64 {
        self.sent
    }

    /// Queries with an outcome so far.
    pub fn ended_count(&self) -> u64 {
        self.apps.iter().map(|a| a.1.queries.offered).sum()
    }

    /// The report: `elapsed_s` of wall-clock time, `config` echoed.
    pub fn report(&self, config: RunConfig, elapsed_s: f64, interrupted: bool) -> LoadReport {
        let mut streams = StreamCounts::default();
        let mut queries = QueryCounts::default();
        let mut all = histogram();
        let mut per_app = Vec::with_capacity(self.apps.len());
        for (name, a) in &self.apps {
            streams.arrived += a.streams.arrived;
            streams.opened += a.streams.opened;
            for (k, v) in &a.streams.refused {
                bump(&mut streams.refused, k, *v);
            }
            queries.count(Outcome::Success, a.queries.success);
            queries.count(Outcome::Failure, a.queries.failure);
            queries.count(Outcome::Rejected, a.queries.rejected);
            all.add(&a.latency).expect("same histogram bounds");
            per_app.push(AppReport {
                app: name.clone(),
                streams: a.streams.clone(),
                queries: a.queries,
                latency_ms: LatencySummary::of(&a.latency),
            });
        }
        let per_s = |n: u64| {
            if config.duration_s > 0.0 {
                n as f64 / config.duration_s
            } else {
                0.0
            }
        };
        LoadReport {
            offered_qps: per_s(queries.offered),
            sent_qps: per_s(self.sent),
            config,
            interrupted,
            elapsed_s,
            streams,
            queries,
            sent: self.sent,
            latency_ms: LatencySummary::of(&all),
            send_lag_ms: LatencySummary::of(&self.lag),
            open_status: self.open_status.clone(),
            infer_status: self.infer_status.clone(),
            close_status: self.close_status.clone(),
            gateway_outcome: self.gateway_outcome.clone(),
            per_app,
            fleet: FleetReport {
                failover_ms: LatencySummary::of(&self.failover),
                ..self.fleet.clone()
            },
            errors: self.errors.clone(),
        }
    }
}

impl LoadReport {
    /// The report as pretty JSON.
    pub fn to_json(&self) -> String {
        continuum_core::config::versioned_json(self).expect("reports serialise")
    }
}
