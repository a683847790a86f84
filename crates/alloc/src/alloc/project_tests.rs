//! Tests of the projection against an independent solver: exact enumeration of the active
//! sets of the KKT system (each variable at its lower bound, at its upper bound or free; the
//! budget active or not), on seeded random small blocks and whole problems.

use super::*;
use crate::alloc::problem::ProblemSpec;
use crate::alloc::utility::{Gain, Utility};
use continuum_core::rng::{Purpose, stream_rng};
use rand::Rng;

#[derive(Clone, Copy)]
enum At {
    Lower,
    Upper,
    Free,
}

/// The projection of `z` onto {0 ≤ y ≤ u, Σ y ≤ c} by enumerating all 3ⁿ × 2 active sets and
/// keeping the one whose KKT conditions hold (the QP is strictly convex: exactly one does, up
/// to degenerate ties that give the same point).
fn enumerate(z: &[f64], u: &[f64], c: f64) -> Vec<f64> {
    let n = z.len();
    let eps = 1e-9;
    let mut found: Option<Vec<f64>> = None;
    for code in 0..3usize.pow(n as u32) {
        let at: Vec<At> = (0..n)
            .map(|i| match (code / 3usize.pow(i as u32)) % 3 {
                0 => At::Lower,
                1 => At::Upper,
                _ => At::Free,
            })
            .collect();
        for budget_active in [false, true] {
            let free: Vec<usize> = (0..n).filter(|&i| matches!(at[i], At::Free)).collect();
            let upper_sum: f64 = (0..n)
                .filter(|&i| matches!(at[i], At::Upper))
                .map(|i| u[i])
                .sum();
            let mu = if !budget_active {
                0.0
            } else if free.is_empty() {
                // y is fixed by the bounds; μ must exist in the interval the signs allow.
                if (upper_sum - c).abs() > eps {
                    continue;
                }
                let lo = (0..n)
                    .filter(|&i| matches!(at[i], At::Lower))
                    .map(|i| z[i])
                    .fold(0.0, f64::max);
                let hi = (0..n)
                    .filter(|&i| matches!(at[i], At::Upper))
                    .map(|i| z[i] - u[i])
                    .fold(f64::INFINITY, f64::min);
                if lo > hi + eps {
                    continue;
                }
                lo
            } else {
                let s: f64 = free.iter().map(|&i| z[i]).sum();
                (s + upper_sum - c) / free.len() as f64
            };
            if mu < -eps {
                continue;
            }
            let y: Vec<f64> = (0..n)
                .map(|i| match at[i] {
                    At::Lower => 0.0,
                    At::Upper => u[i],
                    At::Free => z[i] - mu,
                })
                .collect();
            // Primal feasibility, complementary slackness and the sign of each bound's
            // multiplier: at 0 the gradient z − μ points down, at u it points up.
            let ok_vars = (0..n).all(|i| match at[i] {
                At::Lower => z[i] - mu <= eps,
                At::Upper => z[i] - mu >= u[i] - eps,
                At::Free => y[i] >= -eps && y[i] <= u[i] + eps,
            });
            let total: f64 = y.iter().sum();
            let ok_budget = if budget_active {
                (total - c).abs() <= 1e-7 * c.max(1.0)
            } else {
                total <= c + eps
            };
            if ok_vars && ok_budget {
                if let Some(prev) = &found {
                    for (a, b) in prev.iter().zip(&y) {
                        assert!((a - b).abs() < 1e-7, "two KKT points {prev:?} {y:?}");
                    }
                }
                found = Some(y);
            }
        }
    }
    found.expect("the KKT system of a non-empty box ∩ budget always has a solution")
}

fn assert_close(a: &[f64], b: &[f64], what: &str) {
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= 1e-9 * (1.0 + y.abs()),
            "{what}: [{i}] {x} vs {y}\n{a:?}\n{b:?}"
        );
    }
}

#[test]
fn blocks_match_active_set_enumeration() {
    let mut rng = stream_rng(2024, Purpose::Other, 1, 0);
    let mut breaks = Vec::new();
    let mut binding = 0;
    for case in 0..3000 {
        let n = rng.random_range(1..=5);
        let z: Vec<f64> = (0..n).map(|_| rng.random_range(-5.0..15.0)).collect();
        // Some caps 0 (a port that requests none of k), some budgets 0 (an instance without k).
        let u: Vec<f64> = (0..n)
            .map(|_| {
                if rng.random_bool(0.15) {
                    0.0
                } else {
                    rng.random_range(0.0..10.0)
                }
            })
            .collect();
        let c = if rng.random_bool(0.1) {
            0.0
        } else {
            rng.random_range(0.0..20.0)
        };
        let want = enumerate(&z, &u, c);
        let mut got = z.clone();
        let mu = project_block(&mut got, &u, c, &mut breaks);
        assert_close(&got, &want, &format!("case {case}: z {z:?} u {u:?} c {c}"));
        for (i, &v) in got.iter().enumerate() {
            assert!(v >= 0.0 && v <= u[i], "bound broken: {v} ∉ [0, {}]", u[i]);
        }
        let s: f64 = got.iter().sum();
        assert!(s <= c * (1.0 + 1e-12) + 1e-12, "budget broken: Σ {s} > {c}");
        assert!(mu >= 0.0);
        if mu > 0.0 {
            binding += 1;
            assert!(
                (s - c).abs() <= 1e-9 * c.max(1.0),
                "μ > 0 but the budget is slack"
            );
        }
    }
    assert!(
        binding > 500,
        "too few cases with a binding budget: {binding}"
    );
}

#[test]
fn hand_cases() {
    let mut b = Vec::new();
    // Inside: unchanged.
    let mut z = vec![1.0, 2.0];
    assert_eq!(project_block(&mut z, &[5.0, 5.0], 10.0, &mut b), 0.0);
    assert_eq!(z, vec![1.0, 2.0]);
    // Symmetric excess: both lose 1.
    let mut z = vec![3.0, 3.0];
    assert!((project_block(&mut z, &[5.0, 5.0], 4.0, &mut b) - 1.0).abs() < 1e-12);
    assert_close(&z, &[2.0, 2.0], "symmetric");
    // A cap binds first, then the budget: y = (4, 3 − μ) with 4 + 3 − μ = 5 → μ = 2 → (4, 1)?
    // No: the capped entry also moves with μ once z − μ < u: z = (10, 3), u = (4, 10), c = 5:
    // y0 = min(10 − μ, 4) = 4 for μ ≤ 6; y1 = 3 − μ; 4 + 3 − μ = 5 → μ = 2 → (4, 1).
    let mut z = vec![10.0, 3.0];
    assert!((project_block(&mut z, &[4.0, 10.0], 5.0, &mut b) - 2.0).abs() < 1e-12);
    assert_close(&z, &[4.0, 1.0], "cap then budget");
    // Negative entries go to 0; a zero budget gives all zeros.
    let mut z = vec![-1.0, 7.0];
    project_block(&mut z, &[3.0, 3.0], 0.0, &mut b);
    assert_eq!(z, vec![0.0, 0.0]);
}

/// A random problem with `nl` ports, `nr` instances, `k` resources, each link present with
/// probability 0.6.
fn random_problem(
    rng: &mut continuum_core::rng::SimRng,
    nl: usize,
    nr: usize,
    k: usize,
) -> Problem {
    let g = Gain::new(Utility::Linear, 1.0);
    let mut links = Vec::new();
    for l in 0..nl {
        for r in 0..nr {
            if rng.random_bool(0.6) {
                links.push((l, r));
            }
        }
    }
    Problem::new(&ProblemSpec {
        requests: (0..nl)
            .map(|_| (0..k).map(|_| rng.random_range(0.0..6.0)).collect())
            .collect(),
        capacities: (0..nr)
            .map(|_| (0..k).map(|_| rng.random_range(0.0..9.0)).collect())
            .collect(),
        links,
        gains: vec![vec![g; k]; nr],
        betas: vec![0.4; k],
    })
    .unwrap()
}

#[test]
fn whole_problems_land_in_the_polytope_and_match_enumeration() {
    let mut rng = stream_rng(7, Purpose::Other, 2, 0);
    let mut proj = Projector::default();
    for _ in 0..200 {
        let p = random_problem(&mut rng, 4, 3, 3);
        let mut z = Allocation::zeros(&p);
        for v in z.values_mut() {
            *v = rng.random_range(-4.0..12.0);
        }
        let demand: Vec<f64> = (0..4)
            .map(|_| if rng.random_bool(0.7) { 1.0 } else { 0.0 })
            .collect();
        for mask in [None, Some(demand.as_slice())] {
            let mut y = z.clone();
            proj.project(&p, &mut y, mask);
            p.check_feasible(&y, mask, 1e-12).unwrap();
            // Block by block against the enumeration.
            for r in 0..p.instances() {
                for k in 0..p.resources() {
                    let es: Vec<usize> = p.instance_links(r).collect();
                    let zs: Vec<f64> = es.iter().map(|&e| z.get(e, k)).collect();
                    let us: Vec<f64> = es
                        .iter()
                        .map(|&e| {
                            let l = p.links()[e].port;
                            if mask.is_some_and(|x| x[l] <= 0.0) {
                                0.0
                            } else {
                                p.request(l, k)
                            }
                        })
                        .collect();
                    let got: Vec<f64> = es.iter().map(|&e| y.get(e, k)).collect();
                    if !zs.is_empty() {
                        assert_close(&got, &enumerate(&zs, &us, p.capacity(r, k)), "block");
                    }
                }
            }
            // Projection optimality: <z − y, w − y> ≤ 0 for every w in the set; try random
            // feasible w (random points of the box, then projected).
            for _ in 0..20 {
                let mut w = Allocation::zeros(&p);
                for v in w.values_mut() {
                    *v = rng.random_range(0.0..6.0);
                }
                proj.project(&p, &mut w, mask);
                let dot: f64 = z
                    .values()
                    .iter()
                    .zip(y.values())
                    .zip(w.values())
                    .map(|((zv, yv), wv)| (zv - yv) * (wv - yv))
                    .sum();
                assert!(dot <= 1e-9, "variational inequality broken: {dot}");
            }
        }
    }
}

#[test]
fn projection_is_idempotent() {
    let mut rng = stream_rng(8, Purpose::Other, 3, 0);
    let mut proj = Projector::default();
    let p = random_problem(&mut rng, 5, 4, 2);
    let mut y = Allocation::zeros(&p);
    for v in y.values_mut() {
        *v = rng.random_range(-3.0..20.0);
    }
    proj.project(&p, &mut y, None);
    let once = y.clone();
    proj.project(&p, &mut y, None);
    assert_close(y.values(), once.values(), "idempotent");
}
