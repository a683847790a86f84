//! Loading YAML input files with errors that point at `file:line:col` and name the field.

mod dist;
mod error;
mod out;
mod suggest;

pub use dist::{Dist, DistSpec, TaggedDist};
pub use error::ConfigError;
pub use out::{check_threads, checkpoint_in, checkpoint_name, out_file, prepare_out, writable_dir};
pub use suggest::{closest_name, did_you_mean};

use serde::de::DeserializeOwned;
use serde_saphyr::Spanned;
use std::path::{Path, PathBuf};

/// The version of the input and report formats this build reads and writes. An input file
/// may say `schema: 1` at the top (absent means 1); a report carries `"schema": 1`. A change
/// that an older reader would misread raises it.
pub const SCHEMA: u64 = 1;

/// Checks an input file's `schema` field: absent or [`SCHEMA`]; another version is refused
/// with where it is and what this build reads.
pub fn check_schema(src: &Source, schema: &Option<Spanned<u64>>) -> Result<(), ConfigError> {
    match schema {
        Some(s) if s.value != SCHEMA => Err(src.error_at(
            s,
            "schema",
            format!(
                "this file is written in schema {}, and this build of continuum reads schema {SCHEMA}{}",
                s.value,
                if s.value > SCHEMA {
                    ": it needs a newer continuum"
                } else {
                    ""
                }
            ),
        )),
        _ => Ok(()),
    }
}

/// `body` as pretty JSON with `"schema": SCHEMA` first: how every report is written.
pub fn versioned_json<T: serde::Serialize>(body: &T) -> serde_json::Result<String> {
    #[derive(serde::Serialize)]
    struct Versioned<'a, T> {
        schema: u64,
        #[serde(flatten)]
        body: &'a T,
    }
    serde_json::to_string_pretty(&Versioned {
        schema: SCHEMA,
        body,
    })
}

/// A YAML source: its path (for messages) and its text.
#[derive(Debug, Clone)]
pub struct Source {
    /// The path the text was read from, as given.
    pub path: PathBuf,
    /// The whole text of the file.
    pub text: String,
}

impl Source {
    /// Reads a file; a missing or unreadable file is a [`ConfigError`] naming it.
    pub fn read(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: path.to_path_buf(),
            line: 0,
            column: 0,
            field: String::new(),
            message: format!("cannot read file: {e}"),
        })?;
        Ok(Self {
            path: path.to_path_buf(),
            text,
        })
    }

    /// Wraps text that did not come from a file (tests, embedded defaults).
    pub fn inline(name: &str, text: &str) -> Self {
        Self {
            path: PathBuf::from(name),
            text: text.to_string(),
        }
    }

    /// Parses the text as `T`; a syntax or shape error carries its line and column.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, ConfigError> {
        serde_saphyr::from_str::<T>(&self.text).map_err(|e| {
            let (line, column) = e
                .location()
                .map(|l| (l.line() as usize, l.column() as usize))
                .unwrap_or((0, 0));
            let raw = e.without_snippet().to_string();
            let message = match raw.rfind(" at line ") {
                Some(i) => raw[..i].to_string(),
                None => raw,
            };
            ConfigError {
                file: self.path.clone(),
                line,
                column,
                field: String::new(),
                message,
            }
        })
    }

    /// An error about the value of `spanned`, found at `field`.
    pub fn error_at<T>(
        &self,
        spanned: &Spanned<T>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> ConfigError {
        ConfigError {
            file: self.path.clone(),
            line: spanned.referenced.line() as usize,
            column: spanned.referenced.column() as usize,
            field: field.into(),
            message: message.into(),
        }
    }

    /// Reports a deprecated key at `spanned` (`old`, still accepted) and the key that replaces
    /// it (`new`), as a `tracing` warning that points at `file:line:col`: the core does no I/O
    /// itself, the binary's subscriber prints it (standard error by default).
    pub fn warn_deprecated<T>(&self, spanned: &Spanned<T>, old: &str, new: &str) {
        let at = self.error_at(
            spanned,
            old,
            format!("deprecated name, accepted for now: write `{new}` instead"),
        );
        tracing::warn!("{at}");
    }

    /// An error about the file as a whole (no single place to point at).
    pub fn error_file(&self, field: impl Into<String>, message: impl Into<String>) -> ConfigError {
        ConfigError {
            file: self.path.clone(),
            line: 0,
            column: 0,
            field: field.into(),
            message: message.into(),
        }
    }
}
