//! Targets of the wire protocols: OIP v2 inference bodies (JSON and the binary-tensor
//! extension), KServe gRPC `ModelInferRequest`s, QUIC frames, and what a gateway reads from a
//! worker (Prometheus text, load-report JSON).

use continuum_wire::frame::{self, Request};
use continuum_wire::grpc::{self, pb};
use continuum_wire::oip::{self, OipModel, ParsedInfer};
use continuum_wire::oip_core::ModelInfo;
use continuum_wire::{LoadReport, fp32};
use prost::Message;

/// The model the wire targets check requests against: `cnn-s`, input `input`, output `output`.
pub struct FuzzModel;

impl OipModel for FuzzModel {
    fn model_name(&self) -> &str {
        "cnn-s"
    }
    fn input_name(&self) -> &str {
        "input"
    }
    fn output_name(&self) -> &str {
        "output"
    }
}

/// [`FuzzModel`] as the gRPC front end describes it.
pub fn model_info() -> ModelInfo {
    ModelInfo {
        name: "cnn-s".into(),
        platform: "continuum-fuzz".into(),
        input: "input".into(),
        output: "output".into(),
        item_shape: vec![2],
        output_item_shape: vec![2],
        max_batch: 8,
        ready: true,
    }
}

/// Splits an `oip_json` input into the `Inference-Header-Content-Length` value and the body:
/// bit 0 of byte 0 says whether the header is present, bytes 1..5 hold its value (u32 LE), the
/// body follows. Inputs shorter than 5 bytes are a body without the header.
pub fn split_oip(data: &[u8]) -> (Option<usize>, &[u8]) {
    match data {
        [flags, a, b, c, d, body @ ..] => {
            let n = u32::from_le_bytes([*a, *b, *c, *d]) as usize;
            ((flags & 1 == 1).then_some(n), body)
        }
        _ => (None, data),
    }
}

/// The inverse of [`split_oip`] (for seeds).
pub fn join_oip(header_len: Option<usize>, body: &[u8]) -> Vec<u8> {
    let mut out = vec![u8::from(header_len.is_some())];
    out.extend_from_slice(&(header_len.unwrap_or(0) as u32).to_le_bytes());
    out.extend_from_slice(body);
    out
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn same_request(a: &ParsedInfer, b: &ParsedInfer) {
    assert_eq!(a.id, b.id);
    assert_eq!(a.shape, b.shape);
    assert_eq!(bits(&a.data), bits(&b.data));
    assert_eq!(a.deadline, b.deadline);
    assert_eq!(a.stream, b.stream);
    assert_eq!(a.parameters, b.parameters);
}

/// Re-encodes an accepted request with the binary-tensor extension (what the gateway sends an
/// HTTP worker) and checks that it parses back to the same request. A request whose JSON
/// `data` does not hold as many numbers as its shape says is left out: the parser leaves that
/// check to the worker's model.
fn oip_round_trip(p: &ParsedInfer) {
    let elems = p.shape.iter().try_fold(1usize, |a, d| a.checked_mul(*d));
    if elems != Some(p.data.len()) {
        return;
    }
    let (bytes, n) = oip::encode_request(&FuzzModel, p);
    let q = oip::parse_infer(&bytes, Some(n), &FuzzModel)
        .unwrap_or_else(|e| panic!("a re-encoded request is refused: {e}"));
    same_request(p, &q);
    assert!(q.binary_output);
}

/// OIP v2 inference body ([`split_oip`] form): `oip::parse_infer` and
/// `oip::parse_infer_relay` never panic and agree (same shape, same binary range, the relay's
/// bytes decode to the parser's data, same error); an accepted request re-encoded with the
/// binary-tensor extension parses back to itself; `oip::decode_answer` never panics.
pub fn oip_json(data: &[u8]) {
    let (header_len, body) = split_oip(data);
    let full = oip::parse_infer(body, header_len, &FuzzModel);
    let relay = oip::parse_infer_relay(body, header_len, &FuzzModel);
    match (&full, &relay) {
        (Ok(f), Ok(r)) => {
            assert_eq!(f.shape, r.shape);
            assert_eq!(f.raw, r.raw);
            if let Some(raw) = &f.raw {
                assert!(r.data.is_empty());
                assert_eq!(bits(&f.data), bits(&fp32::decode_le(&body[raw.clone()])));
            }
            oip_round_trip(f);
        }
        (Err(a), Err(b)) => assert_eq!(a, b),
        _ => panic!("parse_infer and parse_infer_relay disagree: {full:?} / {relay:?}"),
    }
    let _ = oip::decode_answer(body, header_len);
}

/// KServe gRPC `ModelInferRequest` (protobuf bytes): prost's decode, then
/// `grpc::parse_request`, never panic; the message re-encoded and decoded again gets the same
/// answer; an accepted request re-encoded as an OIP HTTP body (the gateway's gRPC → HTTP
/// relay) parses back to itself.
pub fn grpc_infer(data: &[u8]) {
    let Ok(r) = pb::ModelInferRequest::decode(data) else {
        return;
    };
    let m = model_info();
    let again = pb::ModelInferRequest::decode(r.encode_to_vec().as_slice())
        .expect("a re-encoded message decodes");
    let first = grpc::parse_request(&m, r);
    let second = grpc::parse_request(&m, again);
    match (&first, &second) {
        (Ok(a), Ok(b)) => {
            same_request(a, b);
            oip_round_trip(a);
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.status, b.status);
            assert_eq!(a.message, b.message);
        }
        _ => panic!("a re-encoded message gets another answer"),
    }
}

/// QUIC request and response frames: `frame::decode_request`, `frame::decode_infer_head` and
/// `frame::decode_response` never panic; an accepted request re-encodes to the same bytes and
/// its head agrees with the full decode; an accepted response re-encodes to bytes that decode
/// and encode again unchanged, the same bytes as the input unless its message was not UTF-8.
pub fn quic_frame(data: &[u8]) {
    let head = frame::decode_infer_head(data);
    match frame::decode_request(data) {
        Ok(Request::Infer(f)) => {
            assert_eq!(frame::encode_infer(&f), data);
            let h = head.expect("an INFER frame's head decodes");
            assert_eq!(h.name, f.model);
            assert_eq!(h.shape, f.input.shape);
            assert_eq!((h.stream_id, h.deadline_us), (f.stream_id, f.deadline_us));
            assert_eq!(h.data.len(), f.input.data.len() * 4);
        }
        Ok(Request::Subscribe { period_ms }) => {
            assert_eq!(frame::encode_subscribe(period_ms), data);
            assert!(head.is_err());
        }
        Err(_) => assert!(head.is_err()),
    }
    if let Ok(r) = frame::decode_response(data) {
        let once = frame::encode_response(&r);
        let back = frame::decode_response(&once).expect("an encoded response decodes");
        assert_eq!(frame::encode_response(&back), once);
        let utf8 = match &r {
            frame::Response::Ok { .. } => true,
            frame::Response::Error { .. } => {
                data.len() >= 3 && std::str::from_utf8(&data[3..]).is_ok()
            }
        };
        if utf8 {
            assert_eq!(once, data);
        }
    }
}

/// What a gateway reads from a worker: its Prometheus text (`parse_prometheus`, lossy UTF-8)
/// and a load report (JSON, as on a QUIC SUBSCRIBE stream); neither parser panics, and an
/// accepted load report serialises and parses back to itself.
pub fn worker_scrape(data: &[u8]) {
    let _ = continuum_wire::parse_prometheus(&String::from_utf8_lossy(data));
    if let Ok(r) = serde_json::from_slice::<LoadReport>(data) {
        let text = serde_json::to_vec(&r).expect("a load report serialises");
        let back: LoadReport = serde_json::from_slice(&text).expect("a load report parses back");
        assert_eq!(
            serde_json::to_vec(&back).expect("a load report serialises"),
            text
        );
    }
}
