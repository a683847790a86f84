//! The wire protocols of continuum, shared by the worker, the gateway and the load generator:
//! the Open Inference Protocol v2 over HTTP ([`http`], [`oip`], [`oip_core`]) with the
//! binary-tensor extension, KServe/Triton gRPC ([`grpc`]), the QUIC framing ([`frame`]) with its
//! endpoints and client ([`quic`], [`QuicClient`], [`tls`]), the HTTP serve loop and its
//! limits ([`serve`]) and the signals a server obeys ([`signals`]), TLS on the TCP listeners ([`tcp_tls`], [`dev_pki`]), endpoint settings ([`HttpConfig`], [`GrpcConfig`], [`QuicConfig`],
//! [`load_settings`]), the Prometheus text parser every metrics reader uses
//! ([`parse_prometheus`]), and the data every face exchanges ([`InferRequest`], [`Answer`],
//! [`Tensor`], [`LoadReport`], the codec [`fp32`]).
//!
//! Nothing here runs a model or decides a binding: this crate never imports the inference
//! engines, the simulator or the learning code.

#![warn(missing_docs)]
#![deny(unreachable_pub)]

// The protocols, each a namespace of its own: OIP v2 over HTTP, its shared core, gRPC, the
// QUIC framing and endpoints, TLS, the HTTP serve loop; the little-endian fp32 codec.
pub mod fp32;
pub mod frame;
pub mod grpc;
pub mod http;
pub mod oip;
pub mod oip_core;
pub mod quic;
pub mod serve;
pub mod signals;
pub mod tcp_tls;
pub mod tls;

// A development certificate authority (tests, local set-ups).
pub mod dev_pki;

// The data every face exchanges, and the settings, at the crate's root.
mod client;
mod endpoint;
mod grpc_incoming;
mod layered;
mod load_report;
mod prom;
mod query;
mod rate_log;
mod tensor;
mod udp;

pub use client::{QuicClient, Reports};
pub use endpoint::{GrpcConfig, HttpConfig, QuicConfig};
pub use layered::load as load_settings;
pub use load_report::{LoadReport, VariantLoad};
pub use prom::{PromSample, parse_prometheus};
pub use query::{Answer, InferRequest, QueryError};
pub use tensor::{Tensor, reference_input};
