//! TapFinger's task model and its rule baselines (docs/jobs.md §10), as pure functions: the
//! paper's two synthetic ML task types and how fast they run at a CPU and GPU allocation
//! ([`task`]), Optimus's marginal-gain allocation ([`optimus`]), Tiresias's two-level
//! least-attained-service queue ([`tiresias`]) and the Random and Min allocations
//! ([`heuristics`]). Not yet used by a run of the simulator or by the command line.

pub mod heuristics;
pub mod optimus;
pub mod task;
pub mod tiresias;

pub use heuristics::{min_allocation, random_allocation};
pub use optimus::{OptimusTask, optimus};
pub use task::{Alloc, MlTask, MlTaskKind};
pub use tiresias::{Tiresias, TiresiasEntry};
