//! The gateway's error answer: an HTTP status and a JSON body (`{"error": …}` and context).

use hyper::StatusCode;
use serde_json::{Value, json};

/// An error answer: status and JSON body.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// HTTP status.
    pub(crate) status: StatusCode,
    /// Body (`{"error": …}` and context).
    pub(crate) body: Value,
}

impl ApiError {
    /// An error with just a message.
    pub(crate) fn new(status: StatusCode, msg: impl std::fmt::Display) -> Self {
        Self {
            status,
            body: json!({"error": msg.to_string()}),
        }
    }

    /// A query the gateway or the worker refused (`"status": "rejected"`).
    pub(crate) fn rejected(status: StatusCode, msg: impl std::fmt::Display) -> Self {
        let mut e = Self::new(status, msg);
        e.body["status"] = json!("rejected");
        e
    }
}
