//! Server settings (worker, gateway): a YAML file layered with `CONTINUUM_*` environment
//! overrides through the `config` crate. Nested keys use a double underscore
//! (`CONTINUUM_HTTP__LISTEN=127.0.0.1:9000`); only variables whose first key is one of the
//! settings' top-level keys are read, so unrelated `CONTINUUM_*` variables do no harm.

use serde::de::DeserializeOwned;
use std::path::Path;

/// Reads `path` (YAML) and applies the `CONTINUUM_*` variables naming one of `keys`.
pub fn load<T: DeserializeOwned>(path: &Path, keys: &[&str]) -> anyhow::Result<T> {
    let env: config::Map<String, String> = std::env::vars()
        .filter(|(k, _)| {
            k.strip_prefix("CONTINUUM_").is_some_and(|rest| {
                let first = rest.split("__").next().unwrap_or("").to_ascii_lowercase();
                keys.contains(&first.as_str())
            })
        })
        .collect();
    config::Config::builder()
        .add_source(config::File::from(path).format(config::FileFormat::Yaml))
        .add_source(
            config::Environment::with_prefix("CONTINUUM")
                .prefix_separator("_")
                .separator("__")
                .try_parsing(true)
                .source(Some(env)),
        )
        .build()
        .and_then(|c| c.try_deserialize())
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}
