//! The client endpoint (hyper 1.x; HTTP/1.1 and HTTP/2 over cleartext on one port).
//!
//! | route | answer |
//! |---|---|
//! | `POST /v1/streams` | open a stream: 201 `{stream_id, variant, cluster, worker, expected_delay_ms, class, policy}` (its stream class and the policy that bound it); 503 naming the constraint no candidate met; 429 when opens are rate-limited |
//! | `POST /v1/streams/{id}/infer` | an OIP v2 inference request, forwarded to the bound worker |
//! | `GET /v1/streams/{id}`, `DELETE /v1/streams/{id}` | the binding, with its class and policy; close (204) |
//! | `POST /v2/models/{task}/infer` | one-shot: binds with `max_delay_ms` / `min_accuracy` from the request `parameters` and its batch items, forwards, unbinds; classed as app `oneshot` at 1 qps |
//! | `GET /v2`, `/v2/health/live`, `/v2/health/ready`, `/v2/models/{task}[/ready,/config,/stats]`, `/v2/models/stats`, `POST /v2/repository/index` | OIP v2 metadata, health and Triton's tooling routes, from the shared OIP core ([`super::oip`]) |
//! | `GET /v1/policy` | `{classes: [{class, policy, source}], policy, source, mitigation, mitigation_source, agent, actions, policies}`: each stream class's active policy and where it came from (`static`, `agent`, `pinned`); the top-level `policy` / `source` are those every class shares, else `"mixed"` |
//! | `PUT /v1/policy` | pin a policy (admin token): `{"policy": name, "class": name}`, or `"policy": null` to unpin; without `class`, every class; an unknown class is 400 naming the known ones; `{"mitigation": "reissue@0.8"}` (alone or with a policy) pins the tail-latency mitigation, `"mitigation": null` returns to the configured one; answers as `GET` |
//! | `POST /v1/reload` | re-read the configuration (admin token); stream classes and policies start afresh (pins are dropped) |
//! | `GET /v1/workers` | live workers: up, RTT, report age, queries in flight |
//! | `GET /metrics` | Prometheus text |
//!
//! A stream id is the stream's token ([`super::token`]): unguessable, and enough for a
//! restarted gateway to re-bind the stream. Answers to forwarded queries carry
//! `x-continuum-outcome` (`success` / `failure`), `x-continuum-variant` and
//! `x-continuum-cluster`. Errors are `{"error": …}`: 400 malformed, 401 missing/wrong admin
//! token, 404 unknown task/stream/route, 405 wrong method on a known route, 408 body too slow,
//! 413 body too large (after decompression), 415 unsupported `Content-Encoding`, 429 rejected
//! (`"status": "rejected"`) or rate-limited, 431 header fields too large, 502/504 worker
//! failed/timed out, 503 no feasible worker (`"constraint"`).

use super::ctx::Ctx;
use super::policies::ClassPolicy;
use super::relay::Wire;
use super::state::{ApiError, Relayed, task_list};
use super::streams::{OpenRequest, Stream};
use bytes::Bytes;
use continuum_core::mitigation::Mitigation;
use continuum_wire::http::{
    ModelPart, OipPath, Resp, check_method, check_version, json_resp, oip_answer, oip_path,
    segments, serve_with,
};
use continuum_wire::oip::HEADER_LEN;
use continuum_wire::serve::{self, BodyError};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tracing::Instrument;

/// Accepts connections until `stop`; open connections then finish their requests and close.
pub async fn serve(listener: TcpListener, ctx: Arc<Ctx>, stop: watch::Receiver<bool>) {
    let limits = ctx.plan().cfg.http.limits.clone();
    serve_with(listener, limits, stop, move |req| handle(ctx.clone(), req)).await
}

fn err(e: ApiError) -> Resp {
    json_resp(e.status, &e.body)
}

fn empty(status: StatusCode) -> Resp {
    let mut r = Response::new(Full::default());
    *r.status_mut() = status;
    r
}

fn not_allowed(method: &Method, path: &str) -> Resp {
    err(ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("method {method} not allowed on {path}"),
    ))
}

async fn handle(ctx: Arc<Ctx>, req: Request<Incoming>) -> Result<Resp, Infallible> {
    let t0 = Instant::now();
    let path = req.uri().path().to_string();
    let parts = segments(&path);
    let method = req.method().clone();
    let get = method == Method::GET || method == Method::HEAD;
    let post = method == Method::POST;
    let st = &ctx.state;
    let resp = match parts.as_slice() {
        ["v1", "streams"] if post => open_stream(&ctx, req).await,
        ["v1", "streams", id, "infer"] if post => match ctx.stream_of(id) {
            Ok(s) => stream_infer(&ctx, s, req, t0).await,
            Err(e) => err(e),
        },
        ["v1", "streams", id] if method == Method::DELETE => match ctx.close_stream(id) {
            Ok(()) => empty(StatusCode::NO_CONTENT),
            Err(e) => err(e),
        },
        ["v1", "streams", id] if get => match ctx.stream_of(id) {
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
        ["v1", "streams"]
        | ["v1", "streams", _]
        | ["v1", "streams", _, "infer"]
        | ["v1", "policy" | "reload" | "workers"]
        | ["metrics"] => not_allowed(&method, &path),
        _ => match oip_path(&parts) {
            None => err(ApiError::new(
                StatusCode::NOT_FOUND,
                format!("no route for {path}"),
            )),
            Some(route) => match check_method(&route, &method) {
                Some(r) => r,
                None => oip_route(&ctx, route, req, t0).await,
            },
        },
    };
    Ok(resp)
}

async fn oip_route(
    ctx: &Arc<Ctx>,
    route: OipPath<'_>,
    req: Request<Incoming>,
    t0: Instant,
) -> Resp {
    match route {
        OipPath::Model {
            name,
            version,
            what: ModelPart::Infer,
        } => {
            let plan = ctx.plan();
            let Some(spec) = plan.task(name) else {
                return err(ApiError::new(
                    StatusCode::NOT_FOUND,
                    format!("unknown model `{name}`; served tasks: {}", task_list(&plan)),
                ));
            };
            if let Err(e) = check_version(name, version) {
                return err(ApiError::new(e.status, e.message));
            }
            one_shot(ctx, &plan, spec, req, t0).await
        }
        other => oip_answer(&**ctx, other, req, &ctx.plan().cfg.http.limits).await,
    }
}

/// Reads a body within the configured limits; also returns the binary-extension header length.
async fn read_body(ctx: &Ctx, req: Request<Incoming>) -> Result<(Bytes, Option<usize>), ApiError> {
    let limits = ctx.plan().cfg.http.limits.clone();
    serve::read_body(req, &limits).await.map_err(|e| {
        let result = match e {
            BodyError::TooLarge(_) => "too_large",
            BodyError::Unsupported(_) => "unsupported_encoding",
            BodyError::Timeout(_) => "body_timeout",
            BodyError::Bad(_) => "malformed",
        };
        ctx.state
            .metrics
            .bad_requests
            .get_or_create(&super::metrics::ResultLabel { result })
            .inc();
        ApiError::new(e.status(), e)
    })
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
                    "stream_id": &*s.token,
                    "variant": &*b.variant,
                    "cluster": &*b.cluster,
                    "worker": b.upstream.cfg.name,
                    "expected_delay_ms": b.expected_ms,
                    "class": &*b.class,
                    "policy": b.policy,
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
    match ctx
        .state
        .forward(&s, None, body, Wire::Oip(header_len), t0)
        .await
    {
        Ok(r) => relayed(r),
        Err(e) => err(e),
    }
}

/// A one-shot OIP query over HTTP: the body is relayed as it came to HTTP workers.
async fn one_shot(
    ctx: &Ctx,
    plan: &super::plan::Plan,
    spec: &super::plan::TaskSpec,
    req: Request<Incoming>,
    t0: Instant,
) -> Resp {
    let (body, header_len) = match read_body(ctx, req).await {
        Ok(b) => b,
        Err(e) => return err(e),
    };
    let parsed = match ctx.state.parse(spec, &body, header_len) {
        Ok(p) => p,
        Err(e) => return err(e),
    };
    match ctx.one_shot(plan, spec, parsed, body, header_len, t0).await {
        Ok(r) => relayed(r),
        Err(e) => err(e),
    }
}

fn stream_json(s: &Stream) -> Value {
    let b = s.binding();
    json!({
        "stream_id": &*s.token,
        "task": s.req.task,
        "app": s.req.app,
        "max_delay_ms": s.req.max_delay_ms,
        "min_accuracy": s.req.min_accuracy,
        "rate_fps": s.req.rate_fps,
        "frame_kb": s.req.frame_kb,
        "variant": b.as_ref().map(|b| b.variant.to_string()),
        "cluster": b.as_ref().map(|b| b.cluster.to_string()),
        "worker": b.as_ref().map(|b| b.upstream.cfg.name.clone()),
        "expected_delay_ms": b.as_ref().map(|b| b.expected_ms),
        "class": b.as_ref().map(|b| b.class.to_string()),
        "policy": b.as_ref().map(|b| b.policy),
    })
}

fn policy_json(ctx: &Ctx) -> Value {
    let classes = ctx.state.class_policies();
    // What every class shares, else `mixed` (one class: its own, as before classes existed).
    let shared = |f: fn(&ClassPolicy) -> &'static str| {
        let first = classes.first().map_or("mixed", f);
        if classes.iter().all(|c| f(c) == first) {
            first
        } else {
            "mixed"
        }
    };
    json!({
        "classes": classes
            .iter()
            .map(|c| json!({
                "class": c.class,
                "policy": c.policy,
                "source": c.source.name(),
                "mitigation": ctx.state.mitigation_for(&c.class).name(),
            }))
            .collect::<Vec<_>>(),
        "policy": shared(|c| c.policy),
        "source": shared(|c| c.source.name()),
        "mitigation": ctx.state.mitigation().name(),
        "mitigation_source": if ctx.state.mitigation_pinned() { "pinned" } else { "static" },
        "agent": ctx.has_agent(),
        "actions": ctx.agent_actions(),
        "policies": continuum_core::policy::names(),
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
        #[serde(default)]
        class: Option<String>,
        #[serde(default)]
        mitigation: Option<String>,
    }
    let parsed = serde_json::from_slice::<Value>(&body).and_then(|v| {
        let fields = |k: &str| v.get(k).is_some();
        let (has_policy, has_mitigation) = (fields("policy"), fields("mitigation"));
        serde_json::from_value::<Put>(v).map(|p| (p, has_policy, has_mitigation))
    });
    let (put, has_policy, has_mitigation) = match parsed {
        Ok(p) if p.1 || p.2 => p,
        Ok(_) => {
            return err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "expected `policy` or `mitigation` (or both)",
            ));
        }
        Err(e) => {
            return err(ApiError::new(
                StatusCode::BAD_REQUEST,
                format!(
                    "expected {{\"policy\": <name or null>, \"class\": <name, optional>, \"mitigation\": <none | reissue@r | discard@r | null, optional>}}: {e}"
                ),
            ));
        }
    };
    let mitigation = match put.mitigation.as_deref().map(Mitigation::parse) {
        Some(Err(e)) => return err(ApiError::new(StatusCode::BAD_REQUEST, e)),
        Some(Ok(m)) => Some(m),
        None => None,
    };
    let policy = match put
        .policy
        .as_deref()
        .map(|n| (n, continuum_core::policy::by_name(n)))
    {
        None => None,
        Some((_, Some(p))) => Some(p),
        Some((name, None)) => {
            return err(ApiError::new(
                StatusCode::BAD_REQUEST,
                format!(
                    "unknown policy `{name}`; known policies: {}",
                    continuum_core::policy::names().join(", ")
                ),
            ));
        }
    };
    let class = match put.class.as_deref() {
        None => None,
        Some(name) => match ctx.state.policies.class_index(name) {
            Some(c) => Some(c),
            None => {
                return err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    format!(
                        "unknown class `{name}`; known classes: {}",
                        ctx.state.policies.class_names().join(", ")
                    ),
                ));
            }
        },
    };
    if has_mitigation {
        match mitigation {
            Some(m) => ctx.state.set_mitigation(m, true),
            None => ctx.state.set_mitigation(ctx.plan().cfg.mitigation(), false),
        }
        tracing::info!(mitigation = %ctx.state.mitigation().name(), "mitigation set by operator");
    }
    if has_policy {
        match policy {
            Some(p) => ctx.state.pin_policy(class, p),
            None => ctx.state.unpin_policy(class),
        }
        tracing::info!(
            policy = policy.map_or("(unpinned)", |p| p.name()),
            class = put.class.as_deref().unwrap_or("(every class)"),
            "policy set by operator"
        );
    }
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
