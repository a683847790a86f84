//! Deployment rules: explicit replica counts, and "scale workers up to resource saturation".

use std::collections::BTreeMap;

/// Whether `need` fits in `free` (a resource absent from `free` counts as zero).
pub fn fits(free: &BTreeMap<String, f64>, need: &BTreeMap<String, f64>) -> bool {
    need.iter()
        .all(|(k, n)| *n <= free.get(k).copied().unwrap_or(0.0) + 1e-9)
}

/// Takes `need` out of `free` (the caller has checked that it fits).
pub fn take(free: &mut BTreeMap<String, f64>, need: &BTreeMap<String, f64>) {
    for (k, n) in need {
        if let Some(f) = free.get_mut(k) {
            *f -= n;
        }
    }
}

/// The most replicas one cluster may hold. The simulator runs each replica as a server of its
/// own (its batch, its clock), so a topology's memory and time grow with them; assumption:
/// 100 000 is far above any shipped or generated cluster (hundreds at most) and still builds in
/// milliseconds, while a mistyped capacity (`cpu: 2e12`) is refused instead of filling for ever.
pub(crate) const MAX_REPLICAS_PER_CLUSTER: u32 = 100_000;

/// The fill rule of docs/model.md §2: keep adding one replica of each listed variant, round-robin, while
/// the free capacity still covers its resource vector. Returns replicas per listed variant, or
/// `Err(limit)` as soon as the cluster would hold more than `limit` replicas in all (`already`
/// of them placed before the fill). `free` is left with what remains. Variants that need
/// nothing are skipped (they would fill forever).
pub fn fill_to_saturation(
    free: &mut BTreeMap<String, f64>,
    needs: &[&BTreeMap<String, f64>],
    already: u32,
    limit: u32,
) -> Result<Vec<u32>, u32> {
    let mut counts = vec![0u32; needs.len()];
    let mut total = already;
    loop {
        let mut added = false;
        for (i, need) in needs.iter().enumerate() {
            if need.values().any(|x| *x > 0.0) && fits(free, need) {
                if total >= limit {
                    return Err(limit);
                }
                take(free, need);
                counts[i] += 1;
                total += 1;
                added = true;
            }
        }
        if !added {
            return Ok(counts);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn fill_is_round_robin_until_nothing_fits() {
        let mut free = r(&[("cpu", 10.0), ("gpu", 1.0)]);
        let a = r(&[("cpu", 4.0)]);
        let b = r(&[("cpu", 1.0), ("gpu", 1.0)]);
        // Round 1: a (cpu 6 left), b (cpu 5, gpu 0). Round 2: a (cpu 1), b does not fit.
        // Round 3: nothing fits.
        assert_eq!(
            fill_to_saturation(&mut free, &[&a, &b], 0, 10),
            Ok(vec![2, 1])
        );
        assert!((free["cpu"] - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_variant_needing_a_missing_resource_never_fits() {
        let mut free = r(&[("cpu", 8.0)]);
        let g = r(&[("gpu", 1.0)]);
        assert_eq!(fill_to_saturation(&mut free, &[&g], 0, 10), Ok(vec![0]));
    }

    #[test]
    fn a_fill_past_the_limit_stops_there() {
        let a = r(&[("cpu", 1.0)]);
        let mut free = r(&[("cpu", 2e12)]);
        assert_eq!(fill_to_saturation(&mut free, &[&a], 0, 1000), Err(1000));
        // Replicas placed before the fill count towards the limit.
        let mut free = r(&[("cpu", 5.0)]);
        assert_eq!(fill_to_saturation(&mut free, &[&a], 6, 10), Err(10));
        let mut free = r(&[("cpu", 4.0)]);
        assert_eq!(fill_to_saturation(&mut free, &[&a], 6, 10), Ok(vec![4]));
    }
}
