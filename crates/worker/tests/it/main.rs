//! The worker's integration tests, in one binary: HTTP, QUIC, inference and the model
//! repository, against a worker on loopback from the test kit (crates/testkit).

mod worker_http;
mod worker_inference;
mod worker_quic;
mod worker_repository;
