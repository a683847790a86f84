//! The gateway (`continuum gateway --config gateway.yaml`): one process per antenna or central
//! office. It binds client streams to (variant, cluster) pairs with the core's feasibility and
//! dispatch policies over a live load view, forwards their queries to real workers over QUIC
//! or HTTP, and (with a checkpoint) lets the DQN meta-policy pick the policy of each stream
//! class every window.
//!
//! - [`config`]: settings; [`plan`]: settings resolved against topology and profiles;
//! - [`live`]: the load view fed by worker reports, published every Δ;
//! - [`state`]: shared state; [`policies`]: the active policy of each stream class;
//!   [`binding`]: binding streams; [`forward`]: forwarding queries;
//!   [`error`]: error answers; [`streams`]: open streams; [`token`]: stream tokens;
//! - [`upstream`]: QUIC and HTTP workers; [`api`]: the HTTP front end; [`oip`]: the OIP core
//!   the HTTP and gRPC front ends share; [`quic_api`]: the QUIC front end;
//! - [`metrics`]: Prometheus; [`server`]: tasks, reload, shutdown.

pub mod api;
pub mod binding;
pub mod config;
pub mod error;
pub mod forward;
pub mod hedge;
pub mod live;
pub mod metrics;
pub mod oip;
pub mod plan;
pub mod policies;
pub mod quic_api;
pub mod server;
pub mod state;
pub mod streams;
pub mod token;
pub mod upstream;

pub use config::GatewayConfig;
pub use server::{Ctx, Gateway, run_from_file};
