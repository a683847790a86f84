//! The HTTP/1.1 front end (hyper): Open Inference Protocol v2 routes and `/metrics`.
//!
//! | route | answer |
//! |---|---|
//! | `GET /v2` | server metadata |
//! | `GET /v2/health/live`, `/v2/health/ready` | 200 (ready: 503 while shutting down) |
//! | `GET /v2/models/{m}[/versions/{v}]` | model metadata, 404 if unknown |
//! | `GET /v2/models/{m}[/versions/{v}]/ready` | 200, 404 if unknown |
//! | `POST /v2/models/{m}[/versions/{v}]/infer` | inference ([`super::oip`]) |
//! | `GET /metrics` | Prometheus text |
//!
//! Errors are `{"error": "…"}` with 400 (bad input), 404 (unknown model or route), 405 (wrong
//! method), 413 (body over `http.max_body_bytes`), 429 (rejected by admission; the body also
//! says `"status": "rejected"`), 500 (inference failed), 503 (shutting down).

use super::variant::{InferRequest, QueryError};
use super::{Inner, oip};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{CONTENT_LENGTH, CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use std::convert::Infallible;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// A complete response.
pub type Resp = Response<Full<Bytes>>;

/// Accepts connections until `stop` turns true; open connections then finish their current
/// request and close.
pub async fn serve(listener: TcpListener, inner: Arc<Inner>, stop: watch::Receiver<bool>) {
    serve_with(listener, stop, move |req| handle(inner.clone(), req)).await
}

/// Serves `handler` on every connection accepted from `listener` (HTTP/1.1, and HTTP/2 over
/// cleartext) until `stop` turns true; open connections then finish their current request and
/// close. The worker's and the gateway's front ends both run on it.
pub async fn serve_with<H, F>(listener: TcpListener, mut stop: watch::Receiver<bool>, handler: H)
where
    H: Fn(Request<Incoming>) -> F + Clone + Send + Sync + 'static,
    F: std::future::Future<Output = Result<Resp, Infallible>> + Send + 'static,
{
    loop {
        let (tcp, _) = tokio::select! {
            r = listener.accept() => match r {
                Ok(x) => x,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    continue;
                }
            },
            _ = stop.changed() => break,
        };
        let _ = tcp.set_nodelay(true);
        let handler = handler.clone();
        let mut stop = stop.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(handler);
            let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            let conn = builder.serve_connection(TokioIo::new(tcp), svc);
            tokio::pin!(conn);
            tokio::select! {
                r = conn.as_mut() => { let _ = r; }
                _ = stop.changed() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
        });
    }
}

/// A JSON response.
pub fn json_resp(status: StatusCode, v: &Value) -> Resp {
    let mut r = Response::new(Full::new(Bytes::from(
        serde_json::to_vec(v).expect("JSON values serialise"),
    )));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

fn error(status: StatusCode, msg: impl std::fmt::Display) -> Resp {
    json_resp(status, &json!({"error": msg.to_string()}))
}

/// The HTTP status and body of a query error.
pub fn query_error(e: &QueryError) -> Resp {
    let status = match e {
        QueryError::Rejected(_) => StatusCode::TOO_MANY_REQUESTS,
        QueryError::BadInput(_) => StatusCode::BAD_REQUEST,
        QueryError::NotFound(_) => StatusCode::NOT_FOUND,
        QueryError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
        QueryError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        QueryError::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
    };
    let mut body = json!({"error": e.to_string()});
    if matches!(e, QueryError::Rejected(_)) {
        body["status"] = json!("rejected");
    }
    json_resp(status, &body)
}

async fn handle(inner: Arc<Inner>, req: Request<Incoming>) -> Result<Resp, Infallible> {
    let path = req.uri().path().trim_end_matches('/').to_string();
    let parts: Vec<&str> = path.split('/').skip(1).collect();
    let method = req.method().clone();
    let get = method == Method::GET || method == Method::HEAD;
    let resp = match parts.as_slice() {
        ["v2"] if get => json_resp(
            StatusCode::OK,
            &json!({"name": "continuum", "version": env!("CARGO_PKG_VERSION"),
                    "extensions": ["binary_tensor_data"]}),
        ),
        ["v2", "health", "live"] if get => Response::new(Full::default()),
        ["v2", "health", "ready"] if get => {
            if inner.is_shutting_down() {
                error(StatusCode::SERVICE_UNAVAILABLE, "shutting down")
            } else {
                Response::new(Full::default())
            }
        }
        ["metrics"] if get => {
            inner.report();
            let mut r = Response::new(Full::new(Bytes::from(inner.metrics.encode())));
            r.headers_mut().insert(
                CONTENT_TYPE,
                HeaderValue::from_static(
                    "application/openmetrics-text; version=1.0.0; charset=utf-8",
                ),
            );
            r
        }
        ["v2", "models", m, rest @ ..] => {
            let rest = match rest {
                ["versions", _, tail @ ..] => tail,
                tail => tail,
            };
            model_route(&inner, m, rest, &method, req).await
        }
        ["v2", ..] | ["metrics"] => error(StatusCode::METHOD_NOT_ALLOWED, "method not allowed"),
        _ => error(StatusCode::NOT_FOUND, format!("no route for {path}")),
    };
    Ok(resp)
}

async fn model_route(
    inner: &Inner,
    m: &str,
    rest: &[&str],
    method: &Method,
    req: Request<Incoming>,
) -> Resp {
    let get = method == Method::GET || method == Method::HEAD;
    let v = match inner.variant(m) {
        Ok(v) => v.clone(),
        Err(e) => return query_error(&e),
    };
    match (rest, get, method == Method::POST) {
        ([], true, _) => json_resp(
            StatusCode::OK,
            &oip::metadata(
                &v,
                crate::inference::backend::current().map_or("onnx", |b| b.name()),
            ),
        ),
        (["ready"], true, _) => Response::new(Full::default()),
        (["infer"], _, true) => infer(inner, &v, req).await,
        ([] | ["ready"] | ["infer"], _, _) => {
            error(StatusCode::METHOD_NOT_ALLOWED, "method not allowed")
        }
        _ => error(StatusCode::NOT_FOUND, format!("no route for model `{m}`")),
    }
}

async fn infer(inner: &Inner, v: &super::Variant, req: Request<Incoming>) -> Resp {
    let limit = inner.cfg.http.max_body_bytes;
    let too_large = || {
        query_error(&QueryError::TooLarge(format!(
            "request body over the limit of {limit} bytes"
        )))
    };
    let declared = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|h| h.to_str().ok())
        .and_then(|s| s.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return too_large();
    }
    let header_len = match req.headers().get(oip::HEADER_LEN) {
        None => None,
        Some(h) => match h.to_str().ok().and_then(|s| s.trim().parse::<usize>().ok()) {
            Some(n) => Some(n),
            None => {
                return query_error(&QueryError::BadInput(
                    "Inference-Header-Content-Length must be a byte count".into(),
                ));
            }
        },
    };
    let body = match Limited::new(req.into_body(), limit).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => return too_large(),
        Err(e) => {
            return query_error(&QueryError::BadInput(format!(
                "cannot read the request body: {e}"
            )));
        }
    };
    let mut parsed = match oip::parse_infer(&body, header_len, v) {
        Ok(p) => p,
        Err(e) => return query_error(&e),
    };
    let request = InferRequest {
        shape: parsed.shape.clone(),
        data: std::mem::take(&mut parsed.data),
        deadline: parsed.deadline,
        stream: parsed.stream,
    };
    match inner.infer(&v.name, request).await {
        Ok(ans) => {
            let (bytes, hlen) = oip::encode_infer(v, &parsed, &ans);
            let mut r = Response::new(Full::new(Bytes::from(bytes)));
            let h = r.headers_mut();
            match hlen {
                Some(n) => {
                    h.insert(
                        CONTENT_TYPE,
                        HeaderValue::from_static("application/octet-stream"),
                    );
                    h.insert(oip::HEADER_LEN, HeaderValue::from(n));
                }
                None => {
                    h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
                }
            }
            r
        }
        Err(e) => query_error(&e),
    }
}
