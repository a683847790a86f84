//! The decide layer: where a stream goes — binding a stream with the core's feasibility and the
//! active policy of its class over the published load view ([`binding`]), and pull dispatch's
//! decision steps ([`pull`]). What they read and write (the view, the active policies, the
//! demand of this gateway's own bindings) is the state layer's ([`crate::state`]).

pub(crate) mod binding;
pub(crate) mod pull;
