//! The HTTP front end (hyper; HTTP/1.1 and HTTP/2 over cleartext): Open Inference Protocol v2
//! routes and `/metrics`. The routes other than inference answer from the shared OIP core
//! ([`super::oip_core`]), so the gateway serves them the same way.
//!
//! | route | answer |
//! |---|---|
//! | `GET /v2` | server metadata |
//! | `GET /v2/health/live`, `/v2/health/ready` | 200 (ready: 503 while shutting down) |
//! | `GET /v2/models/{m}[/versions/{v}]` | model metadata (with `max_batch_size`), 404 if unknown |
//! | `GET /v2/models/{m}[/versions/{v}]/ready` | 200, 404 if unknown |
//! | `GET /v2/models/{m}[/versions/{v}]/config` | Triton model configuration |
//! | `GET /v2/models[/{m}[/versions/{v}]]/stats` | Triton statistics extension |
//! | `POST /v2/repository/index` | Triton repository index (`{"ready": true}`: ready ones only) |
//! | `POST /v2/repository/models/{m}/load`, `/unload` | Triton model-repository extension: an unload stops taking queries, answers those queued and frees the model; a load reads and warms it again |
//! | `POST /v2/models/{m}[/versions/{v}]/infer` | inference ([`super::oip`]); gzip/deflate bodies |
//! | `GET /metrics` | Prometheus text |
//!
//! Errors are `{"error": "…"}` with 400 (bad input), 404 (unknown model, version or route),
//! 405 (wrong method on a known route), 408 (body not received in time), 413 (body over
//! `http.max_body_bytes` after decompression), 415 (unsupported `Content-Encoding`), 429
//! (rejected by admission; the body also says `"status": "rejected"`), 431 (header fields over
//! the limits), 500 (inference failed), 503 (shutting down).

use crate::oip;
use crate::oip_core::{self, OipCore, OipError};
use crate::query::QueryError;
use crate::serve::{BodyError, ServeLimits, read_body};
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::json;

pub use crate::oip_core::query_status;
pub use crate::serve::{Resp, json_resp, serve_with};

/// An error response: `{"error": msg}` with `status`.
pub fn error(status: StatusCode, msg: impl std::fmt::Display) -> Resp {
    json_resp(status, &json!({"error": msg.to_string()}))
}

/// The HTTP status and body of a query error.
pub fn query_error(e: &QueryError) -> Resp {
    let mut body = json!({"error": e.to_string()});
    if matches!(e, QueryError::Rejected(_)) {
        body["status"] = json!("rejected");
    }
    json_resp(query_status(e), &body)
}

/// An OIP error as a response.
pub fn oip_error(e: OipError) -> Resp {
    error(e.status, e.message)
}

/// What an OIP path under `/v2` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OipPath<'a> {
    /// `/v2`: server metadata.
    Server,
    /// `/v2/health/live`.
    Live,
    /// `/v2/health/ready`.
    Ready,
    /// `/v2/models/stats`: statistics of every model.
    AllStats,
    /// `/v2/repository/index`.
    Index,
    /// `/v2/repository/models/{m}/load` (`load`) or `/unload`.
    Repository {
        /// Model name.
        name: &'a str,
        /// Load rather than unload.
        load: bool,
    },
    /// `/v2/models/{m}[/versions/{v}]{tail}`.
    Model {
        /// Model name.
        name: &'a str,
        /// Version named in the path.
        version: Option<&'a str>,
        /// What of the model.
        what: ModelPart,
    },
}

/// The part of a model a path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelPart {
    /// Metadata.
    Metadata,
    /// Readiness.
    Ready,
    /// Triton model configuration.
    Config,
    /// Statistics.
    Stats,
    /// Inference.
    Infer,
}

impl OipPath<'_> {
    /// The method that path takes (GET also allows HEAD).
    pub fn method(&self) -> Method {
        match self {
            Self::Index
            | Self::Repository { .. }
            | Self::Model {
                what: ModelPart::Infer,
                ..
            } => Method::POST,
            _ => Method::GET,
        }
    }
}

/// Parses the segments of a path (without the leading empty one); `None` for a path that
/// names nothing (404).
pub fn oip_path<'a>(parts: &[&'a str]) -> Option<OipPath<'a>> {
    Some(match parts {
        ["v2"] => OipPath::Server,
        ["v2", "health", "live"] => OipPath::Live,
        ["v2", "health", "ready"] => OipPath::Ready,
        ["v2", "models", "stats"] => OipPath::AllStats,
        ["v2", "repository", "index"] => OipPath::Index,
        ["v2", "repository", "models", name, "load"] => OipPath::Repository { name, load: true },
        ["v2", "repository", "models", name, "unload"] => OipPath::Repository { name, load: false },
        ["v2", "models", name, rest @ ..] => {
            let (version, tail) = match rest {
                ["versions", v, tail @ ..] => (Some(*v), tail),
                tail => (None, tail),
            };
            let what = match tail {
                [] => ModelPart::Metadata,
                ["ready"] => ModelPart::Ready,
                ["config"] => ModelPart::Config,
                ["stats"] => ModelPart::Stats,
                ["infer"] => ModelPart::Infer,
                _ => return None,
            };
            OipPath::Model {
                name,
                version,
                what,
            }
        }
        _ => return None,
    })
}

/// `None` when `method` is the one `path` takes; otherwise the 405 answer.
pub fn check_method(path: &OipPath, method: &Method) -> Option<Resp> {
    let want = path.method();
    if *method == want || (want == Method::GET && *method == Method::HEAD) {
        None
    } else {
        Some(error(
            StatusCode::METHOD_NOT_ALLOWED,
            format!("method not allowed: use {want}, not {method}"),
        ))
    }
}

/// Answers every OIP route but inference (`path.what != Infer`) from `core`; the method has
/// been checked.
pub async fn oip_answer<C: OipCore + ?Sized>(
    core: &C,
    path: OipPath<'_>,
    req: Request<Incoming>,
    limits: &ServeLimits,
) -> Resp {
    let r = match path {
        OipPath::Server => Ok(json_resp(
            StatusCode::OK,
            &oip_core::server_json(&core.server()),
        )),
        OipPath::Live => Ok(Response::new(Full::default())),
        OipPath::Ready if core.ready() => Ok(Response::new(Full::default())),
        OipPath::Ready => Err(OipError::new(StatusCode::SERVICE_UNAVAILABLE, "not ready")),
        OipPath::AllStats => core
            .stats(None)
            .map(|s| json_resp(StatusCode::OK, &oip_core::stats_json(&s))),
        OipPath::Index => match read_body(req, limits).await {
            Err(e) => Err(OipError::new(e.status(), e.to_string())),
            Ok((body, _)) => index_request(&body).map(|ready| {
                json_resp(StatusCode::OK, &oip_core::index_json(&core.models(), ready))
            }),
        },
        OipPath::Repository { name, load } => match read_body(req, limits).await {
            // The body (Triton's optional load parameters) is read and not used.
            Err(e) => Err(OipError::new(e.status(), e.to_string())),
            Ok(_) => core
                .set_loaded(name, load)
                .await
                .map(|()| json_resp(StatusCode::OK, &json!({}))),
        },
        OipPath::Model {
            name,
            version,
            what,
        } => model_answer(core, name, version, what),
    };
    r.unwrap_or_else(oip_error)
}

fn model_answer<C: OipCore + ?Sized>(
    core: &C,
    name: &str,
    version: Option<&str>,
    what: ModelPart,
) -> Result<Resp, OipError> {
    let m = core.model(name)?;
    check_version(name, version)?;
    Ok(match what {
        ModelPart::Metadata => json_resp(StatusCode::OK, &oip_core::metadata_json(&m)),
        ModelPart::Ready if m.ready => Response::new(Full::default()),
        ModelPart::Ready => {
            return Err(OipError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("model `{name}` is not ready"),
            ));
        }
        ModelPart::Config => json_resp(StatusCode::OK, &oip_core::config_json(&m)),
        ModelPart::Stats => json_resp(
            StatusCode::OK,
            &oip_core::stats_json(&core.stats(Some(name))?),
        ),
        ModelPart::Infer => {
            return Err(OipError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "inference is routed by the server",
            ));
        }
    })
}

/// Every model has one version, `1`; a path or request naming another gets 404.
pub fn check_version(model: &str, version: Option<&str>) -> Result<(), OipError> {
    match version {
        None | Some("") | Some("1") => Ok(()),
        Some(v) => Err(OipError::new(
            StatusCode::NOT_FOUND,
            format!("model `{model}` has no version `{v}`: its only version is 1"),
        )),
    }
}

/// The `ready` flag of a repository index request (an empty body means all models).
fn index_request(body: &[u8]) -> Result<bool, OipError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(false);
    }
    #[derive(serde::Deserialize)]
    struct Index {
        #[serde(default)]
        ready: bool,
    }
    serde_json::from_slice::<Index>(body)
        .map(|i| i.ready)
        .map_err(|e| {
            OipError::new(
                StatusCode::BAD_REQUEST,
                format!("invalid repository index request JSON: {e}"),
            )
        })
}

/// The path's segments, without the leading empty one and trailing slashes.
pub fn segments(path: &str) -> Vec<&str> {
    path.trim_end_matches('/').split('/').skip(1).collect()
}

/// A body-reading error as a response.
pub fn body_error(e: &BodyError) -> Resp {
    error(e.status(), e)
}

/// An inference answer: JSON, or JSON and binary tensors with the
/// `Inference-Header-Content-Length` header.
pub fn infer_resp(bytes: Vec<u8>, header_len: Option<usize>) -> Resp {
    let mut r = Response::new(Full::new(Bytes::from(bytes)));
    let h = r.headers_mut();
    match header_len {
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
