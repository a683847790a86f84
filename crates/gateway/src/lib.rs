//! The gateway (`continuum gateway --config gateway.yaml`): one process per antenna or central
//! office. It binds client streams to (variant, cluster) pairs with the core's feasibility and
//! dispatch policies over a live load view, forwards their queries to real workers over QUIC
//! or HTTP, and (with a checkpoint) lets the DQN meta-policy pick the policy of each stream
//! class every window.
//!
//! Layers, each calling only the ones below it and each with one owner type; the real call
//! order, top to bottom (docs/architecture.md):
//!
//! - `front`: the client HTTP, gRPC and QUIC APIs and the operator's routes; they translate,
//!   then open, resume or close streams through the `Decider` and hand queries to the
//!   `Forwarder`;
//! - `forward`: one query to its worker and back — relay, hedge, retry-on-reset, the verdict —
//!   owned by `Forwarder`, which asks the `Decider` for every placement (the current binding,
//!   the hedge's, the retry's) and `Upstream::infer` to carry the query;
//! - `decide`: every placement — binding and re-binding streams, pull dispatch, the hedge's
//!   and the retry's targets — owned by `Decider`;
//! - `state`: the published load view, open streams and tokens, the active policies, the
//!   meta-policy's window counts, the retry budget — owned by `GatewayState`, whose fields are
//!   private: the layers above read and change it through its methods;
//! - `upstream`: the workers and their protocols (QUIC, HTTP), owned by `Upstream`, whose
//!   `infer` is the only place a query is framed for a worker; the workers' reported loads.
//!
//! Beside them, leaves every layer may read: [`config`] (settings), `plan` (settings resolved
//! against topology and profiles), `metrics` (Prometheus) and `error` (the error answer); above
//! them, `control` (the control plane: plan, workers, agent, reload) and `server` (start-up,
//! background tasks, shutdown: [`Gateway`]). No two top-level modules name each other.

#![warn(missing_docs)]
#![deny(unreachable_pub)]

pub mod config;
pub(crate) mod control;
pub(crate) mod decide;
pub(crate) mod error;
pub(crate) mod forward;
pub(crate) mod front;
pub(crate) mod metrics;
pub(crate) mod plan;
pub(crate) mod server;
pub(crate) mod state;
pub(crate) mod upstream;

pub use config::GatewayConfig;
pub use server::{Gateway, run_from_file};

/// What the benchmarks (benches/gateway.rs) and the gateway's own tests reach inside the
/// gateway: the binding decision over a published snapshot, and the HTTP upstream. Not a
/// stable interface.
#[doc(hidden)]
pub mod bench {
    pub use crate::decide::Decider;
    pub use crate::plan::Plan;
    pub use crate::state::GatewayState;
    pub use crate::state::live::publish;
    pub use crate::state::streams::{OpenRequest, Stream};
    pub use crate::state::token::{sign_token, verify_token};
    pub use crate::upstream::Upstream;
    pub use crate::upstream::UpstreamError;
    pub use crate::upstream::http::{HttpUpstream, ScrapedLoad};
    pub use crate::upstream::loads::LiveLoads;
}
