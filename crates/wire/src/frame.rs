//! The QUIC framing: one bidirectional stream per query, one request frame from the client
//! (then it finishes its send side), one response frame from the worker. All integers are
//! little-endian; tensors are FP32 little-endian, row-major.
//!
//! Request frame (client → worker):
//!
//! ```text
//! u8   version = 1
//! u8   kind: 1 = INFER, 2 = SUBSCRIBE
//! INFER:
//!   u64  stream id (0 = none)           the client stream, for the open-streams count
//!   u32  deadline, µs (0 = none)        time budget from arrival at the worker
//!   u16  name length, then the variant name (UTF-8)
//!   u8   datatype: 1 = FP32
//!   u8   rank, then rank × u32 dimensions
//!   u32  data length in bytes, then the data; nothing may follow
//! SUBSCRIBE:
//!   u32  period, ms (0 = the worker's load_report_ms)
//! ```
//!
//! Response frame to INFER (worker → client):
//!
//! ```text
//! u8   status: 0 OK, 1 REJECTED, 2 BAD_REQUEST, 3 NOT_FOUND, 4 TOO_LARGE, 5 INTERNAL, 6 UNAVAILABLE
//! OK:    u32 queue µs, u32 compute µs, u16 batch items, then a tensor as in the request
//!        (u8 datatype, u8 rank, dims, u32 data length, data)
//! other: u16 message length, then the message (UTF-8)
//! ```
//!
//! On a SUBSCRIBE stream the worker writes load reports until either side closes: each is a
//! u32 length followed by that many bytes of JSON ([`crate::load_report::LoadReport`]).

use crate::fp32;
use crate::query::{Answer, QueryError};
use crate::tensor::Tensor;
use std::ops::Range;

/// Protocol version byte.
pub const VERSION: u8 = 1;
/// Request kind: one inference.
pub const KIND_INFER: u8 = 1;
/// Request kind: subscribe to load reports.
pub const KIND_SUBSCRIBE: u8 = 2;
/// Datatype code of FP32.
pub const DTYPE_FP32: u8 = 1;
/// Largest tensor rank accepted. assumption: 8 covers image and sequence models.
pub const MAX_RANK: usize = 8;

/// A decoded request frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// One inference.
    Infer(InferFrame),
    /// Subscribe to load reports every `period_ms` (0: the worker's default).
    Subscribe {
        /// Report period, ms.
        period_ms: u32,
    },
}

/// The INFER request.
#[derive(Debug, Clone, PartialEq)]
pub struct InferFrame {
    /// Client stream id (0 = none).
    pub stream_id: u64,
    /// Deadline budget, µs (0 = none).
    pub deadline_us: u32,
    /// Variant name.
    pub model: String,
    /// Input tensor.
    pub input: Tensor,
}

/// A decoded response frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    /// The answer.
    Ok {
        /// Queue wait, µs.
        queue_us: u32,
        /// Batch compute time, µs.
        compute_us: u32,
        /// Items in the batch.
        batch_items: u16,
        /// Output tensor.
        output: Tensor,
    },
    /// An error with its status code (1..=6) and message.
    Error {
        /// Status code.
        status: u8,
        /// Message.
        message: String,
    },
}

impl From<Answer> for Response {
    /// The OK frame of an answer (times past `u32::MAX` µs and batches past `u16::MAX` items
    /// saturate).
    fn from(a: Answer) -> Self {
        Response::Ok {
            queue_us: a.queue_us.min(u64::from(u32::MAX)) as u32,
            compute_us: a.compute_us.min(u64::from(u32::MAX)) as u32,
            batch_items: a.batch_items.min(usize::from(u16::MAX)) as u16,
            output: a.output,
        }
    }
}

/// The status code of an error.
pub fn status_of(e: &QueryError) -> u8 {
    match e {
        QueryError::Rejected(_) => 1,
        QueryError::BadInput(_) => 2,
        QueryError::NotFound(_) => 3,
        QueryError::TooLarge(_) => 4,
        QueryError::Internal(_) => 5,
        QueryError::Unavailable => 6,
    }
}

/// Status code of a refused query.
pub const STATUS_REJECTED: u8 = 1;
/// Status code of a malformed or unfit request.
pub const STATUS_BAD_REQUEST: u8 = 2;

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        if self.buf.len() - self.pos < n {
            return Err(format!(
                "truncated frame: {what} needs {n} bytes at offset {}, {} left",
                self.pos,
                self.buf.len() - self.pos
            ));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn u8(&mut self, what: &str) -> Result<u8, String> {
        Ok(self.take(1, what)?[0])
    }
    fn u16(&mut self, what: &str) -> Result<u16, String> {
        Ok(u16::from_le_bytes(
            self.take(2, what)?.try_into().expect("2 bytes"),
        ))
    }
    fn u32(&mut self, what: &str) -> Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.take(4, what)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self, what: &str) -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.take(8, what)?.try_into().expect("8 bytes"),
        ))
    }
    fn tensor(&mut self) -> Result<Tensor, String> {
        let (shape, data) = self.tensor_in_place()?;
        Ok(Tensor {
            shape,
            data: fp32::decode_le(&self.buf[data]),
        })
    }
    /// A tensor's shape and where its FP32 data lie in the buffer (checked, not decoded).
    fn tensor_in_place(&mut self) -> Result<(Vec<usize>, Range<usize>), String> {
        let dtype = self.u8("datatype")?;
        if dtype != DTYPE_FP32 {
            return Err(format!(
                "unsupported datatype code {dtype}: expected 1 (FP32)"
            ));
        }
        let rank = self.u8("rank")? as usize;
        if rank == 0 || rank > MAX_RANK {
            return Err(format!("rank {rank}: expected 1..={MAX_RANK}"));
        }
        let mut shape = Vec::with_capacity(rank);
        for _ in 0..rank {
            shape.push(self.u32("dimension")? as usize);
        }
        let len = self.u32("data length")? as usize;
        let elems = shape
            .iter()
            .try_fold(1usize, |a, d| a.checked_mul(*d))
            .filter(|n| n.checked_mul(4) == Some(len));
        if elems.is_none() {
            return Err(format!(
                "data length {len} bytes does not match shape {shape:?} of FP32"
            ));
        }
        let start = self.pos;
        self.take(len, "tensor data")?;
        Ok((shape, start..self.pos))
    }
    fn end(&self) -> Result<(), String> {
        if self.pos == self.buf.len() {
            Ok(())
        } else {
            Err(format!(
                "{} unexpected bytes after the frame",
                self.buf.len() - self.pos
            ))
        }
    }
}

fn put_shape(out: &mut Vec<u8>, shape: &[usize], data_len: usize) {
    out.push(DTYPE_FP32);
    out.push(shape.len() as u8);
    for d in shape {
        out.extend_from_slice(&(*d as u32).to_le_bytes());
    }
    out.extend_from_slice(&(data_len as u32).to_le_bytes());
}

fn put_tensor(out: &mut Vec<u8>, t: &Tensor) {
    put_shape(out, &t.shape, t.data.len() * 4);
    fp32::extend_le(out, &t.data);
}

/// Encodes an INFER request.
pub fn encode_infer(f: &InferFrame) -> Vec<u8> {
    let data_len = f.input.data.len() * 4;
    let mut out = encode_infer_head(
        f.stream_id,
        f.deadline_us,
        &f.model,
        &f.input.shape,
        data_len,
    );
    out.reserve_exact(data_len);
    fp32::extend_le(&mut out, &f.input.data);
    out
}

/// Encodes an INFER request up to its tensor data: what [`encode_infer`] writes before the
/// `data_len` bytes of FP32 data, for a sender that holds the data already in wire form.
pub fn encode_infer_head(
    stream_id: u64,
    deadline_us: u32,
    model: &str,
    shape: &[usize],
    data_len: usize,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(24 + model.len() + 4 * shape.len());
    out.extend_from_slice(&[VERSION, KIND_INFER]);
    out.extend_from_slice(&stream_id.to_le_bytes());
    out.extend_from_slice(&deadline_us.to_le_bytes());
    out.extend_from_slice(&(model.len() as u16).to_le_bytes());
    out.extend_from_slice(model.as_bytes());
    put_shape(&mut out, shape, data_len);
    out
}

/// Encodes a SUBSCRIBE request.
pub fn encode_subscribe(period_ms: u32) -> Vec<u8> {
    let mut out = vec![VERSION, KIND_SUBSCRIBE];
    out.extend_from_slice(&period_ms.to_le_bytes());
    out
}

/// Decodes a request frame; the error says what is wrong.
pub fn decode_request(buf: &[u8]) -> Result<Request, String> {
    if buf.get(1) == Some(&KIND_SUBSCRIBE) && buf[0] == VERSION {
        let mut r = Reader { buf, pos: 2 };
        let period_ms = r.u32("period")?;
        r.end()?;
        return Ok(Request::Subscribe { period_ms });
    }
    let h = decode_infer_head(buf).map_err(|e| match buf.get(1) {
        Some(&k) if k != KIND_INFER && buf[0] == VERSION => {
            format!("unknown request kind {k}: expected 1 or 2")
        }
        _ => e,
    })?;
    Ok(Request::Infer(InferFrame {
        stream_id: h.stream_id,
        deadline_us: h.deadline_us,
        model: h.name,
        input: Tensor {
            shape: h.shape,
            data: fp32::decode_le(&buf[h.data]),
        },
    }))
}

/// An INFER request checked but not decoded: its tensor's FP32 data stay where they lie in the
/// frame, for a relay that forwards them as they came (the gateway's QUIC front end).
#[derive(Debug, Clone, PartialEq)]
pub struct InferHead {
    /// Client stream id (0 = none).
    pub stream_id: u64,
    /// Deadline budget, µs (0 = none).
    pub deadline_us: u32,
    /// The name field (a variant at a worker, a stream id at a gateway).
    pub name: String,
    /// Input shape.
    pub shape: Vec<usize>,
    /// Where the input's FP32 little-endian data lie in the frame.
    pub data: Range<usize>,
}

/// Checks an INFER request as [`decode_request`] does and returns its head, leaving the tensor
/// data in `buf`; a SUBSCRIBE or a malformed frame is an error saying what is wrong.
pub fn decode_infer_head(buf: &[u8]) -> Result<InferHead, String> {
    let mut r = Reader { buf, pos: 0 };
    let v = r.u8("version")?;
    if v != VERSION {
        return Err(format!("unsupported frame version {v}: expected {VERSION}"));
    }
    match r.u8("kind")? {
        KIND_INFER => {}
        KIND_SUBSCRIBE => return Err("SUBSCRIBE is not served here: expected INFER (1)".into()),
        k => return Err(format!("unknown request kind {k}: expected 1 (INFER)")),
    }
    let stream_id = r.u64("stream id")?;
    let deadline_us = r.u32("deadline")?;
    let n = r.u16("name length")? as usize;
    let name = std::str::from_utf8(r.take(n, "name")?)
        .map_err(|_| "name is not UTF-8".to_string())?
        .to_string();
    let (shape, data) = r.tensor_in_place()?;
    r.end()?;
    Ok(InferHead {
        stream_id,
        deadline_us,
        name,
        shape,
        data,
    })
}

/// Encodes a response frame.
pub fn encode_response(r: &Response) -> Vec<u8> {
    let mut out = Vec::new();
    match r {
        Response::Ok {
            queue_us,
            compute_us,
            batch_items,
            output,
        } => {
            out.push(0);
            out.extend_from_slice(&queue_us.to_le_bytes());
            out.extend_from_slice(&compute_us.to_le_bytes());
            out.extend_from_slice(&batch_items.to_le_bytes());
            put_tensor(&mut out, output);
        }
        Response::Error { status, message } => {
            out.push(*status);
            let m = &message.as_bytes()[..message.len().min(u16::MAX as usize)];
            out.extend_from_slice(&(m.len() as u16).to_le_bytes());
            out.extend_from_slice(m);
        }
    }
    out
}

/// Decodes a response frame.
pub fn decode_response(buf: &[u8]) -> Result<Response, String> {
    let mut r = Reader { buf, pos: 0 };
    let status = r.u8("status")?;
    let resp = if status == 0 {
        Response::Ok {
            queue_us: r.u32("queue time")?,
            compute_us: r.u32("compute time")?,
            batch_items: r.u16("batch items")?,
            output: r.tensor()?,
        }
    } else {
        let n = r.u16("message length")? as usize;
        Response::Error {
            status,
            message: String::from_utf8_lossy(r.take(n, "message")?).into_owned(),
        }
    };
    r.end()?;
    Ok(resp)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame() -> InferFrame {
        InferFrame {
            stream_id: 7,
            deadline_us: 50_000,
            model: "cnn-s-b4".into(),
            input: Tensor {
                shape: vec![1, 2],
                data: vec![1.5, -2.0],
            },
        }
    }

    #[test]
    fn round_trips() {
        let f = frame();
        assert_eq!(decode_request(&encode_infer(&f)), Ok(Request::Infer(f)));
        assert_eq!(
            decode_request(&encode_subscribe(50)),
            Ok(Request::Subscribe { period_ms: 50 })
        );
        let r = Response::Error {
            status: 1,
            message: "rejected: x".into(),
        };
        assert_eq!(decode_response(&encode_response(&r)), Ok(r));
    }

    #[test]
    fn a_head_and_its_data_make_the_whole_frame() {
        let f = frame();
        let mut parts = encode_infer_head(f.stream_id, f.deadline_us, &f.model, &f.input.shape, 8);
        fp32::extend_le(&mut parts, &f.input.data);
        assert_eq!(parts, encode_infer(&f));
    }

    #[test]
    fn a_head_decodes_as_the_whole_frame_does() {
        let f = frame();
        let buf = encode_infer(&f);
        let h = decode_infer_head(&buf).unwrap();
        assert_eq!(
            (h.stream_id, h.deadline_us, &*h.name, &h.shape),
            (7, 50_000, "cnn-s-b4", &f.input.shape)
        );
        assert_eq!(fp32::decode_le(&buf[h.data.clone()]), f.input.data);
        assert_eq!(h.data.end, buf.len());
        for cut in 0..buf.len() {
            assert!(decode_infer_head(&buf[..cut]).is_err(), "prefix of {cut}");
        }
        let sub = decode_infer_head(&encode_subscribe(5)).unwrap_err();
        assert!(sub.contains("SUBSCRIBE"), "{sub}");
    }

    #[test]
    fn malformed_frames_are_errors() {
        let good = encode_infer(&frame());
        for cut in 0..good.len() {
            assert!(
                decode_request(&good[..cut]).is_err(),
                "prefix of {cut} bytes"
            );
        }
        let mut extra = good.clone();
        extra.push(0);
        assert!(
            decode_request(&extra)
                .unwrap_err()
                .contains("unexpected bytes")
        );
        let mut bad = good.clone();
        bad[0] = 9;
        assert!(decode_request(&bad).unwrap_err().contains("version"));
        let mut huge_dims = good;
        // name "cnn-s-b4" is 8 bytes: dims start at 2+8+4+2+8+2 = 26.
        huge_dims[26..30].copy_from_slice(&u32::MAX.to_le_bytes());
        huge_dims[30..34].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(
            decode_request(&huge_dims)
                .unwrap_err()
                .contains("does not match")
        );
    }
}
