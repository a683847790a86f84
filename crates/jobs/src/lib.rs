//! A batch-jobs simulator (docs/jobs.md): EdgeTuner's workload model next to the streams of
//! `continuum-sim`. A *job* is a gang of tasks — independent (an AI job) or in stages that wait
//! for their parents (a DAG batch job) — each asking for CPU, GPU and memory and carrying an
//! amount of work; its tasks wait in a queue until a scheduling step places them on a node of
//! the topology, and the job's latency (JTL) is its last task's completion minus its arrival.
//!
//! Inputs: [`nodes`] (a topology's clusters split into nodes), [`workload`] (arrivals, job
//! kinds, the jobs of a run). Placement as kube-scheduler and Volcano do it: [`placement`]
//! (the filter, the scoring plugins, Volcano's job-level policies, the named configurations).
//! [`mitigation`] (restart or discard a job's stragglers), [`sim`] (the event loop, in virtual
//! time, deterministic per seed), [`report`] (what a run records), [`cli`] (`continuum jobs
//! simulate | compare`). [`ml`]: TapFinger's problem — ML tasks given CPU cores and GPUs on
//! edge clusters that pull them — and its rule baselines (Optimus, Tiresias, Random, Min).

#![warn(missing_docs)]
#![deny(unreachable_pub)]

pub mod cli;
mod error;
pub mod nodes;
mod resources;
pub mod workload;

pub use error::JobsError;
pub use resources::Res;
pub mod mitigation;
/// TapFinger's problem (docs/jobs.md §10–11): its ML tasks (a resource-insensitive and a
/// resource-sensitive type, their speed at a CPU and GPU allocation, the switching overhead),
/// a multi-cluster run in timesteps with pending sets and eq. 11's rounds, and its rule
/// baselines (Optimus, Tiresias, Random, Min, and continuum's `prior-pull` and `efficient`).
pub mod ml;
pub mod placement;
pub mod report;
pub mod sim;

pub use mitigation::Mitigation;
pub use nodes::{Node, NodeSplit, Nodes};
pub use placement::Placement;
pub use report::{JobRecord, LatencySummary, Report, TaskCounts};
pub use sim::{SimSettings, Stepper, run, run_jobs};
pub use workload::{JobSpec, JobsWorkload, StageSpec};
