//! The load generator (`continuum loadgen`): opens streams against a gateway with a workload's
//! app classes and λ, sends frames at each stream's rate and reports outcomes.

use clap::Args;
use std::path::PathBuf;

/// Options of `continuum loadgen`.
#[derive(Debug, Clone, Args)]
pub struct LoadgenArgs {
    /// Gateway base URL.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    pub gateway: String,
    /// Workload file (YAML).
    #[arg(long, default_value = "workloads/default.yaml")]
    pub workload: PathBuf,
}

/// Runs `continuum loadgen`.
pub fn execute(_args: &LoadgenArgs) -> anyhow::Result<()> {
    anyhow::bail!("loadgen: not built yet")
}
