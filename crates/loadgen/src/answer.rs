//! What came back for one request, over HTTP or QUIC, as the driver judges it.

use bytes::Bytes;

/// What came back for one request.
pub(super) enum Answer {
    /// A full response.
    Response {
        status: u16,
        outcome: Option<&'static str>,
        body: Bytes,
    },
    /// No response within the timeout.
    Timeout,
    /// The connection failed.
    Transport(String),
}

impl Answer {
    pub(super) fn status_label(&self) -> String {
        match self {
            Answer::Response { status, .. } => status.to_string(),
            Answer::Timeout => "timeout".into(),
            Answer::Transport(_) => "transport".into(),
        }
    }

    pub(super) fn describe(&self) -> String {
        match self {
            Answer::Response { status, body, .. } => {
                // assumption: 200 bytes of an error body are enough to read its cause.
                let n = body.len().min(200);
                format!("{status} {}", String::from_utf8_lossy(&body[..n]))
            }
            Answer::Timeout => "timeout".into(),
            Answer::Transport(e) => format!("transport error: {e}"),
        }
    }
}
