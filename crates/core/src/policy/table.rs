//! A static per-class dispatch table: one policy per stream class (see [`super::classes`]), as
//! a row of `compare` (`--policies per-class:<file>`) and as the gateway's configured policy.
//!
//! File format (YAML):
//!
//! ```yaml
//! default: closest                 # classes not listed, and streams no class fits
//! classes:                         # application class → policy
//!   ar-overlay: random-proportional-load
//!   cognitive-assistance: least-impedance
//! bucket_map: [0, 0, 0, 1, 1, …]   # optional: class index per docs/model.md §9 demand bucket, for
//!                                  # streams of applications the table does not name
//! ```

use super::classes::StreamClasses;
use super::{Policy, by_name};
use crate::config::{ConfigError, Source};
use crate::observe::DemandBuckets;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// One policy per stream class.
#[derive(Clone)]
pub struct PolicyTable {
    /// How streams are classed.
    pub classes: StreamClasses,
    /// The policy of each class, in class order.
    pub policies: Vec<&'static dyn Policy>,
    /// The policy of streams whose class the table does not list (when built from a file with
    /// a `default` and no bucket map, those streams get it).
    pub default: Option<&'static dyn Policy>,
}

impl std::fmt::Debug for PolicyTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyTable")
            .field("classes", &self.classes.names())
            .field(
                "policies",
                &self.policies.iter().map(|p| p.name()).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// The YAML shape of a table file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableFile {
    /// Policy of classes not listed.
    #[serde(default)]
    pub default: Option<String>,
    /// Policy per application class.
    pub classes: BTreeMap<String, String>,
    /// Class order (defaults to the order of `classes`' keys); needed with `bucket_map`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class_order: Option<Vec<String>>,
    /// Class index (in `class_order`) per demand bucket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bucket_map: Option<Vec<u16>>,
    /// Demand buckets of `bucket_map` (default: docs/model.md §9's default buckets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buckets: Option<DemandBuckets>,
}

impl PolicyTable {
    /// Every class uses `policy`.
    pub fn uniform(classes: StreamClasses, policy: &'static dyn Policy) -> Self {
        let n = classes.len();
        Self {
            classes,
            policies: vec![policy; n],
            default: None,
        }
    }

    /// A short label: `class=policy` pairs.
    pub fn describe(&self) -> String {
        self.classes
            .names()
            .iter()
            .zip(&self.policies)
            .map(|(c, p)| format!("{c}={}", p.name()))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The file form of the table.
    pub fn to_file(&self) -> TableFile {
        TableFile {
            default: self.default.map(|p| p.name().to_string()),
            classes: self
                .classes
                .names()
                .iter()
                .zip(&self.policies)
                .map(|(c, p)| (c.clone(), p.name().to_string()))
                .collect(),
            class_order: Some(self.classes.names().to_vec()),
            bucket_map: Some(self.classes.bucket_map().to_vec()),
            buckets: Some(self.classes.buckets().clone()),
        }
    }

    /// Loads a table file (or the `table.yaml` of a folder `continuum table --out` wrote);
    /// errors give the file, line and column or the field.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let in_folder = path.join("table.yaml");
        let path = if path.is_dir() { &in_folder } else { path };
        let src = Source::read(path)?;
        let f: TableFile = src.parse()?;
        Self::from_file(&f).map_err(|(field, m)| src.error_file(field, m))
    }

    /// Builds a table from its file form; the error names the field.
    pub fn from_file(f: &TableFile) -> Result<Self, (&'static str, String)> {
        let policy =
            |field: &'static str, n: &str| by_name(n).ok_or_else(|| (field, super::unknown(n)));
        let default = f
            .default
            .as_deref()
            .map(|n| policy("default", n))
            .transpose()?;
        let order: Vec<String> = match &f.class_order {
            Some(o) => {
                if let Some(c) = o.iter().find(|c| !f.classes.contains_key(*c)) {
                    return Err(("class_order", format!("class `{c}` has no policy")));
                }
                if o.len() != f.classes.len() {
                    return Err(("class_order", "must list every class once".into()));
                }
                o.clone()
            }
            None => f.classes.keys().cloned().collect(),
        };
        if order.is_empty() {
            return Err(("classes", "expected at least one class".into()));
        }
        let buckets = f.buckets.clone().unwrap_or_default();
        let (names, by_bucket, default) = match &f.bucket_map {
            Some(m) => (order, m.clone(), default),
            None => match default {
                // Streams no class fits go to an extra class with the default policy.
                Some(d) => {
                    let mut n = order;
                    let other = n.len() as u16;
                    n.push(OTHER.into());
                    (n, vec![other; buckets.len()], Some(d))
                }
                None => {
                    return Err((
                        "default",
                        "a table without bucket_map needs a default policy".into(),
                    ));
                }
            },
        };
        let classes =
            StreamClasses::new(names, buckets, by_bucket).map_err(|m| ("bucket_map", m))?;
        let policies = classes
            .names()
            .iter()
            .map(|c| match f.classes.get(c) {
                Some(p) => policy("classes", p),
                None => Ok(default.expect("the extra class exists only with a default")),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            classes,
            policies,
            default,
        })
    }

    /// Writes the table as YAML.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let text = serde_saphyr::to_string(&self.to_file()).map_err(std::io::Error::other)?;
        std::fs::write(path, text)
    }
}

/// Name of the extra class of a table file without a bucket map: streams of applications the
/// table does not list.
pub const OTHER: &str = "other";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_round_trips_and_classes_streams() {
        let src = Source::inline(
            "t.yaml",
            "default: closest\nclasses:\n  ar: least-impedance\n  cam: farthest\n",
        );
        let f: TableFile = src.parse().unwrap();
        let t = PolicyTable::from_file(&f).unwrap();
        assert_eq!(t.classes.names(), ["ar", "cam", OTHER]);
        assert_eq!(
            t.describe(),
            "ar=least-impedance,cam=farthest,other=closest"
        );
        let c = t.classes.class_of(Some("new"), 50.0, 30.0);
        assert_eq!(t.policies[c].name(), "closest");
        let back = PolicyTable::from_file(&t.to_file()).unwrap();
        assert_eq!(back.describe(), t.describe());
    }

    #[test]
    fn bad_tables_name_the_field() {
        let f = TableFile {
            default: None,
            classes: [("ar".to_string(), "nearest".to_string())].into(),
            class_order: None,
            bucket_map: Some(vec![0; 12]),
            buckets: None,
        };
        let (field, m) = PolicyTable::from_file(&f).unwrap_err();
        assert_eq!(field, "classes");
        assert!(m.contains("unknown policy `nearest`"), "{m}");
        let f = TableFile {
            bucket_map: None,
            classes: [("ar".to_string(), "closest".to_string())].into(),
            ..f
        };
        assert_eq!(PolicyTable::from_file(&f).unwrap_err().0, "default");
    }
}
