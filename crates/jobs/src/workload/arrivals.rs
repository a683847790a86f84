//! Job arrival times: a Poisson process whose rate is constant, or piecewise constant over the
//! day (EdgeTuner's Daytime and Night levels), drawn exactly by inverting the integrated rate.

use super::Arrivals;
use rand::Rng;
use rand_distr::{Distribution, Exp1};

const HOUR_S: f64 = 3600.0;

/// Hours from `h` forward to the next time the clock reads `x` (24 when it reads `x` now).
fn hours_until(h: f64, x: f64) -> f64 {
    let d = (x - h).rem_euclid(24.0);
    if d <= 1e-12 { 24.0 } else { d }
}

/// Whether hour-of-day `h` is in the night `[from, to)` (wrapping past midnight).
fn is_night(h: f64, from: f64, to: f64) -> bool {
    if from < to {
        h >= from && h < to
    } else {
        h >= from || h < to
    }
}

/// The arrival rate at run time `t_s`, jobs per second, and the run time at which it next
/// changes (infinite for a constant rate).
pub(crate) fn rate_at(a: &Arrivals, t_s: f64) -> (f64, f64) {
    match *a {
        Arrivals::Constant { per_min } => (per_min / 60.0, f64::INFINITY),
        Arrivals::Diurnal {
            day_per_min,
            night_per_min,
            night_from_h,
            night_to_h,
            start_h,
        } => {
            let h = (start_h + t_s / HOUR_S).rem_euclid(24.0);
            let night = is_night(h, night_from_h, night_to_h);
            let rate = if night { night_per_min } else { day_per_min };
            let next = hours_until(h, night_from_h).min(hours_until(h, night_to_h));
            (rate / 60.0, t_s + next * HOUR_S)
        }
    }
}

/// Jobs per minute averaged over a day.
pub(crate) fn mean_per_min(a: &Arrivals) -> f64 {
    match *a {
        Arrivals::Constant { per_min } => per_min,
        Arrivals::Diurnal {
            day_per_min,
            night_per_min,
            night_from_h,
            night_to_h,
            ..
        } => {
            let night = (night_to_h - night_from_h).rem_euclid(24.0) / 24.0;
            night * night_per_min + (1.0 - night) * day_per_min
        }
    }
}

/// Arrival times in `[0, duration_s)`, increasing. Each gap is one unit-exponential draw spent
/// against the integrated rate, so a piecewise-constant rate is followed exactly.
pub(crate) fn times<R: Rng + ?Sized>(a: &Arrivals, duration_s: f64, rng: &mut R) -> Vec<f64> {
    let mut out = Vec::new();
    let mut t = 0.0;
    'draws: loop {
        let mut e: f64 = Exp1.sample(rng);
        loop {
            if t >= duration_s {
                break 'draws;
            }
            let (rate, change) = rate_at(a, t);
            if rate > 0.0 && t + e / rate < change {
                t += e / rate;
                if t < duration_s {
                    out.push(t);
                }
                continue 'draws;
            }
            if !change.is_finite() {
                break 'draws;
            }
            e -= rate * (change - t);
            t = change;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use continuum_core::rng::{Purpose, stream_rng};

    fn diurnal(day: f64, night: f64) -> Arrivals {
        Arrivals::Diurnal {
            day_per_min: day,
            night_per_min: night,
            night_from_h: 0.0,
            night_to_h: 6.0,
            start_h: 22.0,
        }
    }

    #[test]
    fn the_rate_switches_at_the_night_bounds() {
        let a = diurnal(1.0, 4.0);
        // 22:00: day, until midnight (2 h later).
        assert_eq!(rate_at(&a, 0.0), (1.0 / 60.0, 2.0 * HOUR_S));
        // 01:00: night, until 06:00.
        assert_eq!(rate_at(&a, 3.0 * HOUR_S), (4.0 / 60.0, 8.0 * HOUR_S));
        // Wrapping night 22:00–02:00 seen at 23:00.
        let w = Arrivals::Diurnal {
            day_per_min: 1.0,
            night_per_min: 2.0,
            night_from_h: 22.0,
            night_to_h: 2.0,
            start_h: 23.0,
        };
        assert_eq!(rate_at(&w, 0.0), (2.0 / 60.0, 3.0 * HOUR_S));
        assert!((mean_per_min(&a) - (0.25 * 4.0 + 0.75 * 1.0)).abs() < 1e-12);
    }

    #[test]
    fn counts_follow_each_level() {
        // 4 h of day then 6 h of night from 22:00 at 1 and 4 jobs/min: about 240 then 1440.
        let a = diurnal(1.0, 4.0);
        let mut rng = stream_rng(3, Purpose::Other, 0, 0);
        let t = times(&a, 10.0 * HOUR_S, &mut rng);
        assert!(t.windows(2).all(|w| w[0] < w[1]));
        let day = t.iter().filter(|x| **x < 2.0 * HOUR_S).count() as f64;
        let night = t
            .iter()
            .filter(|x| **x >= 2.0 * HOUR_S && **x < 8.0 * HOUR_S)
            .count() as f64;
        assert!((day - 120.0).abs() < 4.0 * 120f64.sqrt(), "{day}");
        assert!((night - 1440.0).abs() < 4.0 * 1440f64.sqrt(), "{night}");
        // A zero night rate leaves the night empty.
        let quiet = diurnal(2.0, 0.0);
        let t = times(&quiet, 10.0 * HOUR_S, &mut rng);
        assert!(t.iter().all(|x| !(2.0 * HOUR_S..8.0 * HOUR_S).contains(x)));
        assert!(!t.is_empty());
    }
}
