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
#[path = "lp_tests.rs"]
mod tests;
