//! The worker call of one query, and its hedge under `reissue@r` ([`continuum_core::mitigation`]): when
//! the bound worker has not answered by emission + r × the query's deadline
//! ([`crate::forward::relay::query_times`]), a copy goes to the binding the core picks
//! ([`crate::decide::Decider::hedge_binding`]); the first answer wins and the other call is dropped — its
//! QUIC stream is stopped, its HTTP request abandoned.

use crate::forward::Forwarder;
use crate::forward::relay::{Answered, Outgoing, QueryTimes, Wire, sleep_ms};
use crate::state::live::Snapshot;
use crate::state::streams::Binding;
use crate::upstream::{Link, UpstreamError};
use bytes::Bytes;
use continuum_wire::frame;
use continuum_wire::oip::{self};
use continuum_wire::query::Answer;
use std::time::{Duration, Instant};

/// The response frame of an answer.
fn ok_frame(a: Answer) -> Vec<u8> {
    frame::encode_response(&frame::Response::from(a))
}

impl Forwarder<'_> {
    /// Sends `q` to the worker of `b`, which must answer within `deadline_us` (its admission
    /// drops the query otherwise).
    pub(crate) async fn call(
        &self,
        q: &Outgoing<'_>,
        b: &Binding,
        deadline_us: u32,
    ) -> Result<Answered, UpstreamError> {
        let Some(task) = q.task else {
            return Err(UpstreamError::NotFound(q.stream.req.task.clone()));
        };
        match &b.upstream.link {
            Link::Quic(link) => {
                let parsed = q.parsed.expect("parsed before a QUIC call");
                let data = match &parsed.raw {
                    Some(r) => q.body.slice(r.clone()),
                    None => {
                        let mut v = Vec::with_capacity(parsed.data.len() * 4);
                        continuum_wire::fp32::extend_le(&mut v, &parsed.data);
                        Bytes::from(v)
                    }
                };
                let head = frame::encode_infer_head(
                    q.stream.id,
                    deadline_us,
                    &b.variant,
                    &parsed.shape,
                    data.len(),
                );
                let a = link.infer(&b.variant, Bytes::from(head), data).await?;
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
                    .infer(&b.variant, q.body.clone(), header_len)
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
                    let a = h.infer(&b.variant, Bytes::from(body), Some(n)).await?;
                    let (shape, data, params) = oip::decode_answer(&a.body, a.header_len)
                        .map_err(|e| UpstreamError::Internal(format!("answer: {e}")))?;
                    let num = |k: &str| params.get(k).and_then(|v| v.as_u64()).unwrap_or(0);
                    Ok((
                        Bytes::from(ok_frame(Answer {
                            output: continuum_wire::tensor::Tensor { shape, data },
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

    /// Calls the worker of `b` and, if it has not answered by `times.reissue_at_ms` after the
    /// receipt `t0`, a second worker too, with the time left before `times.due_ms`; the first
    /// success wins (a failure waits for the other call). Returns the result and, when the
    /// copy's call gave it, the copy's binding.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn hedged(
        &self,
        snap: &Snapshot,
        q: &Outgoing<'_>,
        b: &Binding,
        t0: Instant,
        times: QueryTimes,
        down_ms: f64,
        deadline_us: u32,
    ) -> (Result<Answered, UpstreamError>, Option<Binding>) {
        let Some(at_ms) = times.reissue_at_ms else {
            return (self.call(q, b, deadline_us).await, None);
        };
        let primary = self.call(q, b, deadline_us);
        tokio::pin!(primary);
        let at = t0 + Duration::from_secs_f64(at_ms.max(0.0) / 1e3);
        tokio::select! {
            r = &mut primary => return (r, None),
            _ = tokio::time::sleep_until(at.into()) => {}
        }
        let remaining_ms = times.due_ms - t0.elapsed().as_secs_f64() * 1e3;
        let Some(b2) = self.decide().hedge_binding(snap, q.stream, b, remaining_ms) else {
            self.state.metrics.mitigation("reissue_no_target");
            return (primary.await, None);
        };
        let upstream = b2.upstream.clone();
        let Ok(_permit) = upstream.permits.try_acquire() else {
            self.state.metrics.mitigation("reissue_no_target");
            return (primary.await, None);
        };
        self.state.metrics.mitigation("reissued");
        let inject = snap.plan.cfg.inject_delays;
        let copy_deadline_us =
            ((remaining_ms - down_ms) * 1e3).clamp(1.0, f64::from(u32::MAX)) as u32;
        let copy = async {
            // The copy leaves from here: the network to its worker, no radio uplink again.
            if inject {
                sleep_ms(self.net_sample(q.stream, &b2)).await;
            }
            self.call(q, &b2, copy_deadline_us).await
        };
        tokio::pin!(copy);
        // The loser is dropped on return: its QUIC stream is stopped, its HTTP request
        // abandoned.
        tokio::select! {
            r = &mut primary => match r {
                Ok(a) => {
                    self.state.metrics.mitigation("cancelled");
                    (Ok(a), None)
                }
                Err(_) => (copy.await, Some(b2.clone())),
            },
            r = &mut copy => match r {
                Ok(a) => {
                    self.state.metrics.mitigation("reissue_won");
                    self.state.metrics.mitigation("cancelled");
                    (Ok(a), Some(b2.clone()))
                }
                Err(_) => (primary.await, None),
            },
        }
    }
}
