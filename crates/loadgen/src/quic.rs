//! Queries over QUIC (`--quic`): one connection to the gateway's QUIC endpoint, one stream per
//! query carrying an INFER frame whose name is the stream id (the gateway's QUIC front end).
//! Answers are judged as HTTP ones are, an error frame's status standing for the HTTP status
//! the gateway gives the same refusal.

use super::QuicTarget;
use super::answer::Answer;
use super::body::ModelSignature;
use anyhow::Context;
use bytes::Bytes;
use continuum_wire::QuicClient;
use continuum_wire::frame::{self, Response};
use rustls::pki_types::CertificateDer;
use std::time::Duration;

/// A task's query input in wire form: its shape and FP32 little-endian bytes.
#[derive(Debug, Clone)]
pub(crate) struct FrameInput {
    shape: Vec<usize>,
    /// The tensor's bytes, shared by every query of the task.
    pub data: Bytes,
}

impl FrameInput {
    /// The deterministic reference input of `sig` (as the HTTP bodies carry).
    pub(crate) fn reference(sig: &ModelSignature) -> Self {
        let x = continuum_wire::reference_input(sig.shape[0], &sig.shape[1..]);
        let mut data = Vec::with_capacity(x.len() * 4);
        continuum_wire::fp32::extend_le(&mut data, &x);
        Self {
            shape: sig.shape.clone(),
            data: Bytes::from(data),
        }
    }

    /// The INFER frame's head for a query of gateway stream `id`.
    pub(crate) fn head(&self, id: &str) -> Bytes {
        Bytes::from(frame::encode_infer_head(
            0,
            0,
            id,
            &self.shape,
            self.data.len(),
        ))
    }
}

/// Connects to the gateway's QUIC endpoint of `t`, checking its certificate for `t.host`.
pub(crate) async fn connect(t: &QuicTarget) -> anyhow::Result<QuicClient> {
    let addr = tokio::net::lookup_host((t.host.as_str(), t.port))
        .await
        .with_context(|| format!("--quic {}:{}: cannot resolve the host", t.host, t.port))?
        .next()
        .with_context(|| format!("--quic {}:{}: the host has no address", t.host, t.port))?;
    let cert = CertificateDer::from(t.cert.clone());
    QuicClient::connect_to(addr, &t.host, &[cert], None)
        .await
        .with_context(|| format!("--quic {}:{}", t.host, t.port))
}

/// The HTTP status the gateway answers for the refusal an error frame's `status` stands for.
pub(crate) fn http_status(status: u8) -> u16 {
    match status {
        frame::STATUS_REJECTED => 429,
        frame::STATUS_BAD_REQUEST => 400,
        3 => 404,
        4 => 413,
        6 => 503,
        _ => 500,
    }
}

/// Sends one query (`head` then `data`) and waits up to `timeout` for its answer.
pub(super) async fn send(
    client: &QuicClient,
    head: Bytes,
    data: Bytes,
    timeout: Duration,
) -> Answer {
    match tokio::time::timeout(timeout, client.infer_parts(head, data)).await {
        Err(_) => Answer::Timeout,
        Ok(Err(e)) => Answer::Transport(format!("{e:#}")),
        Ok(Ok(Response::Ok { .. })) => Answer::Response {
            status: 200,
            outcome: None,
            body: Bytes::new(),
        },
        Ok(Ok(Response::Error { status, message })) => Answer::Response {
            status: http_status(status),
            outcome: None,
            body: Bytes::from(message),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_frames_read_as_the_gateway_s_http_statuses() {
        let got: Vec<u16> = (1..=6).map(http_status).collect();
        assert_eq!(got, [429, 400, 404, 413, 500, 503]);
    }

    #[test]
    fn a_head_and_its_input_make_a_frame_the_gateway_reads() {
        let sig = ModelSignature {
            input: "input".into(),
            shape: vec![1, 2, 3],
            output: "output".into(),
        };
        let input = FrameInput::reference(&sig);
        let mut buf = input.head("stream-7").to_vec();
        buf.extend_from_slice(&input.data);
        let h = frame::decode_infer_head(&buf).unwrap();
        assert_eq!((&*h.name, &h.shape), ("stream-7", &vec![1, 2, 3]));
        assert_eq!(h.data.len(), 24);
    }

    #[test]
    fn targets_parse_host_and_port() {
        let dir = tempfile::tempdir().unwrap();
        let cert = dir.path().join("c.der");
        std::fs::write(&cert, b"x").unwrap();
        let t = QuicTarget::new("gw.example:8082", &cert).unwrap();
        assert_eq!((t.host.as_str(), t.port), ("gw.example", 8082));
        let t = QuicTarget::new("[::1]:9", &cert).unwrap();
        assert_eq!((t.host.as_str(), t.port), ("::1", 9));
        for bad in ["gw.example", ":80", "h:0", "h:70000", "h:x"] {
            assert!(QuicTarget::new(bad, &cert).is_err(), "{bad}");
        }
        let e = QuicTarget::new("h:1", &dir.path().join("missing.der")).unwrap_err();
        assert!(format!("{e:#}").contains("--quic-cert"), "{e:#}");
    }
}
