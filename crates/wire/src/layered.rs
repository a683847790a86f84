//! Server settings (worker, gateway): a YAML file layered with `CONTINUUM_*` environment
//! overrides through the `config` crate. Nested keys use a double underscore
//! (`CONTINUUM_HTTP__LISTEN=127.0.0.1:9000`); only variables whose first key is one of the
//! settings' top-level keys are read, so unrelated `CONTINUUM_*` variables do no harm.

use serde::de::DeserializeOwned;
use std::path::Path;

/// Reads `path` (YAML) and applies the `CONTINUUM_*` variables naming one of `keys`. An error
/// names its cause: the variable whose value is wrong, or the file's line and column (the file
/// alone parsed for the position, where no variable is at fault).
pub fn load<T: DeserializeOwned>(path: &Path, keys: &[&str]) -> anyhow::Result<T> {
    let env: config::Map<String, String> = std::env::vars()
        .filter(|(k, _)| {
            k.strip_prefix("CONTINUUM_").is_some_and(|rest| {
                let first = rest.split("__").next().unwrap_or("").to_ascii_lowercase();
                keys.contains(&first.as_str())
            })
        })
        .collect();
    let layered = config::Config::builder()
        .add_source(config::File::from(path).format(config::FileFormat::Yaml))
        .add_source(
            config::Environment::with_prefix("CONTINUUM")
                .prefix_separator("_")
                .separator("__")
                .try_parsing(true)
                .source(Some(env.clone())),
        )
        .build()
        .and_then(|c| c.try_deserialize());
    layered.map_err(|e| explain::<T>(path, &env, &e.to_string()))
}

/// The error of a layered load, `message`, made to point at its cause: a `CONTINUUM_*`
/// variable in `env` that sets the key at fault, else the file's line and column when the file
/// alone fails to parse as `T`, else the message against the file.
fn explain<T: DeserializeOwned>(
    path: &Path,
    env: &config::Map<String, String>,
    message: &str,
) -> anyhow::Error {
    if let Some(var) = variable_at_fault(env, message) {
        return anyhow::anyhow!(
            "{var}={}: {message} (the variable overrides {})",
            env[&var],
            path.display()
        );
    }
    if let Ok(text) = std::fs::read_to_string(path) {
        if let Err(e) = serde_saphyr::from_str::<T>(&text) {
            if let Some(l) = e.location() {
                let raw = e.without_snippet().to_string();
                let what = raw.rfind(" at line ").map_or(raw.as_str(), |i| &raw[..i]);
                return anyhow::anyhow!("{}:{}:{}: {what}", path.display(), l.line(), l.column());
            }
        }
    }
    anyhow::anyhow!("{}: {message}", path.display())
}

/// The variable of `env` that sets the key a `config` error names (`… for key `http.listen``
/// ↔ `CONTINUUM_HTTP__LISTEN`), or whose last key is the unknown field it names.
fn variable_at_fault(env: &config::Map<String, String>, message: &str) -> Option<String> {
    let quoted = |after: &str| {
        let i = message.find(after)? + after.len();
        let rest = &message[i..];
        Some(rest[..rest.find('`')?].to_string())
    };
    let var_of = |k: &str| format!("CONTINUUM_{}", k.replace('.', "__").to_ascii_uppercase());
    if let Some(key) = quoted("for key `") {
        let var = var_of(&key);
        if env.contains_key(&var) {
            return Some(var);
        }
    }
    let field = quoted("unknown field `")?;
    env.keys()
        .find(|k| {
            k.rsplit("__")
                .next()
                .is_some_and(|last| last.eq_ignore_ascii_case(&field))
        })
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_that_sets_the_key_at_fault_is_named() {
        let env: config::Map<String, String> = [
            ("CONTINUUM_HTTP__LISTEN".to_string(), "nope".to_string()),
            ("CONTINUUM_QUIC__LISTN".to_string(), "x".to_string()),
        ]
        .into_iter()
        .collect();
        assert_eq!(
            variable_at_fault(&env, "invalid socket address syntax for key `http.listen`"),
            Some("CONTINUUM_HTTP__LISTEN".into())
        );
        assert_eq!(
            variable_at_fault(&env, "unknown field `listn`, expected `listen`"),
            Some("CONTINUUM_QUIC__LISTN".into())
        );
        assert_eq!(
            variable_at_fault(&env, "invalid type for key `grpc.listen`"),
            None
        );
    }
}
