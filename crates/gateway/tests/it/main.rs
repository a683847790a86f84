//! The gateway's integration tests, in one binary: real workers and a gateway started
//! in-process on loopback (the test kit, crates/testkit) — hedging, the pull desk, the HTTP
//! upstream, the QUIC front, hardening against bad input, Triton's own clients.

mod gateway_hedge;
mod gateway_http_upstream;
mod gateway_pull;
mod gateway_quic_front;
mod live_hardening;
mod tritonclient_conformance;
