//! The bound's linear programs, one per time slice, and how they are solved.
//!
//! In slice k, with q_{i,k} the queries stream i emits in it and y_{i,w} those of them worker
//! w ∈ F_i serves: maximise Σ y subject to Σ_w y_{i,w} ≤ q_{i,k} (a stream row per stream) and
//! Σ_i u_{i,w} y_{i,w} ≤ R_w · L (a worker row per worker: its replicas' time in the slice; u
//! the processing time of one query there), y ≥ 0. The slices are solved independently (a
//! stream may be split differently in each), in parallel.
//!
//! **Carried work.** A run is not a sum of independent slices: a query emitted near the end of
//! slice k can be processed in slice k + 1 (a queue, a batch, a held pull query). It succeeds
//! only if processed before its emission + D^i, so work emitted in slice k that succeeds is done
//! within [kL, (k + 1)L + D_k], D_k the longest deadline of the slice's streams. The run's LP
//! couples the slices: worker w's work emitted in k is a_{w,k} (done in slice k) plus b_{w,k,j}
//! (done in slice k + j, at most R_w · min(L, D_k − (j − 1)L) of it), and slice k's worker row
//! holds a_{w,k} + Σ_j b_{w,k−j,j} ≤ R_w · L. Each slice's prices π_{w,k} (its Lagrangian
//! bound's) complete to a feasible dual of that coupled LP with τ_{w,k,j} = max(0, π_{w,k} −
//! π_{w,k+j}) on the b caps (π = 0 past the run's last slice and where a slice needs no
//! prices), so
//!
//!   bound = Σ_k g_k(π_k) + Σ_{w,k,j} R_w · min(L, D_k − (j − 1)L) · max(0, π_{w,k} − π_{w,k+j})
//!
//! bounds the whole run, carried work included (docs/model.md §16). The second sum is the
//! [`Solution::carried`] term (`carry.rs`): zero where the prices do not fall from a slice to
//! the next.

use super::BoundError;
use super::solver::Lp;
use super::streams::BoundStream;
use rayon::prelude::*;
use std::time::Instant;

/// The bound of a run, and what it took.
#[derive(Debug, Clone, PartialEq)]
pub struct Solution {
    /// Queries served: each slice's Lagrangian bound (see [`slice`]) summed, plus
    /// [`Solution::carried`], at most the queries offered. A dual-feasible value of the run's
    /// coupled LP, so an upper bound on it whatever the solver's tolerance.
    pub served: f64,
    /// Of `served`, the queries the bound allows for work carried across slice ends (the
    /// module's second sum).
    pub carried: f64,
    /// Slices with at least one query.
    pub slices: usize,
    /// Of them, those where every query fits without an LP (see [`all_fit`]).
    pub fit: usize,
    /// Master LPs solved, summed over the slices.
    pub lps: usize,
    /// Columns of the last master LP, summed over the slices.
    pub columns: usize,
    /// Columns the full LPs would have had (one per active stream and feasible worker), summed.
    pub pairs: usize,
    /// The largest gap left between a slice's bound and its best served assignment, relative
    /// to the slice's queries (at most 10⁻⁵ when every slice converged).
    pub worst_gap: f64,
    /// Wall-clock time to bound every slice, s.
    pub solve_s: f64,
}

/// Relative gap at which a slice's column generation stops: the bound and a served assignment
/// within 10⁻⁵ of the slice's queries of each other (a thousandth of a percentage point).
const GAP: f64 = 1e-5;

/// Most master LPs per slice; the bound stays valid (a Lagrangian bound) if it stops here.
const MAX_ROUNDS: usize = 60;

/// Slices bounded one after the other, each starting from the prices and columns of the one
/// before; blocks run in parallel. Fixed, so that the bound does not depend on the thread
/// count.
const BLOCK: usize = 25;

/// A column whose reduced cost is below −this leaves the master LP, unless it carries queries.
const DROP: f64 = 0.01;

/// A column carries queries when it serves more than this share of its stream's (an
/// interior-point solution leaves tiny values on columns a vertex would leave at zero).
const USED: f64 = 1e-4;

/// What bounding one slice gave.
#[derive(Debug, Clone, Default)]
struct SliceOutcome {
    served: f64,
    /// The worker prices π_w > 0 at which `served` is the slice's Lagrangian bound (worker,
    /// price), workers ascending; empty where `served` is all the slice's queries (π = 0).
    prices: Vec<(u32, f64)>,
    lps: usize,
    columns: usize,
    pairs: usize,
    gap: f64,
}

/// What a slice hands the next one of its block: the workers' prices and, per stream, the
/// columns its assignment used (stream, index into its workers), sorted.
#[derive(Debug, Clone, Default)]
struct Warm {
    pi: Vec<f64>,
    used: Vec<(u32, u16)>,
}

/// The bound of one slice whose active streams (stream, its queries in the slice) are
/// `active`, on workers whose processing time in the slice is `capacity_ms`, starting from the
/// previous slice's `warm` state (and leaving its own there).
///
/// Column generation: a master LP over some of the (stream, worker) columns, solved for its
/// prices σ_i (stream rows) and π_w (worker rows); every stream's best column, by the reduced
/// cost 1 − σ_i − u_{i,w} π_w, joins it while positive, and columns far below zero leave. For
/// any prices π ≥ 0, Lagrangian duality gives
///
///   g(π) = Σ_w cap_w π_w + Σ_i q_i · max(0, max_{w ∈ F_i} (1 − u_{i,w} π_w)) ≥ the LP's optimum,
///
/// so the slice's bound is the least g over the prices tried: valid at every round, and the
/// optimum itself once no column prices out.
fn slice(
    streams: &[BoundStream],
    active: &[(u32, u32)],
    capacity_ms: &[f64],
    warm: &mut Warm,
) -> Result<SliceOutcome, BoundError> {
    let total: f64 = active.iter().map(|x| f64::from(x.1)).sum();
    let pairs = active
        .iter()
        .map(|x| streams[x.0 as usize].workers.len())
        .sum();
    if all_fit(streams, active, capacity_ms) {
        warm.pi.clear();
        warm.used.clear();
        return Ok(SliceOutcome {
            served: total,
            pairs,
            ..Default::default()
        });
    }
    if warm.pi.len() != capacity_ms.len() {
        warm.pi = vec![0.0; capacity_ms.len()];
    }
    let (dense, workers) = dense_workers(streams, active, capacity_ms.len());
    let mut cols = first_columns(streams, active, warm);
    let mut best = f64::INFINITY;
    let mut lps = 0;
    let mut gap = 1.0;
    let mut pi = vec![0.0; capacity_ms.len()];
    let mut x = Vec::new();
    while lps < MAX_ROUNDS {
        let lp = master(streams, active, &cols, &dense, &workers, capacity_ms);
        let opt = super::solver::maximise(&lp)?;
        lps += 1;
        // Prices of `≤` rows are ≥ 0; an interior-point solution can sit a rounding below.
        for (d, &w) in workers.iter().enumerate() {
            pi[w as usize] = opt.prices[d].max(0.0);
        }
        let sigma = &opt.prices[workers.len()..];
        let g_workers: f64 = workers
            .iter()
            .map(|&w| capacity_ms[w as usize] * pi[w as usize])
            .sum();
        let (g, added) = price_columns(streams, active, &mut cols, (&pi, sigma), &opt.x, g_workers);
        x = opt.x;
        if g < best {
            best = g;
            warm.pi.copy_from_slice(&pi);
        }
        gap = ((best - opt.value) / total.max(1.0)).max(0.0);
        if gap <= GAP || added == 0 {
            break;
        }
        // Columns moved: the values of the next master's columns are no longer `x`'s.
        x.clear();
    }
    // The columns the last master used, for the next slice.
    warm.used.clear();
    if !x.is_empty() {
        let mut e = 0;
        for (k, &(i, q)) in active.iter().enumerate() {
            for &j in &cols[k] {
                if x.get(e).is_some_and(|&y| y > USED * f64::from(q)) {
                    warm.used.push((i, j));
                }
                e += 1;
            }
        }
    }
    // The prices of the bound kept: those of `best`, or none where all the queries are less.
    let prices = if best < total {
        warm.pi
            .iter()
            .enumerate()
            .filter(|&(_, &p)| p > 0.0)
            .map(|(w, &p)| (w as u32, p))
            .collect()
    } else {
        Vec::new()
    };
    Ok(SliceOutcome {
        served: best.min(total),
        prices,
        lps,
        columns: cols.iter().map(Vec::len).sum(),
        pairs,
        gap,
    })
}

/// The workers of the slice's active streams, numbered densely in order of first appearance:
/// (each worker's dense number or `usize::MAX`, the workers in that order).
fn dense_workers(
    streams: &[BoundStream],
    active: &[(u32, u32)],
    n: usize,
) -> (Vec<usize>, Vec<u32>) {
    let mut dense = vec![usize::MAX; n];
    let mut workers: Vec<u32> = Vec::new();
    for &(i, _) in active {
        for &(w, _) in &streams[i as usize].workers {
            if dense[w as usize] == usize::MAX {
                dense[w as usize] = workers.len();
                workers.push(w);
            }
        }
    }
    (dense, workers)
}

/// The value of stream `i`'s column `j` at worker prices `pi` (indexed by worker): 1 − u π_w.
fn value(streams: &[BoundStream], i: u32, j: usize, pi: &[f64]) -> f64 {
    let (w, u) = streams[i as usize].workers[j];
    1.0 - u * pi[w as usize]
}

/// Stream `i`'s best column at prices `pi` (ties: the lower index).
fn best_column(streams: &[BoundStream], i: u32, pi: &[f64]) -> usize {
    let n = streams[i as usize].workers.len();
    (0..n)
        .max_by(|&a, &b| {
            value(streams, i, a, pi)
                .total_cmp(&value(streams, i, b, pi))
                .then(b.cmp(&a))
        })
        .expect("active streams have a worker")
}

/// Each active stream's first columns: its best at the previous slice's prices, and those the
/// previous slice used.
fn first_columns(streams: &[BoundStream], active: &[(u32, u32)], warm: &Warm) -> Vec<Vec<u16>> {
    active
        .iter()
        .map(|&(i, _)| {
            let mut c = vec![best_column(streams, i, &warm.pi) as u16];
            let from = warm.used.partition_point(|u| u.0 < i);
            for &(_, j) in warm.used[from..].iter().take_while(|u| u.0 == i) {
                if !c.contains(&j) {
                    c.push(j);
                }
            }
            c
        })
        .collect()
}

/// One pricing round at worker prices `pi` and stream prices `sigma`, after a master whose
/// column values were `x`: the Lagrangian bound, the workers' part `g_workers` plus Σ_i q_i ·
/// max(0, best column's value) (summed in that order), and how many columns priced out and
/// joined; columns far below zero and unused leave (a stream keeps at least its best).
fn price_columns(
    streams: &[BoundStream],
    active: &[(u32, u32)],
    cols: &mut [Vec<u16>],
    (pi, sigma): (&[f64], &[f64]),
    x: &[f64],
    g_workers: f64,
) -> (f64, usize) {
    let mut g = g_workers;
    let mut added = 0;
    let mut e = 0;
    for (k, &(i, q)) in active.iter().enumerate() {
        let top = best_column(streams, i, pi);
        g += f64::from(q) * value(streams, i, top, pi).max(0.0);
        let n = cols[k].len();
        let keep: Vec<u16> = cols[k]
            .iter()
            .zip(&x[e..e + n])
            .filter(|&(&j, &y)| {
                y > USED * f64::from(q) || value(streams, i, usize::from(j), pi) - sigma[k] > -DROP
            })
            .map(|(&j, _)| j)
            .collect();
        e += n;
        cols[k] = keep;
        if value(streams, i, top, pi) - sigma[k] > 1e-9 && !cols[k].contains(&(top as u16)) {
            cols[k].push(top as u16);
            added += 1;
        }
        if cols[k].is_empty() {
            cols[k].push(top as u16);
        }
    }
    (g, added)
}

/// The master LP over the columns `cols` (per active stream, indices into its workers): rows
/// are the slice's workers (dense numbering) then the active streams.
fn master(
    streams: &[BoundStream],
    active: &[(u32, u32)],
    cols: &[Vec<u16>],
    dense: &[usize],
    workers: &[u32],
    capacity_ms: &[f64],
) -> Lp {
    let mut lp = Lp {
        rows: workers.len() + active.len(),
        ..Lp::default()
    };
    for (k, (&(i, _), c)) in active.iter().zip(cols).enumerate() {
        let ws = &streams[i as usize].workers;
        for &j in c {
            let (w, u) = ws[usize::from(j)];
            lp.colptr.push(lp.row.len());
            lp.row.push(dense[w as usize]);
            lp.val.push(u);
            lp.row.push(workers.len() + k);
            lp.val.push(1.0);
            lp.obj.push(1.0);
        }
    }
    lp.colptr.push(lp.row.len());
    lp.row_hi = workers
        .iter()
        .map(|&w| capacity_ms[w as usize])
        .chain(active.iter().map(|x| f64::from(x.1)))
        .collect();
    lp
}

/// Whether every query of the slice's `active` streams fits its workers' time: a fractional
/// fill, streams with the fewest workers first, each split over its workers in order of the
/// most of its queries they still hold. When it places every query, the slice's optimum is all
/// of them and no LP is needed (exact: the LP can serve no more than is offered); when it does
/// not, the LP decides.
fn all_fit(streams: &[BoundStream], active: &[(u32, u32)], capacity_ms: &[f64]) -> bool {
    let mut order: Vec<&(u32, u32)> = active.iter().collect();
    order.sort_by_key(|(i, _)| (streams[*i as usize].workers.len(), *i));
    let mut room = capacity_ms.to_vec();
    let mut ws: Vec<(u32, f64)> = Vec::new();
    for &&(i, q) in &order {
        let mut need = f64::from(q);
        ws.clear();
        ws.extend_from_slice(&streams[i as usize].workers);
        ws.sort_by(|a, b| {
            (room[b.0 as usize] / b.1)
                .total_cmp(&(room[a.0 as usize] / a.1))
                .then(a.0.cmp(&b.0))
        });
        for &(w, u) in &ws {
            let r = &mut room[w as usize];
            let placed = need.min((*r / u).max(0.0));
            *r -= placed * u;
            need -= placed;
            if need <= 0.0 {
                break;
            }
        }
        if need > 1e-9 * f64::from(q) {
            return false;
        }
    }
    true
}

/// Bounds a run of `streams` on workers whose processing time per slice of `slice_ms` is
/// `capacity_ms` (indexed by worker): every slice in parallel, then the carried work (the sums
/// do not depend on the thread count: they are taken in slice order).
pub fn solve(
    streams: &[BoundStream],
    capacity_ms: &[f64],
    slice_ms: f64,
) -> Result<Solution, BoundError> {
    let t = Instant::now();
    let slices = streams
        .iter()
        .filter_map(|s| s.per_slice.last())
        .map(|x| x.0 as usize + 1)
        .max()
        .unwrap_or(0);
    let mut active: Vec<Vec<(u32, u32)>> = vec![Vec::new(); slices];
    for (i, s) in streams.iter().enumerate() {
        if s.workers.is_empty() {
            continue;
        }
        for &(k, q) in &s.per_slice {
            active[k as usize].push((i as u32, q));
        }
    }
    let solved: Vec<SliceOutcome> = active
        .par_chunks(BLOCK)
        .map(|block| {
            let mut warm = Warm::default();
            block
                .iter()
                .map(|a| {
                    if a.is_empty() {
                        Ok(SliceOutcome::default())
                    } else {
                        slice(streams, a, capacity_ms, &mut warm)
                    }
                })
                .collect::<Result<Vec<_>, BoundError>>()
        })
        .collect::<Result<Vec<_>, BoundError>>()?
        .into_iter()
        .flatten()
        .collect();
    let deadlines: Vec<f64> = active
        .iter()
        .map(|a| {
            a.iter()
                .map(|&(i, _)| streams[i as usize].deadline_ms)
                .fold(0.0, f64::max)
        })
        .collect();
    let prices: Vec<&[(u32, f64)]> = solved.iter().map(|s| s.prices.as_slice()).collect();
    let carried = super::carry::carried(&prices, &deadlines, capacity_ms, slice_ms);
    let offered: f64 = active.iter().flatten().map(|x| f64::from(x.1)).sum();
    let per_slice: f64 = solved.iter().map(|x| x.served).sum();
    Ok(Solution {
        served: (per_slice + carried).min(offered),
        carried: (offered - per_slice).clamp(0.0, carried),
        slices: active.iter().filter(|a| !a.is_empty()).count(),
        fit: active
            .iter()
            .zip(&solved)
            .filter(|(a, x)| !a.is_empty() && x.lps == 0)
            .count(),
        lps: solved.iter().map(|x| x.lps).sum(),
        columns: solved.iter().map(|x| x.columns).sum(),
        pairs: solved.iter().map(|x| x.pairs).sum(),
        worst_gap: solved.iter().map(|x| x.gap).fold(0.0, f64::max),
        solve_s: t.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream of `qps` over whole slices [from, to) of 1 s, served by `workers`.
    fn stream(from: u32, to: u32, qps: u32, workers: &[(u32, f64)]) -> BoundStream {
        BoundStream {
            queries: u64::from(qps * (to - from)),
            per_slice: (from..to).map(|k| (k, qps)).collect(),
            workers: workers.to_vec(),
            deadline_ms: 0.0,
        }
    }

    fn served(streams: &[BoundStream], caps: &[f64]) -> f64 {
        solve(streams, caps, 1000.0).unwrap().served
    }

    #[test]
    fn two_workers_by_hand() {
        // Two workers of one replica; a query takes 10 ms on either, so each serves 100 qps
        // (1000 ms of processing per 1 s slice). Over 10 s: stream A (150 qps) can use both,
        // stream B (80 qps) only worker 1. Best: B all on worker 1 (80 qps), A 20 qps on
        // worker 1 and 100 qps on worker 0: 200 of 230 qps, 2000 of 2300 queries.
        let a = stream(0, 10, 150, &[(0, 10.0), (1, 10.0)]);
        let b = stream(0, 10, 80, &[(1, 10.0)]);
        let got = served(&[a, b], &[1000.0, 1000.0]);
        assert!((got - 2000.0).abs() < 1e-3, "{got}");
    }

    #[test]
    fn capacity_holds_in_every_slice() {
        // One worker, 100 qps. C (200 qps) in slices 0–4 then D (200 qps) in 5–9: half of
        // each, 1000 of 2000. E (50 qps, slices 0–9) beside C: 100 per slice while C runs,
        // then E's 50: 500 + 250 = 750.
        let c = stream(0, 5, 200, &[(0, 10.0)]);
        let d = stream(5, 10, 200, &[(0, 10.0)]);
        let e = stream(0, 10, 50, &[(0, 10.0)]);
        assert!((served(&[c.clone(), d], &[1000.0]) - 1000.0).abs() < 1e-3);
        assert!((served(&[c, e], &[1000.0]) - 750.0).abs() < 1e-3);
    }

    #[test]
    fn streams_may_move_between_slices() {
        // Workers 0 and 1 of 100 qps. A (100 qps, slices 0–9) can use both; B (100 qps,
        // slices 0–4) only worker 0; C (100 qps, slices 5–9) only worker 1. Slice by slice A
        // takes the worker the other stream leaves free: all 2000 queries. A binding could not
        // move A at 5 s; the best fixed split serves 1500 (A on 0 from the start, B refused).
        // The bound relaxes that (docs/model.md §16).
        let a = stream(0, 10, 100, &[(0, 10.0), (1, 10.0)]);
        let b = stream(0, 5, 100, &[(0, 10.0)]);
        let c = stream(5, 10, 100, &[(1, 10.0)]);
        assert!((served(&[a, b, c], &[1000.0, 1000.0]) - 2000.0).abs() < 1e-3);
    }

    #[test]
    fn processing_time_per_query_differs_by_worker() {
        // One stream of 100 qps, 1 s: a slow worker (20 ms a query: 50 qps) and a fast one
        // (5 ms: 200 qps) of one replica each; the fast one alone serves it all. With the fast
        // one at half a replica's time (500 ms per slice: 100 qps) still all; at 250 ms, 50 on
        // it and 50 on the slow one.
        let s = stream(0, 1, 100, &[(0, 20.0), (1, 5.0)]);
        assert!((served(std::slice::from_ref(&s), &[1000.0, 1000.0]) - 100.0).abs() < 1e-3);
        assert!((served(std::slice::from_ref(&s), &[1000.0, 500.0]) - 100.0).abs() < 1e-3);
        assert!((served(std::slice::from_ref(&s), &[0.0, 250.0]) - 50.0).abs() < 1e-3);
        assert!((served(&[s], &[1000.0, 250.0]) - 100.0).abs() < 1e-3);
    }

    /// `stream` with a deadline.
    fn due(mut s: BoundStream, deadline_ms: f64) -> BoundStream {
        s.deadline_ms = deadline_ms;
        s
    }

    #[test]
    fn a_burst_carries_into_the_next_slice_up_to_its_deadline() {
        // One worker of 100 qps (10 ms a query); 150 queries in slice 0, none in slice 1.
        // Slice by slice, 100. A queue finishes the other 50 in slice 1, but only those whose
        // deadline reaches it: with 200 ms, at most 200 ms of slice 1 (20 queries) → 120; with
        // 1 s, all 150; with 0, none carried.
        let burst = stream(0, 1, 150, &[(0, 10.0)]);
        let quiet = stream(1, 2, 10, &[(0, 10.0)]);
        for (deadline, want) in [(0.0, 110.0), (200.0, 130.0), (1000.0, 160.0)] {
            let s = [due(burst.clone(), deadline), due(quiet.clone(), deadline)];
            let sol = solve(&s, &[1000.0], 1000.0).unwrap();
            assert!((sol.served - want).abs() < 1e-6, "{deadline}: {sol:?}");
            assert!(
                (sol.carried - (want - 110.0)).abs() < 1e-6,
                "{deadline}: {sol:?}"
            );
        }
    }

    #[test]
    fn steady_overload_carries_only_past_the_run() {
        // 200 qps on one worker of 100 qps for 10 s, deadline 500 ms: each slice serves its
        // 100; nothing can move between equally loaded slices, and the last slice's work can
        // run 500 ms past the run: 1000 + 50.
        let s = due(stream(0, 10, 200, &[(0, 10.0)]), 500.0);
        let sol = solve(&[s], &[1000.0], 1000.0).unwrap();
        assert!((sol.served - 1050.0).abs() < 1e-6, "{sol:?}");
        assert!((sol.carried - 50.0).abs() < 1e-6, "{sol:?}");
    }

    #[test]
    fn a_deadline_longer_than_a_slice_reaches_several() {
        // Slices of 100 ms (10 queries each on the worker); 30 queries in slice 0, deadline
        // 250 ms: slices 1 and 2 whole and half of slice 3 take 25 more, capped by the 30
        // offered: all 30.  With 150 ms: slice 1 and half of 2: 10 + 15 = 25.
        let burst = stream(0, 1, 30, &[(0, 10.0)]);
        for (deadline, want) in [(250.0, 30.0), (150.0, 25.0)] {
            let sol = solve(&[due(burst.clone(), deadline)], &[100.0], 100.0).unwrap();
            assert!((sol.served - want).abs() < 1e-6, "{deadline}: {sol:?}");
        }
    }

    #[test]
    fn unservable_streams_and_an_empty_run() {
        let none = stream(0, 1, 10, &[]);
        assert_eq!(served(&[none], &[1000.0]), 0.0);
        assert_eq!(served(&[], &[]), 0.0);
    }

    #[test]
    fn column_generation_finds_the_full_lps_optimum() {
        // Random slices of 40 streams on 6 workers (deterministic draws): the bound equals the
        // optimum of the LP with every column, and is never below it.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
        for case in 0..20 {
            let streams: Vec<BoundStream> = (0..40)
                .map(|_| {
                    let mut ws: Vec<(u32, f64)> = Vec::new();
                    for w in 0..6u32 {
                        if rng.random::<f64>() < 0.5 {
                            ws.push((w, rng.random_range(2.0..20.0)));
                        }
                    }
                    if ws.is_empty() {
                        ws.push((rng.random_range(0..6), 5.0));
                    }
                    stream(0, 1, rng.random_range(5..60), &ws)
                })
                .collect();
            let caps: Vec<f64> = (0..6).map(|_| rng.random_range(100.0..1500.0)).collect();
            let active: Vec<(u32, u32)> = streams
                .iter()
                .enumerate()
                .map(|(i, s)| (i as u32, s.per_slice[0].1))
                .collect();
            let all: Vec<Vec<u16>> = streams
                .iter()
                .map(|s| (0..s.workers.len() as u16).collect())
                .collect();
            let dense: Vec<usize> = (0..6).collect();
            let workers: Vec<u32> = (0..6).collect();
            let full =
                crate::solver::maximise(&master(&streams, &active, &all, &dense, &workers, &caps))
                    .unwrap()
                    .value;
            let got = served(&streams, &caps);
            assert!(got >= full - 1e-6 * full, "case {case}: {got} < {full}");
            assert!(
                got <= full * (1.0 + 2.0 * GAP),
                "case {case}: {got} > {full}"
            );
        }
    }
}
