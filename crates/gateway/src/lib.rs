//! The gateway (`continuum gateway --config gateway.yaml`): one process per antenna or central
//! office. It binds client streams to (variant, cluster) pairs with the core's feasibility and
//! dispatch policies over a live load view, forwards their queries to real workers over QUIC
//! or HTTP, and (with a checkpoint) lets the DQN meta-policy pick the policy of each stream
//! class every window.
//!
//! Layers, each calling only the ones below it and each with one owner type
//! (docs/architecture.md):
//!
//! - `front`: the client HTTP, gRPC and QUIC APIs and the operator's routes; they translate;
//! - `decide`: binding streams, pull dispatch — owned by [`Decider`];
//! - `forward`: one query to its worker and back — relay, hedge, retry — owned by `Forwarder`,
//!   which asks the [`Decider`] where to re-bind, hedge or retry;
//! - [`state`]: the published load view, open streams and tokens, the active policies, the
//!   meta-policy's window counts, the retry budget — owned by [`state::GatewayState`], whose
//!   internals are private: the layers above read and change it through its methods;
//! - [`upstream`]: the workers, over QUIC or HTTP.
//!
//! Beside them: [`config`] (settings) and [`plan`] (settings resolved against topology and
//! profiles); [`control`] (the control plane: plan, workers, agent, reload: [`ControlPlane`]);
//! [`server`] (start-up, background tasks, shutdown: [`Gateway`]); [`metrics`] (Prometheus);
//! [`error`] (the error answer).

#![warn(missing_docs)]
#![deny(unreachable_pub)]

pub mod config;
pub mod control;
pub(crate) mod decide;
pub mod error;
pub(crate) mod forward;
pub(crate) mod front;
pub mod metrics;
pub mod plan;
pub mod server;
pub mod state;
pub mod upstream;

pub use config::GatewayConfig;
pub use control::ControlPlane;
pub use decide::Decider;
pub use server::{Gateway, run_from_file};
