//! Which load a scheduler decides on (docs/model.md §8): the view published every Δ ms (the
//! measured 1 s average, what continuum's schedulers and the gateway see), or every worker's
//! present load, all schedulers' bindings included, as ASET's model assumes (simulator only).

use serde::{Deserialize, Serialize};

/// The load view schedulers decide on (`--load-view`, `load_view:` in a training config).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadViewMode {
    /// The snapshot republished every Δ ms: each worker's load measured over the last load
    /// window, its own bindings counted only as `--own-bindings` says.
    #[default]
    Published,
    /// Each worker's present load: the demand of every stream bound to it now, by any
    /// scheduler, updated at every binding and unbinding (ASET's L_vn(t); simulator only).
    Current,
}

impl LoadViewMode {
    /// Every mode, in the order `--load-view` lists them.
    pub const ALL: [LoadViewMode; 2] = [Self::Published, Self::Current];

    /// The mode's name (`published`, `current`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Published => "published",
            Self::Current => "current",
        }
    }

    /// Parses a mode name; the error lists the names.
    pub fn parse(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|m| m.name() == s.trim())
            .ok_or_else(|| {
                format!(
                    "unknown load view `{}`; expected `published` or `current`",
                    s.trim()
                )
            })
    }

    /// Whether this is the default, `published` (for skipping it when serialising, so files
    /// written before the option existed stay as they were).
    pub fn is_published(&self) -> bool {
        *self == Self::Published
    }
}

impl std::fmt::Display for LoadViewMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_errors_list_them() {
        for m in LoadViewMode::ALL {
            assert_eq!(LoadViewMode::parse(m.name()), Ok(m));
        }
        assert_eq!(LoadViewMode::default(), LoadViewMode::Published);
        let e = LoadViewMode::parse("live").unwrap_err();
        assert!(e.contains("`published` or `current`"), "{e}");
    }
}
