//! From fractional replicas to whole ones, cluster by cluster.
//!
//! The rule: (1) each worker gets the whole part of its fractional replicas, largest first,
//! as far as the cluster's free capacity allows; (2) one more replica each, by largest
//! remainder, while it fits; (3) what is left of the cluster is filled among the workers the
//! allocation chose there, in proportion to their fractional replicas (the highest
//! frac / (replicas + 1) next, D'Hondt's rule) until no chosen variant fits — an allocator
//! decides the mix, and capacity it leaves idle on a cluster it uses would serve no one. A
//! cluster the allocation gives nothing stays empty.

use continuum_core::topology::{fits, take};
use continuum_sim::Scenario;
use std::collections::BTreeMap;

/// Replicas of every worker of `sc` for fractional replicas `frac` (indexed like the
/// workers), on the clusters `instances`; other clusters' workers get none.
pub(super) fn to_replicas(sc: &Scenario, instances: &[usize], frac: &[f64]) -> Vec<u32> {
    let t = &sc.topology;
    let mut out = vec![0u32; t.workers.len()];
    for &c in instances {
        let mut free: BTreeMap<String, f64> = t.clusters[c].capacity.clone();
        let mut mine: Vec<usize> = (0..t.workers.len())
            .filter(|&w| t.workers[w].cluster == c && frac[w] > 0.0)
            .collect();
        let need = |w: usize| &sc.profiles.variants[t.workers[w].variant].resources;
        // (1) whole parts, largest first.
        mine.sort_by(|&a, &b| frac[b].total_cmp(&frac[a]).then(a.cmp(&b)));
        for &w in &mine {
            for _ in 0..frac[w].floor() as u64 {
                if !fits(&free, need(w)) {
                    break;
                }
                take(&mut free, need(w));
                out[w] += 1;
            }
        }
        // (2) largest remainders.
        let mut by_rest = mine.clone();
        let rest = |w: usize, n: u32| frac[w] - f64::from(n);
        by_rest.sort_by(|&a, &b| rest(b, out[b]).total_cmp(&rest(a, out[a])).then(a.cmp(&b)));
        for &w in &by_rest {
            if rest(w, out[w]) > 0.0 && fits(&free, need(w)) {
                take(&mut free, need(w));
                out[w] += 1;
            }
        }
        // (3) fill in proportion.
        loop {
            let next = mine
                .iter()
                .copied()
                .filter(|&w| fits(&free, need(w)) && need(w).values().any(|x| *x > 0.0))
                .max_by(|&a, &b| {
                    let qa = frac[a] / f64::from(out[a] + 1);
                    let qb = frac[b] / f64::from(out[b] + 1);
                    qa.total_cmp(&qb).then(b.cmp(&a))
                });
            let Some(w) = next else { break };
            take(&mut free, need(w));
            out[w] += 1;
        }
    }
    out
}
