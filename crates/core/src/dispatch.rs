//! Dispatch: the binding step shared by the simulator and the gateway (docs/model.md §5–6) —
//! feasibility first, then the policy's pick among the feasible candidates. It lives above both
//! [`crate::feasibility`] and [`crate::policy`], which know nothing of each other's callers.

use crate::feasibility::{Candidate, Demand, Fleet, Shortfall, feasible};
use crate::load::LoadView;
use crate::policy::Policy;
use crate::rng::SimRng;
use crate::topology::Reach;

/// The binding step of docs/model.md §5–6, shared by the simulator and the gateway: the feasible
/// candidates (left in `scratch`, reusable across calls), then `policy`'s pick among them.
/// `Err` says how the workers fell short when none is feasible.
#[allow(clippy::too_many_arguments)]
pub fn bind(
    d: &Demand,
    reach: &[Reach],
    fleet: &Fleet,
    view: &LoadView,
    policy: &dyn Policy,
    rng: &mut SimRng,
    scratch: &mut Vec<Candidate>,
) -> Result<Candidate, Shortfall> {
    let short = feasible(d, reach, fleet, view, scratch);
    if scratch.is_empty() {
        return Err(short);
    }
    Ok(scratch[policy.choose(scratch, rng)])
}
