//! The gateway (`continuum gateway --config gateway.yaml`): one process per antenna or central
//! office. It binds client streams to (variant, cluster) pairs with the core's feasibility and
//! dispatch policies over a live load view, forwards their queries to real workers over QUIC
//! or HTTP, and (with a checkpoint) lets the DQN meta-policy pick the policy of each stream
//! class every window.
//!
//! - [`config`]: settings; [`plan`]: settings resolved against topology and profiles;
//! - [`loads`]: the workers' last reported loads; [`live`]: the load view published from them
//!   every Δ;
//! - [`state`]: shared state; [`policies`]: the active policy of each stream class;
//!   [`binding`]: binding streams; [`pull`]: pull dispatch's decision steps; [`forward`]: forwarding queries;
//!   [`error`]: error answers; [`streams`]: open streams; [`token`]: stream tokens;
//! - [`upstream`]: QUIC and HTTP workers; [`api`]: the client HTTP front end (data plane); [`admin`]: the
//!   operator's routes; [`respond`]: answers both share; [`oip`]: the OIP core
//!   the HTTP and gRPC front ends share; [`quic_api`]: the QUIC front end;
//! - [`observer`]: the meta-policy's window observer, lock-free for queries; [`metrics`]:
//!   Prometheus; [`ctx`]: what handlers and tasks share, reload;
//!   [`server`]: start-up, background tasks, shutdown; [`relay`]: a query and its answer in
//!   transit; [`hedge`]: the worker call and its hedge; [`retry`]: retry-on-reset and its
//!   budget.

#![warn(missing_docs)]
#![deny(unreachable_pub)]

pub mod admin;
pub mod api;
pub mod binding;
pub mod config;
pub mod ctx;
pub mod error;
pub mod forward;
pub mod hedge;
pub mod live;
pub mod loads;
pub mod metrics;
pub mod observer;
pub mod oip;
pub mod own_bindings;
pub mod plan;
pub mod policies;
pub mod pull;
pub mod quic_api;
pub mod relay;
pub mod respond;
pub mod retry;
pub mod retry_budget;
pub mod server;
pub mod state;
pub mod streams;
pub mod token;
pub mod upstream;

pub use config::GatewayConfig;
pub use ctx::Ctx;
pub use server::{Gateway, run_from_file};
