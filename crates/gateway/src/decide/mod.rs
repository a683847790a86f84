//! The decide layer: every placement — binding a stream with the core's feasibility and the
//! active policy of its class over the published load view, re-binding it, and the targets of
//! a hedge and of a retry-on-reset ([`binding`]), and pull dispatch's decision steps
//! ([`pull`]). The forward layer above asks it where a query goes; it never calls forward. What they read and write (the view, the active policies, the
//! demand of this gateway's own bindings) is the state layer's ([`crate::state`]).

pub(crate) mod binding;
pub(crate) mod pull;

use crate::state::GatewayState;

/// The decide layer's owner: binds, re-binds and closes streams, and places hedges and
/// retries, over the state it borrows.
/// Its methods (in `binding`) read and change the state only through the state's own API.
#[derive(Clone, Copy)]
pub struct Decider<'a> {
    state: &'a GatewayState,
}

impl<'a> Decider<'a> {
    /// The decide layer over `state`.
    pub fn new(state: &'a GatewayState) -> Self {
        Self { state }
    }
}
