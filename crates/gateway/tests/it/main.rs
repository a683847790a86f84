//! The gateway's integration tests, in one binary: real workers and a gateway started
//! in-process on loopback (the test kit, crates/testkit) — hedging, the pull desk, the HTTP
//! upstream, the QUIC front, hardening against bad input, TLS on every listener, Triton's own clients.

mod gateway_hedge;
mod gateway_http_upstream;
mod gateway_pull;
mod gateway_quic_front;
mod live_hardening;
mod live_hostile;
mod tls_listeners;
mod tritonclient_conformance;
