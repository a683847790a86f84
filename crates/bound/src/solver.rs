//! The LP solver behind the bound: one function, so that the solver can be swapped and measured.

use super::BoundError;
use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, NonnegativeConeT, SolverStatus,
};

/// The optimum of an LP: its objective, its columns' values and its rows' prices (dual
/// values, ≥ 0).
pub(crate) struct Optimum {
    /// Primal objective.
    pub value: f64,
    /// Column values.
    pub x: Vec<f64>,
    /// Row prices.
    pub prices: Vec<f64>,
}

/// A linear program in column form: maximise Σ obj_j x_j subject to A x ≤ row_hi and x ≥ 0.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Lp {
    /// Rows.
    pub rows: usize,
    /// Column starts in `row`/`val` (one more than the columns).
    pub colptr: Vec<usize>,
    /// Row of each non-zero, ascending within a column.
    pub row: Vec<usize>,
    /// Value of each non-zero.
    pub val: Vec<f64>,
    /// Objective coefficient of each column (maximised).
    pub obj: Vec<f64>,
    /// Upper bound of each row.
    pub row_hi: Vec<f64>,
}

impl Lp {
    /// Columns.
    pub fn cols(&self) -> usize {
        self.obj.len()
    }
}

/// The optimum of `lp` (maximised).
pub(crate) fn maximise(lp: &Lp) -> Result<Optimum, BoundError> {
    clarabel(lp)
}

/// Clarabel (interior point): each row a ≤ hi and each −x_j ≤ 0 a row of the non-negative cone
/// (A x + s = b, s ≥ 0); the objective in units of its mean coefficient so that the solver's
/// tolerances are relative to a stream's queries.
fn clarabel(lp: &Lp) -> Result<Optimum, BoundError> {
    let n = lp.cols();
    let scale = {
        let m = lp.obj.iter().sum::<f64>() / n.max(1) as f64;
        if m > 0.0 { m } else { 1.0 }
    };
    // Rows: the LP's rows, then −x_j ≤ 0, column j's entries in that order.
    let m = lp.rows + n;
    let mut colptr = Vec::with_capacity(n + 1);
    let mut rowval = Vec::with_capacity(lp.row.len() + n);
    let mut nzval = Vec::with_capacity(lp.row.len() + n);
    for j in 0..n {
        colptr.push(rowval.len());
        for e in lp.colptr[j]..lp.colptr[j + 1] {
            rowval.push(lp.row[e]);
            nzval.push(lp.val[e]);
        }
        rowval.push(lp.rows + j);
        nzval.push(-1.0);
    }
    colptr.push(rowval.len());
    let mut b = lp.row_hi.clone();
    b.extend(std::iter::repeat_n(0.0, n));
    let a = CscMatrix::new(m, n, colptr, rowval, nzval);
    let p = CscMatrix::zeros((n, n));
    let q: Vec<f64> = lp.obj.iter().map(|c| -c / scale).collect();
    let cones = [NonnegativeConeT(m)];
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .max_threads(1)
        .build()
        .map_err(|e| BoundError::Solver(format!("settings: {e}")))?;
    let mut solver = DefaultSolver::new(&p, &q, &a, &b, &cones, settings)
        .map_err(|e| BoundError::Solver(format!("{e:?}")))?;
    solver.solve();
    let sol = &solver.solution;
    match sol.status {
        SolverStatus::Solved | SolverStatus::AlmostSolved => {}
        other => return Err(BoundError::Solver(format!("{other:?}"))),
    }
    // Minimised −obj / scale: the primal objective and the rows' prices in the LP's units.
    Ok(Optimum {
        value: -sol.obj_val * scale,
        x: sol.x.clone(),
        prices: sol.z[..lp.rows]
            .iter()
            .map(|z| (z * scale).max(0.0))
            .collect(),
    })
}
