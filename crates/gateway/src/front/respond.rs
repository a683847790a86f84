//! Answers and request bodies shared by the client API ([`crate::front::api`]) and the admin API
//! ([`crate::front::admin`]).

use crate::control::ControlPlane;
use crate::error::ApiError;
use bytes::Bytes;
use continuum_wire::http::{Resp, json_resp};
use continuum_wire::serve::{self, BodyError};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};

pub(crate) fn err(e: ApiError) -> Resp {
    json_resp(e.status, &e.body)
}

pub(crate) fn empty(status: StatusCode) -> Resp {
    let mut r = Response::new(Full::default());
    *r.status_mut() = status;
    r
}

pub(crate) fn not_allowed(method: &Method, path: &str) -> Resp {
    err(ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("method {method} not allowed on {path}"),
    ))
}

/// Reads a body within the configured limits; also returns the binary-extension header length.
pub(crate) async fn read_body(
    ctx: &ControlPlane,
    req: Request<Incoming>,
) -> Result<(Bytes, Option<usize>), ApiError> {
    let limits = ctx.plan().cfg.http.limits.clone();
    serve::read_body(req, &limits).await.map_err(|e| {
        let result = match e {
            BodyError::TooLarge(_) => "too_large",
            BodyError::Unsupported(_) => "unsupported_encoding",
            BodyError::Timeout(_) => "body_timeout",
            BodyError::Bad(_) => "malformed",
        };
        ctx.state
            .metrics()
            .bad_requests
            .get_or_create(&crate::metrics::ResultLabel { result })
            .inc();
        ApiError::new(e.status(), e)
    })
}
