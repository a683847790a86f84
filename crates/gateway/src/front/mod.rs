//! The front layer: the gateway's client and operator APIs, which translate requests into the
//! decide and forward layers' calls and their results into answers — the HTTP client endpoint
//! ([`api`]) and the operator's routes ([`admin`]) with the answers they share ([`respond`]),
//! the OIP v2 core the HTTP and gRPC front ends share ([`oip`]), and the QUIC client endpoint
//! ([`quic`]). Nothing here decides or forwards.

pub(crate) mod admin;
pub(crate) mod api;
pub(crate) mod oip;
pub(crate) mod quic;
pub(crate) mod respond;
