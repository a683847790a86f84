//! The client endpoint (hyper 1.x; HTTP/1.1 and HTTP/2 over cleartext on one port).
//!
//! | route | answer |
//! |---|---|
//! | `POST /v1/streams` | open a stream: 201 `{stream_id, variant, cluster, expected_delay_ms, policy}`; 503 naming the constraint no candidate met; 429 when opens are rate-limited |
//! | `POST /v1/streams/{id}/infer` | an OIP v2 inference request, forwarded to the bound worker |
//! | `GET /v1/streams/{id}`, `DELETE /v1/streams/{id}` | the binding; close (204) |
//! | `POST /v2/models/{task}/infer` | one-shot: binds with `max_delay_ms` / `min_accuracy` from the request `parameters`, forwards, unbinds |
//! | `GET /v2`, `/v2/health/live`, `/v2/health/ready`, `/v2/models/{task}[/ready]` | OIP v2 server and model metadata, health |
//! | `GET /v1/policy`, `PUT /v1/policy` | the active policy; pin one (`{"policy": name}`, or `null` to unpin; admin token) |
//! | `POST /v1/reload` | re-read the configuration (admin token) |
//! | `GET /v1/workers` | live workers: up, RTT, report age, queries in flight |
//! | `GET /metrics` | Prometheus text |
//!
//! Answers to forwarded queries carry `x-continuum-outcome` (`success` / `failure`),
//! `x-continuum-variant` and `x-continuum-cluster`. Errors are `{"error": …}`: 400 malformed,
//! 401 missing/wrong admin token, 404 unknown task/stream/route, 405, 413 body too large, 429
//! rejected (`"status": "rejected"`) or rate-limited, 502/504 worker failed/timed out, 503 no
//! feasible worker (`"constraint"`).

use super::server::Ctx;
use super::state::{ApiError, PolicySource, Relayed, task_list};
use super::streams::{OpenRequest, Stream};
use crate::worker::http::{Resp, json_resp, serve_with};
use crate::worker::oip::HEADER_LEN;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Instant;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tracing::Instrument;

/// Accepts connections until `stop`; open connections then finish their requests and close.
pub async fn serve(listener: TcpListener, ctx: Arc<Ctx>, stop: watch::Receiver<bool>) {
    serve_with(listener, stop, move |req| handle(ctx.clone(), req)).await
}

fn err(e: ApiError) -> Resp {
    json_resp(e.status, &e.body)
}

fn empty(status: StatusCode) -> Resp {
    let mut r = Response::new(Full::default());
    *r.status_mut() = status;
    r
}

async fn handle(ctx: Arc<Ctx>, req: Request<Incoming>) -> Result<Resp, Infallible> {
    let t0 = Instant::now();
    let path = req.uri().path().trim_end_matches('/').to_string();
    let parts: Vec<&str> = path.split('/').skip(1).collect();
    let method = req.method().clone();
    let get = method == Method::GET || method == Method::HEAD;
    let post = method == Method::POST;
    let st = &ctx.state;
    let resp = match parts.as_slice() {
        ["v1", "streams"] if post => open_stream(&ctx, req).await,
        ["v1", "streams", id, "infer"] if post => match stream_of(&ctx, id) {
            Ok(s) => stream_infer(&ctx, s, req, t0).await,
            Err(e) => err(e),
        },
        ["v1", "streams", id] if method == Method::DELETE => match parse_id(id) {
            Some(n) if st.close(n) => empty(StatusCode::NO_CONTENT),
            _ => err(unknown_stream(&ctx, id)),
        },
        ["v1", "streams", id] if get => match stream_of(&ctx, id) {
            Ok(s) => json_resp(StatusCode::OK, &stream_json(&s)),
            Err(e) => err(e),
        },
        ["v1", "policy"] if get => json_resp(StatusCode::OK, &policy_json(&ctx)),
        ["v1", "policy"] if method == Method::PUT => put_policy(&ctx, req).await,
        ["v1", "reload"] if post => match authorise(&ctx, &req) {
            Err(e) => err(e),
            Ok(()) => match ctx.reload().await {
                Ok(g) => json_resp(
                    StatusCode::OK,
                    &json!({"generation": g, "streams": st.streams.len()}),
                ),
                Err(e) => err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    format!("reload failed, the running configuration is kept: {e:#}"),
                )),
            },
        },
        ["v1", "workers"] if get => json_resp(StatusCode::OK, &workers_json(&ctx)),
        ["metrics"] if get => {
            let mut r = Response::new(Full::new(Bytes::from(st.metrics.encode())));
            r.headers_mut().insert(
                CONTENT_TYPE,
                HeaderValue::from_static(
                    "application/openmetrics-text; version=1.0.0; charset=utf-8",
                ),
            );
            r
        }
        ["v2"] if get => json_resp(
            StatusCode::OK,
            &json!({"name": "continuum-gateway", "version": env!("CARGO_PKG_VERSION"),
                    "extensions": ["binary_tensor_data"]}),
        ),
        ["v2", "health", "live"] if get => empty(StatusCode::OK),
        ["v2", "health", "ready"] if get => {
            if st.snapshot().reach.is_empty() {
                err(ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "no worker is up",
                ))
            } else {
                empty(StatusCode::OK)
            }
        }
        ["v2", "models", task, rest @ ..] => {
            let rest = match rest {
                ["versions", _, tail @ ..] => tail,
                tail => tail,
            };
            model_route(&ctx, task, rest, &method, req, t0).await
        }
        ["v1", ..] | ["v2", ..] | ["metrics"] => err(ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            format!("method {method} not allowed on {path}"),
        )),
        _ => err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("no route for {path}"),
        )),
    };
    Ok(resp)
}

fn parse_id(id: &str) -> Option<u64> {
    id.parse().ok()
}

fn unknown_stream(ctx: &Ctx, id: &str) -> ApiError {
    ctx.state
        .metrics
        .bad_requests
        .get_or_create(&super::metrics::ResultLabel {
            result: "unknown_stream",
        })
        .inc();
    ApiError::new(
        StatusCode::NOT_FOUND,
        format!("unknown stream `{id}` (never opened, closed, or idle past the timeout)"),
    )
}

fn stream_of(ctx: &Ctx, id: &str) -> Result<Arc<Stream>, ApiError> {
    parse_id(id)
        .and_then(|n| ctx.state.streams.get(n))
        .ok_or_else(|| unknown_stream(ctx, id))
}

/// Reads a body within the configured limit; also returns the binary-extension header length.
async fn read_body(ctx: &Ctx, req: Request<Incoming>) -> Result<(Bytes, Option<usize>), ApiError> {
    let limit = ctx.plan().cfg.http.max_body_bytes;
    let too_large = || {
        ctx.state
            .metrics
            .bad_requests
            .get_or_create(&super::metrics::ResultLabel {
                result: "too_large",
            })
            .inc();
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("request body over the limit of {limit} bytes"),
        )
    };
    let declared = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|h| h.to_str().ok())
        .and_then(|s| s.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let header_len = match req.headers().get(HEADER_LEN) {
        None => None,
        Some(h) => Some(
            h.to_str()
                .ok()
                .and_then(|s| s.trim().parse::<usize>().ok())
                .ok_or_else(|| {
                    ApiError::new(
                        StatusCode::BAD_REQUEST,
                        "Inference-Header-Content-Length must be a byte count",
                    )
                })?,
        ),
    };
    match Limited::new(req.into_body(), limit).collect().await {
        Ok(b) => Ok((b.to_bytes(), header_len)),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Err(e) => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("cannot read the request body: {e}"),
        )),
    }
}

async fn open_stream(ctx: &Ctx, req: Request<Incoming>) -> Resp {
    let (body, _) = match read_body(ctx, req).await {
        Ok(b) => b,
        Err(e) => return err(e),
    };
    let open: OpenRequest = match serde_json::from_slice(&body) {
        Ok(o) => o,
        Err(e) => {
            ctx.state
                .metrics
                .stream_opens
                .get_or_create(&super::metrics::ResultLabel {
                    result: "bad_request",
                })
                .inc();
            return err(ApiError::new(
                StatusCode::BAD_REQUEST,
                format!("invalid stream request JSON: {e}"),
            ));
        }
    };
    match ctx.state.open(open) {
        Ok((s, b)) => {
            let _span = tracing::debug_span!("stream", id = s.id).entered();
            json_resp(
                StatusCode::CREATED,
                &json!({
                    "stream_id": s.id,
                    "variant": &*b.variant,
                    "cluster": &*b.cluster,
                    "worker": b.upstream.cfg.name,
                    "expected_delay_ms": b.expected_ms,
                    "policy": ctx.state.policy().0.name(),
                }),
            )
        }
        Err(e) => err(e),
    }
}

fn relayed(r: Relayed) -> Resp {
    let mut resp = Response::new(Full::new(r.body));
    let h = resp.headers_mut();
    match r.header_len {
        Some(n) => {
            h.insert(
                CONTENT_TYPE,
                HeaderValue::from_static("application/octet-stream"),
            );
            h.insert(HEADER_LEN, HeaderValue::from(n));
        }
        None => {
            h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        }
    }
    h.insert("x-continuum-outcome", HeaderValue::from_static(r.outcome));
    if let Ok(v) = HeaderValue::from_str(&r.variant) {
        h.insert("x-continuum-variant", v);
    }
    if let Ok(v) = HeaderValue::from_str(&r.cluster) {
        h.insert("x-continuum-cluster", v);
    }
    resp
}

async fn stream_infer(ctx: &Ctx, s: Arc<Stream>, req: Request<Incoming>, t0: Instant) -> Resp {
    let span = tracing::debug_span!("query", stream = s.id);
    stream_query(ctx, s, req, t0).instrument(span).await
}

async fn stream_query(ctx: &Ctx, s: Arc<Stream>, req: Request<Incoming>, t0: Instant) -> Resp {
    let (body, header_len) = match read_body(ctx, req).await {
        Ok(b) => b,
        Err(e) => return err(e),
    };
    // Parsed where needed (QUIC upstreams); HTTP upstreams validate the body themselves.
    match ctx.state.forward(&s, None, body, header_len, t0).await {
        Ok(r) => relayed(r),
        Err(e) => err(e),
    }
}

async fn model_route(
    ctx: &Ctx,
    task: &str,
    rest: &[&str],
    method: &Method,
    req: Request<Incoming>,
    t0: Instant,
) -> Resp {
    let plan = ctx.plan();
    let Some(spec) = plan.task(task) else {
        return err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("unknown model `{task}`; served tasks: {}", task_list(&plan)),
        ));
    };
    let get = *method == Method::GET || *method == Method::HEAD;
    match (rest, get, *method == Method::POST) {
        ([], true, _) => {
            let dims = |item: &[usize]| {
                let mut v = vec![-1i64];
                v.extend(item.iter().map(|d| *d as i64));
                v
            };
            json_resp(
                StatusCode::OK,
                &json!({
                    "name": spec.name,
                    "versions": ["1"],
                    "platform": "continuum-gateway",
                    "inputs": [{"name": spec.io.input, "datatype": "FP32", "shape": dims(&spec.io.shape)}],
                    "outputs": [{"name": spec.io.output, "datatype": "FP32", "shape": dims(&spec.io.output_shape)}],
                }),
            )
        }
        (["ready"], true, _) => {
            let snap = ctx.state.snapshot();
            let served = snap
                .reach
                .iter()
                .any(|r| snap.plan.fleet.workers[r.worker as usize].task == spec.id);
            if served {
                empty(StatusCode::OK)
            } else {
                err(ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!("no worker serving `{task}` is up"),
                ))
            }
        }
        (["infer"], _, true) => one_shot(ctx, &plan, spec, req, t0).await,
        ([] | ["ready"] | ["infer"], _, _) => err(ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method not allowed",
        )),
        _ => err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("no route for model `{task}`"),
        )),
    }
}

/// A one-shot OIP query: a stream of one query, bound, forwarded and closed.
async fn one_shot(
    ctx: &Ctx,
    plan: &super::plan::Plan,
    spec: &super::plan::TaskSpec,
    req: Request<Incoming>,
    t0: Instant,
) -> Resp {
    let task = spec.name.as_str();
    let (body, header_len) = match read_body(ctx, req).await {
        Ok(b) => b,
        Err(e) => return err(e),
    };
    let parsed = match ctx.state.parse(spec, &body, header_len) {
        Ok(p) => p,
        Err(e) => return err(e),
    };
    let num = |k: &'static str| parsed.parameters.get(k).map(|v| v.as_f64().ok_or(k));
    let (max_delay, min_acc) = match (num("max_delay_ms"), num("min_accuracy")) {
        (Some(Err(k)), _) | (_, Some(Err(k))) => {
            return err(ApiError::new(
                StatusCode::BAD_REQUEST,
                format!("parameters.{k} must be a number"),
            ));
        }
        (d, a) => (
            d.and_then(Result::ok)
                .unwrap_or(plan.cfg.upstream_timeout_ms as f64),
            a.and_then(Result::ok).unwrap_or(0.0),
        ),
    };
    let open = OpenRequest {
        task: task.to_string(),
        app: Some("oneshot".into()),
        max_delay_ms: max_delay,
        min_accuracy: min_acc,
        // One query: its rate is one per its deadline at most. assumption: 1 qps.
        rate_fps: 1.0,
        frame_kb: (body.len() as f64 / 1024.0).max(1e-3),
        access_ms: Some(0.0),
        tx_ms: Some(0.0),
    };
    if let Err(m) = open.validate() {
        return err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("parameters.{m}"),
        ));
    }
    let stream = Stream {
        id: 0,
        app: Arc::from("oneshot"),
        access_ms: 0.0,
        bucket: 0,
        binding: std::sync::Mutex::new(None),
        last_ms: AtomicU64::new(0),
        rng: std::sync::Mutex::new(crate::rng::stream_rng(
            plan.cfg.seed,
            crate::rng::Purpose::Other,
            plan.sched as u64,
            ctx.state.query_count(),
        )),
        req: open,
    };
    match ctx
        .state
        .forward(&stream, Some(parsed), body, header_len, t0)
        .await
    {
        Ok(r) => relayed(r),
        Err(e) => err(e),
    }
}

fn stream_json(s: &Stream) -> Value {
    let b = s.binding();
    json!({
        "stream_id": s.id,
        "task": s.req.task,
        "app": &*s.app,
        "max_delay_ms": s.req.max_delay_ms,
        "min_accuracy": s.req.min_accuracy,
        "rate_fps": s.req.rate_fps,
        "frame_kb": s.req.frame_kb,
        "variant": b.as_ref().map(|b| b.variant.to_string()),
        "cluster": b.as_ref().map(|b| b.cluster.to_string()),
        "worker": b.as_ref().map(|b| b.upstream.cfg.name.clone()),
        "expected_delay_ms": b.as_ref().map(|b| b.expected_ms),
    })
}

fn policy_json(ctx: &Ctx) -> Value {
    let (p, src) = ctx.state.policy();
    json!({
        "policy": p.name(),
        "source": src.name(),
        "agent": ctx.has_agent(),
        "actions": ctx.agent_actions(),
        "policies": crate::policy::names(),
    })
}

fn authorise(ctx: &Ctx, req: &Request<Incoming>) -> Result<(), ApiError> {
    let plan = ctx.plan();
    let given = req
        .headers()
        .get(AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|s| s.strip_prefix("Bearer "));
    match (&plan.cfg.admin_token, given) {
        (Some(t), Some(g)) if constant_time_eq(t.as_bytes(), g.as_bytes()) => Ok(()),
        (None, _) => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "admin routes are disabled: no admin_token is configured",
        )),
        _ => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "missing or wrong admin token (Authorization: Bearer <token>)",
        )),
    }
}

/// Compares without an early exit, so timing does not reveal a token's prefix.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn put_policy(ctx: &Ctx, req: Request<Incoming>) -> Resp {
    if let Err(e) = authorise(ctx, &req) {
        return err(e);
    }
    let (body, _) = match read_body(ctx, req).await {
        Ok(b) => b,
        Err(e) => return err(e),
    };
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Put {
        policy: Option<String>,
    }
    let put: Put = match serde_json::from_slice(&body) {
        Ok(p) => p,
        Err(e) => {
            return err(ApiError::new(
                StatusCode::BAD_REQUEST,
                format!("expected {{\"policy\": <name or null>}}: {e}"),
            ));
        }
    };
    match put.policy {
        None => {
            let plan = ctx.plan();
            let p = crate::policy::by_name(&plan.cfg.policy).expect("validated policy");
            ctx.state.unpin(p);
        }
        Some(name) => match crate::policy::by_name(&name) {
            Some(p) => {
                ctx.state.set_policy(p, PolicySource::Pinned);
            }
            None => {
                return err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    format!(
                        "unknown policy `{name}`; known policies: {}",
                        crate::policy::names().join(", ")
                    ),
                ));
            }
        },
    }
    tracing::info!(
        policy = ctx.state.policy().0.name(),
        source = ctx.state.policy().1.name(),
        "policy set by operator"
    );
    json_resp(StatusCode::OK, &policy_json(ctx))
}

fn workers_json(ctx: &Ctx) -> Value {
    let max = ctx.plan().cfg.max_in_flight_per_worker;
    let ws: Vec<Value> = ctx
        .upstreams()
        .iter()
        .map(|u| {
            let rtt = u.rtt();
            json!({
                "name": u.cfg.name,
                "cluster": u.cfg.cluster,
                "protocol": format!("{:?}", u.cfg.protocol).to_lowercase(),
                "address": u.cfg.address,
                "up": u.is_up(),
                "rtt_ms": (rtt.samples > 0).then_some(rtt.srtt_ms),
                "report_age_ms": u.report_age().map(|a| a.as_secs_f64() * 1e3),
                "in_flight": max - u.permits.available_permits(),
            })
        })
        .collect();
    let snap = ctx.state.snapshot();
    let streams: std::collections::BTreeMap<String, usize> =
        ctx.state
            .streams
            .all()
            .iter()
            .fold(Default::default(), |mut m, s| {
                if let Some(b) = s.binding() {
                    *m.entry(b.upstream.cfg.name.clone()).or_default() += 1;
                }
                m
            });
    json!({
        "workers": ws,
        "streams_by_worker": streams,
        "reachable_variants": snap.reach.len(),
        "load_view_age_ms": snap.max_age.as_secs_f64() * 1e3,
    })
}
