//! The worker protocols: one query to a worker and its answer ([`Upstream::infer`]). A query
//! leaves in its client's wire form ([`Wire`]: an OIP v2 body, or a QUIC INFER frame) and its
//! answer comes back in the same form, whatever the worker speaks: continuum's QUIC framing or
//! OIP v2 over HTTP. The layers above never match on the transport ([`super::Link`]).

use super::{Link, Upstream, UpstreamError};
use crate::plan::TaskSpec;
use bytes::Bytes;
use continuum_wire::Answer;
use continuum_wire::frame;
use continuum_wire::oip::{self, ParsedInfer};

/// An answer body in the query's wire form and, for OIP, its
/// `Inference-Header-Content-Length`.
pub(crate) type Answered = (Bytes, Option<usize>);

/// The wire form of a query's body, which is also the form of its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    /// An OIP v2 body (HTTP and gRPC clients), with its `Inference-Header-Content-Length`
    /// when its tensor follows as binary data.
    Oip(Option<usize>),
    /// A QUIC INFER frame ([`frame`]), its tensor's location in the parsed query's `raw`;
    /// the answer is a response frame.
    Frame,
}

/// One query as it leaves for a worker.
#[derive(Clone, Copy)]
pub(crate) struct Outgoing<'a> {
    /// Its stream's id (worker frames carry it).
    pub(crate) stream: u64,
    /// The name of its stream's task.
    pub(crate) task_name: &'a str,
    /// The stream's task, if still served.
    pub(crate) task: Option<&'a TaskSpec>,
    /// The parsed query (a QUIC worker needs it: [`Upstream::needs_parsed`]).
    pub(crate) parsed: Option<&'a ParsedInfer>,
    /// The body as it came.
    pub(crate) body: &'a Bytes,
    /// The body's wire form, which its answer takes too.
    pub(crate) wire: Wire,
}

/// The response frame of an answer.
fn ok_frame(a: Answer) -> Vec<u8> {
    frame::encode_response(&frame::Response::from(a))
}

impl Upstream {
    /// Whether this worker's protocol needs the query's tensor parsed (its shape): a QUIC
    /// worker does, an HTTP one takes the body as it came.
    pub(crate) fn needs_parsed(&self) -> bool {
        matches!(self.link, Link::Quic(_))
    }

    /// Sends `q` to this worker as variant `variant`, which must answer within `deadline_us`
    /// (its admission drops the query otherwise), and returns its answer in the query's wire
    /// form. An OIP query not parsed yet is parsed here when the protocol needs it.
    pub(crate) async fn infer(
        &self,
        q: &Outgoing<'_>,
        variant: &str,
        deadline_us: u32,
    ) -> Result<Answered, UpstreamError> {
        let Some(task) = q.task else {
            return Err(UpstreamError::NotFound(q.task_name.to_string()));
        };
        match &self.link {
            Link::Quic(link) => {
                let reparsed;
                let parsed = match (q.parsed, q.wire) {
                    (Some(p), _) => p,
                    (None, Wire::Oip(header_len)) => {
                        reparsed = oip::parse_infer_relay(q.body, header_len, task)
                            .map_err(|e| UpstreamError::BadRequest(e.to_string()))?;
                        &reparsed
                    }
                    (None, Wire::Frame) => unreachable!("a frame query is parsed"),
                };
                let data = match &parsed.raw {
                    Some(r) => q.body.slice(r.clone()),
                    None => {
                        let mut v = Vec::with_capacity(parsed.data.len() * 4);
                        continuum_wire::fp32::extend_le(&mut v, &parsed.data);
                        Bytes::from(v)
                    }
                };
                let head = frame::encode_infer_head(
                    q.stream,
                    deadline_us,
                    variant,
                    &parsed.shape,
                    data.len(),
                );
                let a = link.infer(variant, Bytes::from(head), data).await?;
                let ans = Answer {
                    output: a.output,
                    queue_us: u64::from(a.queue_us),
                    compute_us: u64::from(a.compute_us),
                    batch_items: usize::from(a.batch_items),
                };
                Ok(match q.wire {
                    Wire::Frame => (Bytes::from(ok_frame(ans)), None),
                    Wire::Oip(_) => {
                        let (bytes, hlen) = oip::encode_infer(task, parsed, &ans);
                        (Bytes::from(bytes), hlen)
                    }
                })
            }
            Link::Http(h) => match q.wire {
                Wire::Oip(header_len) => h
                    .infer(variant, q.body.clone(), header_len)
                    .await
                    .map(|a| (a.body, a.header_len)),
                Wire::Frame => {
                    // An OIP body around the frame's tensor bytes, and the answer back into
                    // a response frame.
                    let parsed = q.parsed.expect("a frame query is parsed");
                    let data = &q.body[parsed.raw.clone().expect("a frame's tensor range")];
                    let mut body = oip::encode_request_head(task, parsed, data.len());
                    let n = body.len();
                    body.extend_from_slice(data);
                    let a = h.infer(variant, Bytes::from(body), Some(n)).await?;
                    let (shape, data, params) = oip::decode_answer(&a.body, a.header_len)
                        .map_err(|e| UpstreamError::Internal(format!("answer: {e}")))?;
                    let num = |k: &str| params.get(k).and_then(|v| v.as_u64()).unwrap_or(0);
                    Ok((
                        Bytes::from(ok_frame(Answer {
                            output: continuum_wire::Tensor { shape, data },
                            queue_us: num("queue_us"),
                            compute_us: num("compute_us"),
                            batch_items: num("batch_items") as usize,
                        })),
                        None,
                    ))
                }
            },
        }
    }
}
