//! Work carried across slice ends (docs/model.md §16): what the run's coupled LP allows beyond
//! the slices' own bounds, from each slice's prices (see the `lp` module's derivation).

/// The bound's allowance for work carried across slice ends (the module's second sum): for
/// each slice k, worker w priced π_{w,k} > 0 there and later slice k + j that the slice's
/// longest deadline `deadlines[k]` reaches, R_w · min(L, D_k − (j − 1)L) · max(0, π_{w,k} −
/// π_{w,k+j}); past the last slice π = 0. `capacity_ms[w]` is R_w · L.
pub(crate) fn carried(
    prices: &[&[(u32, f64)]],
    deadlines: &[f64],
    capacity_ms: &[f64],
    slice_ms: f64,
) -> f64 {
    let price = |k: usize, w: u32| {
        prices.get(k).map_or(0.0, |p| {
            p.binary_search_by_key(&w, |x| x.0).map_or(0.0, |i| p[i].1)
        })
    };
    let mut sum = 0.0;
    for (k, slice) in prices.iter().enumerate() {
        let d = deadlines[k];
        for &(w, p) in *slice {
            let per_ms = capacity_ms[w as usize] / slice_ms;
            let mut j = 1;
            while ((j - 1) as f64) * slice_ms < d {
                let reach = (d - (j - 1) as f64 * slice_ms).min(slice_ms);
                if k + j >= prices.len() {
                    // Past the run: no price, and every later slice alike.
                    sum += per_ms * (d - (j - 1) as f64 * slice_ms) * p;
                    break;
                }
                sum += per_ms * reach * (p - price(k + j, w)).max(0.0);
                j += 1;
            }
        }
    }
    sum
}
