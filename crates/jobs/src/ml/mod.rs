//! TapFinger's task model and its rule baselines (docs/jobs.md §10), as pure functions: the
//! paper's two synthetic ML task types and how fast they run at a CPU and GPU allocation
//! ([`task`]), Optimus's marginal-gain allocation ([`optimus`]), Tiresias's two-level
//! least-attained-service queue ([`tiresias`]) and the Random and Min allocations
//! ([`heuristics`]); the multi-cluster problem they act in — TapFinger's setting
//! ([`workload`]), a run timestep by timestep ([`run`], [`report`]), multi-task pulling with
//! eq. 11 ([`claims`]) — and the baselines as schedulers of a run ([`schedulers`]).

pub mod claims;
pub mod heuristics;
pub mod optimus;
pub mod report;
pub mod run;
pub mod schedulers;
pub mod task;
pub mod tiresias;
pub mod workload;

pub use claims::{Claim, Settle, pull_rounds};
pub use heuristics::{min_allocation, random_allocation};
pub use optimus::{OptimusTask, optimus};
pub use report::MlReport;
pub use run::{ActionError, Interval, MlRun, TaskRun, TaskState};
pub use schedulers::{MlScheduler, RULES, efficient_allocation, rule, run_with};
pub use task::{Alloc, MlTask, MlTaskKind};
pub use tiresias::{Tiresias, TiresiasEntry};
pub use workload::{MlSetting, MlTaskSpec};
