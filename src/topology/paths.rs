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
pub(super) fn path_delay(clusters: &[Cluster], a: usize, b: usize) -> Option<(f64, f64)> {
    let up_a = ancestors(clusters, a);
    let up_b = ancestors(clusters, b);
    let lca = up_a.iter().copied().find(|x| up_b.contains(x))?;
    let mut mean = 0.0;
    let mut var = 0.0;
    for chain in [&up_a, &up_b] {
        for &c in chain.iter().take_while(|&&c| c != lca) {
            mean += clusters[c].link_mean_ms;
            var += clusters[c].link_jitter_ms * clusters[c].link_jitter_ms;
        }
    }
    Some((mean, var.sqrt()))
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
