//! The plugins' formulas on their own: the broken-linear shape, the standard deviation of
//! BalancedAllocation, and every score inside [0, 100] on many random nodes and tasks.

use super::*;
use continuum_core::rng::{Purpose, stream_rng};
use rand::Rng;

#[test]
fn broken_linear_interpolates_and_is_flat_outside() {
    let shape = [(20.0, 2.0), (60.0, 10.0)];
    assert_eq!(broken_linear(&shape, 0.0), 2.0);
    assert_eq!(broken_linear(&shape, 40.0), 6.0);
    assert_eq!(broken_linear(&shape, 100.0), 10.0);
    assert_eq!(broken_linear(&[], 50.0), 0.0);
}

#[test]
fn balanced_allocation_takes_the_population_deviation() {
    assert_eq!(std_dev(&[0.5]), 0.0);
    assert!((std_dev(&[0.2, 0.6]) - 0.2).abs() < 1e-12);
    // Three fractions 0, 0.5, 1: mean 0.5, deviation √(0.5 / 3).
    assert!((std_dev(&[0.0, 0.5, 1.0]) - (0.5f64 / 3.0).sqrt()).abs() < 1e-12);
}

#[test]
fn every_score_lies_in_0_100() {
    let plugins = [
        Plugin::LeastAllocated,
        Plugin::MostAllocated,
        Plugin::RequestedToCapacityRatio(vec![(0.0, 0.0), (100.0, 10.0)]),
        Plugin::BalancedAllocation,
        Plugin::EqualPriority,
        Plugin::ResourceLimits,
        Plugin::Binpack,
    ];
    let mut rng = stream_rng(1, Purpose::Other, 0, 0);
    let weights = Res::new(1.0, 2.0, 1.0);
    for _ in 0..2000 {
        let mut r = || rng.random_range(0.0..8.0);
        let cap = Res::new(r(), r(), r());
        let used = Res::new(r() * 0.5, r() * 0.5, r() * 0.5);
        let request = Res::new(r(), r(), r());
        let limit = Res::new(r(), 0.0, r());
        let s = Scoring {
            cap: &cap,
            used: &used,
            request: &request,
            limit: &limit,
            weights: &weights,
        };
        for p in &plugins {
            let x = p.score(&s);
            assert!((0.0..=MAX_SCORE).contains(&x), "{} scored {x}", p.name());
        }
    }
}
