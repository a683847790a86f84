//! The admin API: the operator's routes, apart from the data plane ([`crate::front::api`]).
//!
//! | route | answer |
//! |---|---|
//! | `GET /v1/policy`, `PUT /v1/policy` | each stream class's active policy and mitigation; pin or unpin them (admin token) |
//! | `POST /v1/reload` | re-read the configuration (admin token) |
//! | `GET /v1/workers` | live workers: up, RTT, report age, queries in flight |
//! | `GET /metrics` | Prometheus text |
//!
//! The full description of each route is in [`crate::front::api`]'s table.

use crate::config::live_mitigation;
use crate::control::ControlPlane;
use crate::error::ApiError;
use crate::front::respond::{err, read_body};
use crate::state::policies::ClassPolicy;
use bytes::Bytes;
use continuum_wire::http::{Resp, json_resp};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};
use std::sync::Arc;

/// Whether `parts` (the path's segments) name an admin route, whatever the method.
pub(crate) fn is_admin(parts: &[&str]) -> bool {
    matches!(parts, ["v1", "policy" | "reload" | "workers"] | ["metrics"])
}

/// Answers an admin route with an allowed method; `None` when the method is not one of the
/// route's (the caller answers 405).
pub(crate) async fn route(
    ctx: &Arc<ControlPlane>,
    parts: &[&str],
    method: &Method,
    req: Request<Incoming>,
) -> Option<Resp> {
    let get = *method == Method::GET || *method == Method::HEAD;
    let post = *method == Method::POST;
    let st = &ctx.state;
    Some(match parts {
        ["v1", "policy"] if get => json_resp(StatusCode::OK, &policy_json(ctx)),
        ["v1", "policy"] if *method == Method::PUT => put_policy(ctx, req).await,
        ["v1", "reload"] if post => match authorise(ctx, &req) {
            Err(e) => err(e),
            Ok(()) => match ctx.reload().await {
                Ok(g) => json_resp(
                    StatusCode::OK,
                    &json!({"generation": g, "streams": st.streams().len()}),
                ),
                Err(e) => err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    format!("reload failed, the running configuration is kept: {e:#}"),
                )),
            },
        },
        ["v1", "workers"] if get => json_resp(StatusCode::OK, &workers_json(ctx)),
        ["metrics"] if get => {
            let mut r = Response::new(Full::new(Bytes::from(st.metrics().encode())));
            r.headers_mut().insert(
                CONTENT_TYPE,
                HeaderValue::from_static(
                    "application/openmetrics-text; version=1.0.0; charset=utf-8",
                ),
            );
            r
        }
        _ => return None,
    })
}

fn policy_json(ctx: &ControlPlane) -> Value {
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

fn authorise(ctx: &ControlPlane, req: &Request<Incoming>) -> Result<(), ApiError> {
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

async fn put_policy(ctx: &ControlPlane, req: Request<Incoming>) -> Resp {
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
                    "expected {{\"policy\": <name or null>, \"class\": <name, optional>, \"mitigation\": <none | reissue@r | discard@r | null, optional; restart@r and tdp@r are simulator-only>}}: {e}"
                ),
            ));
        }
    };
    let mitigation = match put.mitigation.as_deref().map(live_mitigation) {
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
                continuum_core::policy::unknown(name),
            ));
        }
    };
    let class = match put.class.as_deref() {
        None => None,
        Some(name) => match ctx.state.class_index(name) {
            Some(c) => Some(c),
            None => {
                return err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    format!(
                        "unknown class `{name}`; known classes: {}",
                        ctx.state.class_names().join(", ")
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

fn workers_json(ctx: &ControlPlane) -> Value {
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
            .streams()
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
