//! The wire protocols of continuum, shared by the worker, the gateway and the load generator:
//! the Open Inference Protocol v2 over HTTP ([`http`], [`oip`], [`oip_core`]) with the
//! binary-tensor extension, KServe/Triton gRPC ([`grpc`]), the QUIC framing ([`frame`]) with its
//! endpoints and client ([`quic`], [`client`], [`tls`], [`udp`]), the HTTP serve loop and its
//! limits ([`serve`]), endpoint settings ([`endpoint`], [`layered`]), the Prometheus text
//! parser every metrics reader uses ([`prom`]), and the data every face
//! exchanges ([`query`], [`tensor`], [`fp32`], [`load_report`]).
//!
//! Nothing here runs a model or decides a binding: this crate never imports the inference
//! engines, the simulator or the learning code.

#![warn(missing_docs)]
#![deny(unreachable_pub)]

pub mod client;
pub mod endpoint;
pub mod fp32;
pub mod frame;
pub mod grpc;
pub mod http;
pub mod layered;
pub mod load_report;
pub mod oip;
pub mod oip_core;
pub mod prom;
pub mod query;
pub mod quic;
pub mod serve;
pub mod tensor;
pub mod tls;
pub mod udp;

pub use client::QuicClient;
