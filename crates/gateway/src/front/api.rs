//! The client endpoint (hyper 1.x; HTTP/1.1 and HTTP/2 over cleartext on one port).
//!
//! | route | answer |
//! |---|---|
//! | `POST /v1/streams` | open a stream: 201 `{stream_id, variant, cluster, worker, expected_delay_ms, class, policy}` (its stream class and the policy that bound it), with `warnings` when the request used a deprecated key (`rate_fps` for `rate_qps`); 503 naming the constraint no candidate met; 429 when opens are rate-limited |
//! | `POST /v1/streams/{id}/infer` | an OIP v2 inference request, forwarded to the bound worker |
//! | `GET /v1/streams/{id}`, `DELETE /v1/streams/{id}` | the binding, with its class and policy; close (204) |
//! | `POST /v2/models/{task}/infer` | one-shot: binds with `max_delay_ms` / `min_accuracy` from the request `parameters` and its batch items, forwards, unbinds; classed as app `oneshot` at 1 qps |
//! | `GET /v2`, `/v2/health/live`, `/v2/health/ready`, `/v2/models/{task}[/ready,/config,/stats]`, `/v2/models/stats`, `POST /v2/repository/index` | OIP v2 metadata, health and Triton's tooling routes, from the shared OIP core ([`crate::front::oip`]) |
//! | `GET /v1/policy` | `{classes: [{class, policy, source}], policy, source, mitigation, mitigation_source, agent, actions, policies}`: each stream class's active policy and where it came from (`static`, `agent`, `pinned`); the top-level `policy` / `source` are those every class shares, else `"mixed"` |
//! | `PUT /v1/policy` | pin a policy (admin token): `{"policy": name, "class": name}`, or `"policy": null` to unpin; without `class`, every class; an unknown class is 400 naming the known ones; `{"mitigation": "reissue@0.8"}` (alone or with a policy) pins the tail-latency mitigation, `"mitigation": null` returns to the configured one; answers as `GET` |
//! | `POST /v1/reload` | re-read the configuration (admin token); stream classes and policies start afresh (pins are dropped) |
//! | `GET /v1/workers` | live workers: up, RTT, report age, queries in flight |
//! | `GET /metrics` | Prometheus text |
//!
//! A stream id is the stream's token ([`crate::state::token`]): unguessable, and enough for a
//! restarted gateway to re-bind the stream. Answers to forwarded queries carry
//! `x-continuum-outcome` (`success` / `failure`), `x-continuum-variant` and
//! `x-continuum-cluster`. Errors are `{"error": …}`: 400 malformed, 401 missing/wrong admin
//! token, 404 unknown task/stream/route, 405 wrong method on a known route, 408 body too slow,
//! 413 body too large (after decompression), 415 unsupported `Content-Encoding`, 429 rejected
//! (`"status": "rejected"`) or rate-limited, 431 header fields too large, 502/504 worker
//! failed/timed out, 503 no feasible worker (`"constraint"`).

use crate::control::ControlPlane;
use crate::decide::Decider;
use crate::error::ApiError;
use crate::forward::Forwarder;
use crate::forward::relay::Relayed;
use crate::forward::relay::Wire;
use crate::front::admin;
use crate::front::respond::{empty, err, not_allowed, read_body};
use crate::state::streams::{OLD_RATE_KEY, OpenRequest, Stream};
use crate::state::task_list;
use continuum_wire::http::{
    ModelPart, OipPath, Resp, check_method, check_version, json_resp, oip_answer, oip_path,
    segments,
};
use continuum_wire::oip::HEADER_LEN;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tracing::Instrument;

/// Accepts connections (over TLS when `http.tls` is set) until `stop`; open connections then
/// finish their requests and close.
pub(crate) async fn serve(
    listener: TcpListener,
    ctx: Arc<ControlPlane>,
    stop: watch::Receiver<bool>,
) {
    let limits = ctx.plan().cfg.http.limits.clone();
    let tls = ctx.tls.http.clone();
    continuum_wire::serve::serve_tls_with(listener, limits, tls, stop, move |req| {
        handle(ctx.clone(), req)
    })
    .await
}

async fn handle(ctx: Arc<ControlPlane>, req: Request<Incoming>) -> Result<Resp, Infallible> {
    let t0 = Instant::now();
    let path = req.uri().path().to_string();
    let parts = segments(&path);
    let method = req.method().clone();
    let get = method == Method::GET || method == Method::HEAD;
    let post = method == Method::POST;
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
        p if admin::is_admin(p) => match admin::route(&ctx, p, &method, req).await {
            Some(r) => r,
            None => not_allowed(&method, &path),
        },
        ["v1", "streams"] | ["v1", "streams", _] | ["v1", "streams", _, "infer"] => {
            not_allowed(&method, &path)
        }
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
    ctx: &Arc<ControlPlane>,
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
            // Errors are sent once the body has been read: an answer that leaves it unread
            // closes the connection while the client may be reusing it (over TLS, its next
            // request then fails).
            let Some(spec) = plan.task(name) else {
                let _ = read_body(ctx, req).await;
                return err(ApiError::new(
                    StatusCode::NOT_FOUND,
                    format!("unknown model `{name}`; served tasks: {}", task_list(&plan)),
                ));
            };
            if let Err(e) = check_version(name, version) {
                let _ = read_body(ctx, req).await;
                return err(ApiError::new(e.status, e.message));
            }
            one_shot(ctx, &plan, spec, req, t0).await
        }
        other => oip_answer(&**ctx, other, req, &ctx.plan().cfg.http.limits).await,
    }
}

async fn open_stream(ctx: &ControlPlane, req: Request<Incoming>) -> Resp {
    let (body, _) = match read_body(ctx, req).await {
        Ok(b) => b,
        Err(e) => return err(e),
    };
    let open: OpenRequest = match serde_json::from_slice(&body) {
        Ok(o) => o,
        Err(e) => {
            ctx.state
                .metrics()
                .stream_opens
                .get_or_create(&crate::metrics::ResultLabel {
                    result: "bad_request",
                })
                .inc();
            return err(ApiError::new(
                StatusCode::BAD_REQUEST,
                format!("invalid stream request JSON: {e}"),
            ));
        }
    };
    let warnings = deprecated_keys(&body);
    let opened = match &ctx.pull {
        Some(desk) => Decider::new(&ctx.state).open_pulled(desk, open).await,
        None => Decider::new(&ctx.state).open(open),
    };
    match opened {
        Ok((s, b)) => {
            let _span = tracing::debug_span!("stream", id = s.id()).entered();
            let mut v = json!({
                "stream_id": &**s.token(),
                "variant": &*b.variant,
                "cluster": &*b.cluster,
                "worker": b.upstream.cfg.name,
                "expected_delay_ms": b.expected_ms,
                "class": &*b.class,
                "policy": b.policy,
            });
            if !warnings.is_empty() {
                v["warnings"] = json!(warnings);
            }
            json_resp(StatusCode::CREATED, &v)
        }
        Err(e) => err(e),
    }
}

/// The deprecated keys an open request's body (already parsed) used, each with what replaces
/// it: the answer lists them under `warnings`, and the log says so once per process.
fn deprecated_keys(body: &[u8]) -> Vec<String> {
    static LOGGED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let quoted = format!("\"{OLD_RATE_KEY}\"");
    // In a valid JSON object a quoted name is a key or a whole string value; an `app` named
    // after the old key would only add a spurious warning.
    if !body.windows(quoted.len()).any(|w| w == quoted.as_bytes()) {
        return Vec::new();
    }
    let w = format!("`{OLD_RATE_KEY}` is deprecated: send `rate_qps` (the same quantity)");
    if !LOGGED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        tracing::warn!("a stream open request used a deprecated key: {w}");
    }
    vec![w]
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

async fn stream_infer(
    ctx: &ControlPlane,
    s: Arc<Stream>,
    req: Request<Incoming>,
    t0: Instant,
) -> Resp {
    let span = tracing::debug_span!("query", stream = s.id());
    stream_query(ctx, s, req, t0).instrument(span).await
}

async fn stream_query(
    ctx: &ControlPlane,
    s: Arc<Stream>,
    req: Request<Incoming>,
    t0: Instant,
) -> Resp {
    let (body, header_len) = match read_body(ctx, req).await {
        Ok(b) => b,
        Err(e) => return err(e),
    };
    // Parsed where needed (QUIC upstreams); HTTP upstreams validate the body themselves.
    match Forwarder::new(&ctx.state)
        .forward(&s, None, body, Wire::Oip(header_len), t0)
        .await
    {
        Ok(r) => relayed(r),
        Err(e) => err(e),
    }
}

/// A one-shot OIP query over HTTP: the body is relayed as it came to HTTP workers.
async fn one_shot(
    ctx: &ControlPlane,
    plan: &crate::plan::Plan,
    spec: &crate::plan::TaskSpec,
    req: Request<Incoming>,
    t0: Instant,
) -> Resp {
    let (body, header_len) = match read_body(ctx, req).await {
        Ok(b) => b,
        Err(e) => return err(e),
    };
    let parsed = match Forwarder::new(&ctx.state).parse(spec, &body, header_len) {
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
        "stream_id": &**s.token(),
        "task": s.req().task,
        "app": s.req().app,
        "max_delay_ms": s.req().max_delay_ms,
        "min_accuracy": s.req().min_accuracy,
        "rate_qps": s.req().rate_qps,
        "frame_kb": s.req().frame_kb,
        "variant": b.as_ref().map(|b| b.variant.to_string()),
        "cluster": b.as_ref().map(|b| b.cluster.to_string()),
        "worker": b.as_ref().map(|b| b.upstream.cfg.name.clone()),
        "expected_delay_ms": b.as_ref().map(|b| b.expected_ms),
        "class": b.as_ref().map(|b| b.class.to_string()),
        "policy": b.as_ref().map(|b| b.policy),
    })
}
