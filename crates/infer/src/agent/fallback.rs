//! The agent's fallback: what a class does when the network is not confident enough. It is a
//! static per-class table per load level — the level of a scheduler being its incoming query
//! rate, averaged over the state's history windows — each table the best static one found for
//! that level on training-distribution episodes. One level is one table. A scheduler leaves its
//! level only when its rate passes an edge by more than [`HYSTERESIS`], so measurement noise
//! around an edge does not flip tables from window to window.

use serde::{Deserialize, Serialize};

/// Share of an edge's rate by which a scheduler's rate must pass it to change level
/// (assumption: about the noise of a 20 s mean of an antenna's rate at λ = 60 — some 30 streams,
/// whose count varies by ≈ 1/√30 ≈ 18 %, halved because the level only needs to be stable, not
/// exact).
pub(crate) const HYSTERESIS: f64 = 0.1;

/// Static per-class tables by load level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fallback {
    /// Upper edges of the load levels, a scheduler's incoming queries per second, increasing;
    /// one fewer than `tables`.
    pub edges_qps: Vec<f64>,
    /// Per level, the action (index) of each class.
    pub tables: Vec<Vec<usize>>,
    /// Per level, the margin the network's greedy action must beat the table by (`None`:
    /// infinite, the level is its table alone), chosen on the episodes that chose the level's
    /// table; empty: the checkpoint's one margin at every level.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub margins: Vec<Option<f64>>,
}

impl Fallback {
    /// One table for every load.
    pub fn single(table: Vec<usize>) -> Self {
        Self {
            edges_qps: Vec::new(),
            tables: vec![table],
            margins: Vec::new(),
        }
    }

    /// The table of a scheduler whose incoming rate is `load_qps`.
    pub fn table(&self, load_qps: f64) -> &[usize] {
        &self.tables[self.edges_qps.partition_point(|e| *e <= load_qps)]
    }

    /// The level of a scheduler whose rate is `load_qps` and whose level was `prev`: `prev`
    /// unless the rate has passed one of its edges by more than [`HYSTERESIS`] of it (then the
    /// level the rate falls in).
    pub fn level(&self, load_qps: f64, prev: Option<usize>) -> usize {
        let raw = self.edges_qps.partition_point(|e| *e <= load_qps);
        let Some(prev) = prev.filter(|p| *p < self.tables.len()) else {
            return raw;
        };
        let lower = prev.checked_sub(1).map(|i| self.edges_qps[i]);
        let upper = self.edges_qps.get(prev).copied();
        let below = lower.is_some_and(|e| load_qps < e * (1.0 - HYSTERESIS));
        let above = upper.is_some_and(|e| load_qps >= e * (1.0 + HYSTERESIS));
        if below || above { raw } else { prev }
    }

    /// The margin at `level`: its own where the levels have margins, else `margin`.
    pub fn margin(&self, level: usize, margin: f64) -> f64 {
        match self.margins.get(level) {
            Some(m) => m.unwrap_or(f64::INFINITY),
            None => margin,
        }
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
        if !self.margins.is_empty() && self.margins.len() != self.tables.len() {
            return Err(format!(
                "expected one margin per level ({}) or none, got {}",
                self.tables.len(),
                self.margins.len()
            ));
        }
        if self
            .margins
            .iter()
            .flatten()
            .any(|m| m.is_nan() || *m < 0.0)
        {
            return Err("margins must be numbers >= 0 (null: infinite)".into());
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
            margins: Vec::new(),
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

    #[test]
    fn per_level_margins_override_the_one_margin() {
        let mut f = Fallback {
            edges_qps: vec![500.0],
            tables: vec![vec![0], vec![1]],
            margins: Vec::new(),
        };
        assert_eq!(f.margin(1, 0.1), 0.1);
        f.margins = vec![None, Some(0.05)];
        assert!(f.validate(1, 2).is_ok());
        assert_eq!(f.margin(0, 0.1), f64::INFINITY);
        assert_eq!(f.margin(1, 0.1), 0.05);
        f.margins = vec![Some(0.05)];
        assert!(f.validate(1, 2).is_err());
        f.margins = vec![Some(-1.0), None];
        assert!(f.validate(1, 2).is_err());
    }

    #[test]
    fn levels_change_only_past_the_hysteresis() {
        let f = Fallback {
            edges_qps: vec![500.0, 900.0],
            tables: vec![vec![0], vec![1], vec![2]],
            margins: Vec::new(),
        };
        assert_eq!(f.level(520.0, None), 1);
        // Just above the edge: level 0 stays; 10 % above it moves up.
        assert_eq!(f.level(540.0, Some(0)), 0);
        assert_eq!(f.level(551.0, Some(0)), 1);
        // Just below it: level 1 stays; 10 % below it moves down.
        assert_eq!(f.level(460.0, Some(1)), 1);
        assert_eq!(f.level(449.0, Some(1)), 0);
        // A jump over two levels goes straight to the level of the rate.
        assert_eq!(f.level(2000.0, Some(0)), 2);
        assert_eq!(Fallback::single(vec![0]).level(1e9, Some(0)), 0);
    }
}
