//! Own-binding accounting settings at the gateway (`own_bindings:` in its configuration; docs/model.md
//! §8): between two publications of the load view, the gateway adds the demand of the streams
//! it has bound itself, by the core's rule ([`continuum_core::load::OwnLoad`]).

use continuum_core::load::{OwnBindings, OwnLoad};
use serde::Deserialize;

/// `own_bindings:` settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OwnBindingsSettings {
    /// `off`, `publication` or `window` (default: the simulator's default).
    #[serde(default = "default_mode")]
    pub mode: String,
    /// The window over which the workers measure the loads they report, ms (the workers'
    /// `load_window_ms`, 1000 by default): `window` adds the share of a recent binding that
    /// this window has not measured yet.
    #[serde(default = "default_window_ms")]
    pub window_ms: u64,
}

impl Default for OwnBindingsSettings {
    fn default() -> Self {
        Self {
            mode: default_mode(),
            window_ms: default_window_ms(),
        }
    }
}

fn default_mode() -> String {
    OwnBindings::default().name().into()
}
fn default_window_ms() -> u64 {
    1000
}

impl OwnBindingsSettings {
    /// Checks the mode and window; the error names the field.
    pub fn validate(&self) -> Result<(), String> {
        OwnBindings::parse(&self.mode).map_err(|e| format!("own_bindings.mode: {e}"))?;
        if self.window_ms == 0 {
            return Err("own_bindings.window_ms: expected >= 1".into());
        }
        Ok(())
    }

    /// A fresh accounting by these settings (`off` if the mode does not parse: checked by
    /// [`Self::validate`]).
    pub fn accounting(&self) -> OwnLoad {
        OwnLoad::new(
            OwnBindings::parse(&self.mode).unwrap_or_default(),
            self.window_ms as f64,
        )
    }
}
