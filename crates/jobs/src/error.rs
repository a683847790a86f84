//! The errors of a run that are not about an input file (those are
//! [`continuum_core::config::ConfigError`]s): settings out of range, nodes that cannot be used,
//! names that are not known.

/// Why a run, a node list or a name was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum JobsError {
    /// A run setting is out of its range.
    #[error("{setting}: {message}")]
    Setting {
        /// The setting's name (`step_s`, `duration_s`, …).
        setting: &'static str,
        /// What is wrong and what was expected.
        message: String,
    },
    /// A node's capacity or speed is not usable.
    #[error("node {index}: {message}")]
    Node {
        /// The node's index in the list.
        index: usize,
        /// What is wrong.
        message: String,
    },
    /// There is no node at all: nothing could ever run.
    #[error("no nodes: the topology's clusters have no cpu, gpu or mem_gb capacity to split")]
    NoNodes,
    /// A placement or mitigation name that is not known.
    #[error("{0}")]
    Name(String),
    /// A hand-built job is malformed (a parent after its child, an empty stage).
    #[error("job {job}: {message}")]
    Job {
        /// The job's index in the list.
        job: usize,
        /// What is wrong.
        message: String,
    },
}
