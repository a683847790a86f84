//! One-way delay and jitter between a scheduler and every cluster, along the parent tree.

use super::Cluster;

/// The chain of ancestors of `c`, starting with `c` itself.
pub(super) fn ancestors(clusters: &[Cluster], c: usize) -> Vec<usize> {
    let mut chain = vec![c];
    let mut cur = c;
    while let Some(p) = clusters[cur].parent {
        chain.push(p);
        cur = p;
    }
    chain
}

/// Mean delay and standard deviation from `a` to `b` (sum of link means, root of the sum of
/// variances on the tree path), or `None` when they share no ancestor.
#[cfg(test)]
pub(super) fn path_delay(clusters: &[Cluster], a: usize, b: usize) -> Option<(f64, f64)> {
    let paths = Paths::new(clusters);
    paths.from(a).delay_to(&paths, b)
}

/// Every cluster's ancestor chain and link, computed once, so that the delays from one
/// scheduler to every cluster cost a few steps each and no allocation (national-size
/// topologies have thousands of schedulers and clusters).
pub(super) struct Paths {
    /// Ancestors of each cluster, itself first.
    chains: Vec<Vec<u32>>,
    /// Link mean and jitter to the parent, per cluster.
    links: Vec<(f64, f64)>,
}

/// The delays from one cluster: its chain, and each cluster's position on it.
pub(super) struct From {
    source: usize,
    /// Position of each cluster on the source's chain, or `u32::MAX`.
    pos: Vec<u32>,
}

impl Paths {
    /// The chains of `clusters` (a forest: no cycles).
    pub(super) fn new(clusters: &[Cluster]) -> Self {
        Self {
            chains: (0..clusters.len())
                .map(|c| {
                    ancestors(clusters, c)
                        .into_iter()
                        .map(|x| x as u32)
                        .collect()
                })
                .collect(),
            links: clusters
                .iter()
                .map(|c| (c.link_mean_ms, c.link_jitter_ms))
                .collect(),
        }
    }

    /// Delays from `source`.
    pub(super) fn from(&self, source: usize) -> From {
        let mut f = From {
            source,
            pos: vec![u32::MAX; self.chains.len()],
        };
        f.reset(self, source);
        f
    }
}

impl From {
    /// Makes this the delays from `source` instead.
    pub(super) fn reset(&mut self, paths: &Paths, source: usize) {
        for &c in &paths.chains[self.source] {
            self.pos[c as usize] = u32::MAX;
        }
        self.source = source;
        for (i, &c) in paths.chains[source].iter().enumerate() {
            self.pos[c as usize] = i as u32;
        }
    }

    /// Mean delay and standard deviation from the source to `b`: the links from the source up
    /// to the lowest common ancestor, then from `b` up to it (summed in that order), or `None`
    /// when they share no ancestor.
    pub(super) fn delay_to(&self, paths: &Paths, b: usize) -> Option<(f64, f64)> {
        let up_b = &paths.chains[b];
        let k = up_b
            .iter()
            .position(|&c| self.pos[c as usize] != u32::MAX)?;
        let up_a = &paths.chains[self.source][..self.pos[up_b[k] as usize] as usize];
        let mut mean = 0.0;
        let mut var = 0.0;
        for &c in up_a.iter().chain(&up_b[..k]) {
            let (m, j) = paths.links[c as usize];
            mean += m;
            var += j * j;
        }
        Some((mean, var.sqrt()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn c(parent: Option<usize>, mean: f64, jitter: f64) -> Cluster {
        Cluster {
            id: String::new(),
            layer: String::new(),
            parent,
            link_mean_ms: mean,
            link_jitter_ms: jitter,
            capacity: BTreeMap::new(),
        }
    }

    #[test]
    fn delays_add_along_the_tree_path() {
        // 0 = root; 1, 2 children of 0; 3 child of 1.
        let t = vec![
            c(None, 0.0, 0.0),
            c(Some(0), 5.0, 3.0),
            c(Some(0), 7.0, 4.0),
            c(Some(1), 1.0, 0.0),
        ];
        assert_eq!(path_delay(&t, 3, 3), Some((0.0, 0.0)));
        assert_eq!(path_delay(&t, 3, 0), Some((6.0, 3.0)));
        assert_eq!(path_delay(&t, 3, 2), Some((13.0, 5.0)));
        assert_eq!(path_delay(&t, 2, 3), Some((13.0, 5.0)));
    }

    #[test]
    fn separate_trees_do_not_connect() {
        let t = vec![c(None, 0.0, 0.0), c(None, 0.0, 0.0)];
        assert_eq!(path_delay(&t, 0, 1), None);
    }
}
