//! The run itself: client arrivals on the wall clock, one task per stream (open, emit at its
//! times, close), one task per query, all over one pooled HTTP client (plain http://, or TLS
//! towards https:// gateways).

use super::LoadOptions;
use super::answer::Answer;
use super::body::{InferBody, ModelSignature};
use super::fleet::Route;
use super::quic::{self, FrameInput};
use super::report::{LoadReport, Recorder};
use anyhow::{Context, bail};
use bytes::Bytes;
use continuum_core::workload::StreamParams;
use continuum_core::workload::emission::{Client as Arrival, ClientArrivals, Emission};
use continuum_wire::QuicClient;
use continuum_wire::tcp_tls;
use http_body_util::{BodyExt, Full};
use hyper::header::CONTENT_TYPE;
use hyper::{Method, Request};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio::time::Instant;

mod query;

use query::{Judge, query, quic_query};

type HttpClient = Client<tcp_tls::HttpsOrHttp, Full<Bytes>>;

/// The gateway's header with its own judgement of a query.
const OUTCOME_HEADER: &str = "x-continuum-outcome";

/// State shared by every task of a run.
struct RunState {
    client: HttpClient,
    opts: LoadOptions,
    /// Encoded infer body per task id (`None` for tasks no app uses).
    bodies: Vec<Option<InferBody>>,
    /// With `--quic`: the connection to the gateway's QUIC endpoint, and each used task's
    /// input in wire form.
    quic: Option<(QuicClient, Vec<Option<FrameInput>>)>,
    rec: Mutex<Recorder>,
    start: Instant,
    horizon_ms: f64,
    open_streams: AtomicUsize,
    stop: watch::Receiver<bool>,
}

impl RunState {
    fn rec(&self) -> std::sync::MutexGuard<'_, Recorder> {
        self.rec.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn at(&self, t_ms: f64) -> Instant {
        self.start + Duration::from_secs_f64(t_ms.max(0.0) / 1000.0)
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(x) = src {
        s.push_str(": ");
        s.push_str(&x.to_string());
        src = x.source();
    }
    s
}

async fn send(client: &HttpClient, req: Request<Full<Bytes>>, timeout: Duration) -> Answer {
    let exchange = async {
        let resp = client.request(req).await.map_err(|e| error_chain(&e))?;
        let status = resp.status().as_u16();
        let outcome = resp
            .headers()
            .get(OUTCOME_HEADER)
            .map(|v| match v.as_bytes() {
                b"success" => "success",
                b"failure" => "failure",
                _ => "other",
            });
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| error_chain(&e))?
            .to_bytes();
        Ok::<_, String>((status, outcome, body))
    };
    match tokio::time::timeout(timeout, exchange).await {
        Ok(Ok((status, outcome, body))) => Answer::Response {
            status,
            outcome,
            body,
        },
        Ok(Err(e)) => Answer::Transport(e),
        Err(_) => Answer::Timeout,
    }
}

fn json_request(
    method: Method,
    uri: &str,
    body: Option<&serde_json::Value>,
) -> Request<Full<Bytes>> {
    let bytes = body.map_or_else(Bytes::new, |b| {
        Bytes::from(serde_json::to_vec(b).expect("JSON values serialise"))
    });
    let mut r = Request::builder().method(method).uri(uri);
    if body.is_some() {
        r = r.header(CONTENT_TYPE, "application/json");
    }
    r.body(Full::new(bytes)).expect("valid request")
}

/// Fetches each used task's model metadata from the first gateway of the fleet that answers.
async fn signatures(
    client: &HttpClient,
    opts: &LoadOptions,
) -> anyhow::Result<Vec<Option<ModelSignature>>> {
    let mut last = None;
    for g in &opts.gateways {
        match signatures_at(client, opts, g).await {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    Err(last.expect("at least one gateway"))
}

/// Each used task's model metadata from gateway `base`.
async fn signatures_at(
    client: &HttpClient,
    opts: &LoadOptions,
    base: &str,
) -> anyhow::Result<Vec<Option<ModelSignature>>> {
    let mut out = vec![None; opts.task_names.len()];
    for app in &opts.workload.apps {
        let task = usize::from(app.task);
        if out[task].is_some() {
            continue;
        }
        let name = &opts.task_names[task];
        let url = format!("{base}/v2/models/{name}");
        let meta = match send(client, json_request(Method::GET, &url, None), opts.timeout).await {
            Answer::Response {
                status: 200, body, ..
            } => serde_json::from_slice::<serde_json::Value>(&body)
                .with_context(|| format!("GET {url}: invalid JSON"))?,
            a @ Answer::Response { .. } => bail!("GET {url}: {}", a.describe()),
            a => bail!(
                "GET {url}: cannot reach the gateway: {}{}",
                a.describe(),
                no_client_cert_hint(opts, base)
            ),
        };
        let sig = ModelSignature::from_metadata(&meta)
            .with_context(|| format!("GET {url}: model metadata of task {name}"))?;
        out[task] = Some(sig);
    }
    Ok(out)
}

/// A hint for an https:// gateway reached without a client certificate: under TLS 1.3 a
/// server that requires one refuses it after the handshake, so the refusal may arrive as the
/// alert (`CertificateRequired`) or only as a closed connection, depending on timing.
fn no_client_cert_hint(opts: &LoadOptions, base: &str) -> &'static str {
    let without_cert = opts.gateway_tls.as_ref().is_some_and(|t| t.cert.is_none());
    if base.starts_with("https://") && without_cert {
        " (no client certificate was offered: if the gateway verifies clients, give \
         --gateway-cert and --gateway-key)"
    } else {
        ""
    }
}

/// The one client every request to the gateways goes through: plain http:// passes through,
/// https:// takes TLS with `opts`' authorities (and client certificate), offering ALPN h2 with
/// --http2 and none (HTTP/1.1) without, as the connector sets it.
fn http_client(opts: &LoadOptions) -> anyhow::Result<HttpClient> {
    let connector = tcp_tls::https_or_http(opts.gateway_tls_config()?, opts.http2, None)?;
    Ok(Client::builder(TokioExecutor::new())
        .http2_only(opts.http2)
        .build(connector))
}

/// Runs a load against the gateway of `opts` and returns its report.
pub async fn run(opts: &LoadOptions) -> anyhow::Result<LoadReport> {
    run_until(opts, std::future::pending()).await
}

/// As [`run`], but when `stop` completes no further clients arrive and no further queries are
/// sent; queries in flight are still awaited and the report says it was interrupted.
pub async fn run_until(
    opts: &LoadOptions,
    stop: impl Future<Output = ()>,
) -> anyhow::Result<LoadReport> {
    let client = http_client(opts)?;
    let sigs = signatures(&client, opts).await?;
    let bodies = sigs
        .iter()
        .map(|s| s.as_ref().map(|s| InferBody::reference(s, opts.body)))
        .collect();
    let quic = match &opts.quic {
        Some(q) => Some((
            quic::connect(q).await?,
            sigs.iter()
                .map(|s| s.as_ref().map(FrameInput::reference))
                .collect(),
        )),
        None => None,
    };
    let horizon_ms = opts.duration_s * 1000.0;
    let mut arrivals: Vec<Arrival> =
        ClientArrivals::new(&opts.workload, opts.seed, opts.scheduler, horizon_ms).collect();
    if arrivals.len() < opts.warm_up {
        // `--warm-up N` promises N clients: the first N the arrival process draws, past the run
        // if need be (the same draws, so those within it come first), looking at most a
        // thousand runs ahead (a λ that falls to 0 draws no more).
        arrivals = ClientArrivals::new(
            &opts.workload,
            opts.seed,
            opts.scheduler,
            horizon_ms.max(1.0) * 1000.0,
        )
        .take(opts.warm_up)
        .collect();
    }
    for a in arrivals.iter_mut().take(opts.warm_up) {
        a.t_ms = 0.0;
    }
    let names: Vec<String> = opts.workload.apps.iter().map(|a| a.name.clone()).collect();
    let mut rec = Recorder::new(&names);
    rec.set_gateways(&opts.gateways);
    let (tx, rx) = watch::channel(false);
    let ctx = Arc::new(RunState {
        client,
        opts: opts.clone(),
        bodies,
        quic,
        rec: Mutex::new(rec),
        start: Instant::now(),
        horizon_ms,
        open_streams: AtomicUsize::new(0),
        stop: rx,
    });
    let progress = opts
        .progress
        .map(|p| tokio::spawn(progress_lines(ctx.clone(), p)));
    let main = drive(ctx.clone(), arrivals);
    tokio::pin!(main);
    tokio::pin!(stop);
    let mut stopped = false;
    loop {
        tokio::select! {
            () = &mut main => break,
            () = &mut stop, if !stopped => {
                stopped = true;
                let _ = tx.send(true);
            }
        }
    }
    if let Some(p) = progress {
        p.abort();
    }
    let elapsed = ctx.start.elapsed().as_secs_f64();
    let report = ctx.rec().report(opts.run_config(), elapsed, stopped);
    Ok(report)
}

async fn progress_lines(ctx: Arc<RunState>, period: Duration) {
    let mut tick = tokio::time::interval_at(ctx.start + period, period);
    loop {
        tick.tick().await;
        let (sent, ended) = {
            let r = ctx.rec();
            (r.sent_count(), r.ended_count())
        };
        eprintln!(
            "t {:>7.1} s  open streams {:>5}  sent {:>9}  ended {:>9}",
            ctx.start.elapsed().as_secs_f64(),
            ctx.open_streams.load(Ordering::Relaxed),
            sent,
            ended
        );
    }
}

/// Sleeps until `at`; false when the run is stopped first.
async fn sleep_or_stop(at: Instant, stop: &mut watch::Receiver<bool>) -> bool {
    if *stop.borrow() {
        return false;
    }
    tokio::select! {
        () = tokio::time::sleep_until(at) => true,
        _ = stop.changed() => false,
    }
}

fn join_result(r: Result<(), tokio::task::JoinError>) {
    if let Err(e) = r {
        if e.is_panic() {
            std::panic::resume_unwind(e.into_panic());
        }
    }
}

async fn drive(ctx: Arc<RunState>, arrivals: Vec<Arrival>) {
    let mut stop = ctx.stop.clone();
    let mut streams = JoinSet::new();
    for (i, c) in arrivals.into_iter().enumerate() {
        if !sleep_or_stop(ctx.at(c.t_ms), &mut stop).await {
            break;
        }
        streams.spawn(stream(ctx.clone(), c, i));
        while let Some(r) = streams.try_join_next() {
            join_result(r);
        }
    }
    while let Some(r) = streams.join_next().await {
        join_result(r);
    }
}

/// Why a stream open did not bind, from the gateway's answer.
fn refusal_reason(a: &Answer) -> String {
    match a {
        Answer::Response {
            status: 503, body, ..
        } => serde_json::from_slice::<serde_json::Value>(body)
            .ok()
            .and_then(|v| v["constraint"].as_str().map(str::to_owned))
            .unwrap_or_else(|| "unavailable".into()),
        Answer::Response { status: 429, .. } => "rate-limited".into(),
        Answer::Response { status, .. } => format!("http-{status}"),
        Answer::Timeout => "timeout".into(),
        Answer::Transport(_) => "transport".into(),
    }
}

/// Sends `make(g)` to gateway `g` and, while a gateway does not answer at all, to the next
/// ones of the fleet; returns the gateway that answered last and its answer.
async fn send_failover(
    ctx: &RunState,
    first: usize,
    make: impl Fn(&str) -> Request<Full<Bytes>>,
) -> (usize, Answer) {
    let n = ctx.opts.gateways.len();
    let mut k = 0;
    loop {
        let g = (first + k) % n;
        let a = send(&ctx.client, make(&ctx.opts.gateways[g]), ctx.opts.timeout).await;
        if !matches!(a, Answer::Transport(_)) {
            return (g, a);
        }
        ctx.rec().unreachable_at(g);
        k += 1;
        if k == n {
            return (g, a);
        }
    }
}

/// One client's stream (the `i`-th to arrive): open, emit at its times, close.
async fn stream(ctx: Arc<RunState>, c: Arrival, i: usize) {
    let p = c.params;
    let o = &ctx.opts;
    let end = if o.full_streams {
        f64::INFINITY
    } else {
        ctx.horizon_ms
    };
    let mut emission = c.emission(o.seed, o.scheduler, end);
    ctx.rec().arrived(p.app);
    let open = ctx.open_streams.fetch_add(1, Ordering::Relaxed);
    if o.max_streams.is_some_and(|m| open >= m) {
        ctx.open_streams.fetch_sub(1, Ordering::Relaxed);
        return refuse(&ctx, p.app, "max-streams", &mut emission);
    }
    let (g, id) = match open_stream(&ctx, &p, i).await {
        Ok(x) => x,
        Err(reason) => {
            ctx.open_streams.fetch_sub(1, Ordering::Relaxed);
            return refuse(&ctx, p.app, &reason, &mut emission);
        }
    };
    let route = Arc::new(Route::new(g, o.gateways.len()));
    let id: Arc<str> = Arc::from(id);
    emit(&ctx, &p, &route, &id, &mut emission).await;
    close_stream(&ctx, &route, &id).await;
    ctx.open_streams.fetch_sub(1, Ordering::Relaxed);
}

/// Counts a stream that did not open as refused for `reason`, with every query it would have
/// sent.
fn refuse(ctx: &RunState, app: u16, reason: &str, emission: &mut Emission) {
    let jitter = ctx.opts.workload.jitter;
    let mut n = 0;
    while emission.next(jitter).is_some() {
        n += 1;
    }
    ctx.rec().refused(app, reason, n);
}

/// Opens the stream at its gateway (the next ones while a gateway does not answer): the
/// gateway that holds it and its id, or why it was not opened (an answer other than a
/// refusal is also recorded as an error).
async fn open_stream(
    ctx: &RunState,
    p: &StreamParams,
    i: usize,
) -> Result<(usize, String), String> {
    let o = &ctx.opts;
    let task = usize::from(p.demand.task);
    let open_body = serde_json::json!({
        "task": ctx.opts.task_names[task],
        "app": ctx.opts.workload.apps[usize::from(p.app)].name,
        "max_delay_ms": p.demand.max_delay_ms,
        "min_accuracy": p.demand.min_accuracy,
        "rate_qps": p.demand.rate_qps,
        "frame_kb": p.demand.frame_kb,
        "access_ms": p.demand.access_ms,
        "tx_ms": p.demand.tx_ms,
    });
    let n = o.gateways.len();
    let (g, a) = send_failover(ctx, o.assign.gateway_of(i, n), |base| {
        json_request(
            Method::POST,
            &format!("{base}/v1/streams"),
            Some(&open_body),
        )
    })
    .await;
    ctx.rec().open_status(&a.status_label());
    let id = match &a {
        Answer::Response {
            status: 201, body, ..
        } => serde_json::from_slice::<serde_json::Value>(body)
            .ok()
            .and_then(|v| match &v["stream_id"] {
                serde_json::Value::String(s) => Some(s.clone()),
                serde_json::Value::Number(n) => Some(n.to_string()),
                _ => None,
            }),
        _ => None,
    };
    if let Some(id) = id {
        let mut rec = ctx.rec();
        rec.opened(p.app);
        rec.opened_at(g);
        return Ok((g, id));
    }
    if !matches!(
        a,
        Answer::Response {
            status: 503 | 429,
            ..
        }
    ) {
        let url = format!("{}/v1/streams", o.gateways[g]);
        ctx.rec().error(format!("POST {url}: {}", a.describe()));
    }
    Err(match a {
        Answer::Response { status: 201, .. } => "http-201-without-stream-id".to_string(),
        _ => refusal_reason(&a),
    })
}

/// Sends the stream's queries at their emission times until its end or the run's stop, then
/// waits for their answers.
async fn emit(
    ctx: &Arc<RunState>,
    p: &StreamParams,
    route: &Arc<Route>,
    id: &Arc<str>,
    emission: &mut Emission,
) {
    let o = &ctx.opts;
    let jitter = o.workload.jitter;
    let task = usize::from(p.demand.task);
    let body = ctx.bodies[task]
        .clone()
        .expect("bodies cover every app's task");
    let extra_ms = if o.add_radio_delay {
        2.0 * p.demand.access_ms + p.demand.tx_ms
    } else {
        0.0
    };
    // With --quic: the frame's head names the stream; the tensor bytes are shared.
    let frame_head = ctx.quic.as_ref().map(|(_, inputs)| {
        let input = inputs[task]
            .as_ref()
            .expect("inputs cover every app's task");
        (input.head(id), input.data.clone())
    });
    let mut stop = ctx.stop.clone();
    let mut queries = JoinSet::new();
    let mut stopped = false;
    while let Some(t) = emission.next(jitter) {
        let at = ctx.at(t);
        if !sleep_or_stop(at, &mut stop).await {
            stopped = true;
            break;
        }
        let lag = Instant::now().saturating_duration_since(at);
        ctx.rec().sent(lag.as_micros() as u64);
        let judge = Judge {
            app: p.app,
            max_delay_ms: p.demand.max_delay_ms,
            extra_ms,
        };
        match &frame_head {
            Some((head, data)) => {
                queries.spawn(quic_query(ctx.clone(), head.clone(), data.clone(), judge))
            }
            None => queries.spawn(query(
                ctx.clone(),
                route.clone(),
                id.clone(),
                body.clone(),
                judge,
            )),
        };
        while let Some(r) = queries.try_join_next() {
            join_result(r);
        }
    }
    if !stopped {
        sleep_or_stop(ctx.at(emission.t_end), &mut stop).await;
    }
    while let Some(r) = queries.join_next().await {
        join_result(r);
    }
}

/// Closes the stream at the gateway that holds it now (the next ones while a gateway does
/// not answer); an answer other than 200 or 204 is recorded as an error.
async fn close_stream(ctx: &RunState, route: &Route, id: &str) {
    let (g, a) = send_failover(ctx, route.current(), |base| {
        json_request(Method::DELETE, &format!("{base}/v1/streams/{id}"), None)
    })
    .await;
    ctx.rec().close_status(&a.status_label());
    if !matches!(
        a,
        Answer::Response {
            status: 204 | 200,
            ..
        }
    ) {
        let url = format!("{}/v1/streams/{id}", ctx.opts.gateways[g]);
        ctx.rec().error(format!("DELETE {url}: {}", a.describe()));
    }
}
