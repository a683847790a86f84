//! The worker's HTTP front end: the Open Inference Protocol v2 routes of
//! [`continuum_wire::http`] (the route table is there) served from the worker's variants, and
//! `/metrics`.

use super::Inner;
use bytes::Bytes;
use continuum_wire::InferRequest;
use continuum_wire::http::{
    ModelPart, OipPath, Resp, body_error, check_method, check_version, error, infer_resp,
    oip_answer, oip_error, oip_path, query_error, segments,
};
use continuum_wire::oip;
use continuum_wire::serve::read_body;
use continuum_wire::serve::serve_tls_with;
use continuum_wire::tcp_tls::TlsAcceptor;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use std::convert::Infallible;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// Accepts connections (over TLS with `tls`) until `stop` turns true; open connections then
/// finish their current request and close.
pub async fn serve(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    inner: Arc<Inner>,
    stop: watch::Receiver<bool>,
) {
    let limits = inner.cfg.http.limits.clone();
    serve_tls_with(listener, limits, tls, stop, move |req| {
        handle(inner.clone(), req)
    })
    .await
}

async fn handle(inner: Arc<Inner>, req: Request<Incoming>) -> Result<Resp, Infallible> {
    let path = req.uri().path().to_string();
    let parts = segments(&path);
    let method = req.method().clone();
    if parts == ["metrics"] {
        return Ok(if method == Method::GET || method == Method::HEAD {
            inner.report();
            let mut r = Response::new(Full::new(Bytes::from(inner.metrics.encode())));
            r.headers_mut().insert(
                CONTENT_TYPE,
                HeaderValue::from_static(
                    "application/openmetrics-text; version=1.0.0; charset=utf-8",
                ),
            );
            r
        } else {
            error(
                StatusCode::METHOD_NOT_ALLOWED,
                "method not allowed: use GET",
            )
        });
    }
    let Some(route) = oip_path(&parts) else {
        return Ok(error(
            StatusCode::NOT_FOUND,
            format!("no route for {}", req.uri().path()),
        ));
    };
    if let Some(r) = check_method(&route, &method) {
        return Ok(r);
    }
    let limits = &inner.cfg.http.limits;
    Ok(match route {
        OipPath::Model {
            name,
            version,
            what: ModelPart::Infer,
        } => match (inner.variant(name), check_version(name, version)) {
            (Err(e), _) => after_body(req, limits, query_error(&e)).await,
            (_, Err(e)) => after_body(req, limits, oip_error(e)).await,
            (Ok(v), Ok(())) => {
                let v = v.clone();
                infer(&inner, &v, req).await
            }
        },
        other => oip_answer(&*inner, other, req, limits).await,
    })
}

/// `resp`, sent once the request's body has been read (and dropped): an answer that leaves the
/// body unread makes the server close the connection while a client may already be reusing it
/// for its next request (a broken pipe on that request).
async fn after_body(
    req: Request<Incoming>,
    limits: &continuum_wire::serve::ServeLimits,
    resp: Resp,
) -> Resp {
    let _ = read_body(req, limits).await;
    resp
}

async fn infer(inner: &Inner, v: &super::Variant, req: Request<Incoming>) -> Resp {
    let (body, header_len) = match read_body(req, &inner.cfg.http.limits).await {
        Ok(b) => b,
        Err(e) => return body_error(&e),
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
            infer_resp(bytes, hlen)
        }
        Err(e) => query_error(&e),
    }
}
