//! The gateway (`continuum gateway --config gateway.yaml`).

pub mod upstream;

/// `continuum gateway --config <path>`.
pub fn run_from_file(_path: &std::path::Path) -> anyhow::Result<()> {
    anyhow::bail!("gateway: not built yet")
}
