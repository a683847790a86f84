//! The one error type for bad input files: where it is, which field, what was expected.

use std::fmt;
use std::path::PathBuf;

/// An invalid input file: the place (1-based line and column; 0 when unknown), the field
/// path and what is wrong. Displays as `file:line:col: field: message`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct ConfigError {
    /// The file the error is in.
    pub file: PathBuf,
    /// 1-based line, 0 when the error concerns the whole file.
    pub line: usize,
    /// 1-based column, 0 when unknown.
    pub column: usize,
    /// Dotted path of the offending field (`clusters[3].parent`), empty when not known.
    pub field: String,
    /// What is wrong and what was expected.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        if !self.field.is_empty() {
            write!(f, ": {}", self.field)?;
        }
        write!(f, ": {}", self.message)
    }
}
