//! The agent's fallback: what a class does when the network is not confident enough. It is a
//! static per-class table per load level — the level of a scheduler being its incoming query
//! rate, averaged over the state's history windows — each table the best static one found for
//! that level on training-distribution episodes. One level is one table.

use serde::{Deserialize, Serialize};

/// Static per-class tables by load level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fallback {
    /// Upper edges of the load levels, a scheduler's incoming queries per second, increasing;
    /// one fewer than `tables`.
    pub edges_qps: Vec<f64>,
    /// Per level, the action (index) of each class.
    pub tables: Vec<Vec<usize>>,
}

impl Fallback {
    /// One table for every load.
    pub fn single(table: Vec<usize>) -> Self {
        Self {
            edges_qps: Vec::new(),
            tables: vec![table],
        }
    }

    /// The table of a scheduler whose incoming rate is `load_qps`.
    pub fn table(&self, load_qps: f64) -> &[usize] {
        &self.tables[self.edges_qps.partition_point(|e| *e <= load_qps)]
    }

    /// Checks the shape against `classes` classes and `actions` actions.
    pub fn validate(&self, classes: usize, actions: usize) -> Result<(), String> {
        if self.tables.is_empty() || self.edges_qps.len() + 1 != self.tables.len() {
            return Err(format!(
                "expected one more table than edges, got {} tables and {} edges",
                self.tables.len(),
                self.edges_qps.len()
            ));
        }
        if self
            .edges_qps
            .windows(2)
            .any(|w| w[0] >= w[1] || !w[1].is_finite())
            || self.edges_qps.iter().any(|e| !e.is_finite())
        {
            return Err("edges_qps must be finite and increasing".into());
        }
        if let Some(t) = self
            .tables
            .iter()
            .find(|t| t.len() != classes || t.iter().any(|a| *a >= actions))
        {
            return Err(format!(
                "every table needs one action (< {actions}) per class ({classes}), got {t:?}"
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_pick_their_table() {
        let f = Fallback {
            edges_qps: vec![500.0, 900.0],
            tables: vec![vec![0, 1], vec![2, 2], vec![3, 0]],
        };
        assert!(f.validate(2, 4).is_ok());
        assert_eq!(f.table(100.0), [0, 1]);
        assert_eq!(f.table(500.0), [2, 2]);
        assert_eq!(f.table(2000.0), [3, 0]);
        assert!(f.validate(3, 4).is_err());
        assert!(f.validate(2, 3).is_err());
        let bad = Fallback {
            edges_qps: vec![900.0, 500.0],
            ..f
        };
        assert!(bad.validate(2, 4).is_err());
        assert_eq!(Fallback::single(vec![1]).table(1e9), [1]);
    }
}
