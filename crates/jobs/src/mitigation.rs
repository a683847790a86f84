//! Straggler mitigation on jobs (docs/jobs.md, "Mitigation"): EdgeTuner's task restart policy
//! (TRP, `Res_r`) and task discard policy (TDP, `Dis_r`). A job is *triggered* once ⌈r · n⌉ of
//! its n tasks are done (the rule `continuum_core::mitigation::job_triggered` states for the
//! streams model), once per job:
//!
//! - `restart@r` (`Res_r`): its tasks running then start again from zero work as a fresh
//!   attempt, queued to be placed again (its waiting tasks stay queued);
//! - `tdp@r` (`Dis_r`): its tasks running or waiting then are discarded and the job completes at
//!   once without them — only for a job without dependencies (EdgeTuner: discarding a DAG task
//!   would leave its children unable to run).

use crate::error::JobsError;
use continuum_core::mitigation::{grid_ratios, job_triggered};

/// A straggler mitigation.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Mitigation {
    /// Every task runs its course.
    #[default]
    None,
    /// `Res_r`: restart a triggered job's running tasks.
    Restart {
        /// r, in (0, 1]: a share of the job's tasks.
        ratio: f64,
    },
    /// `Dis_r`: a triggered job without dependencies completes, its other tasks discarded.
    Discard {
        /// r, in (0, 1]: a share of the job's tasks.
        ratio: f64,
    },
}

/// What the accepted forms are, for errors.
const EXPECTED: &str = "expected `none`, `restart@<r>` or `tdp@<r>` (or EdgeTuner's `Res_<pct>%`, `Dis_<pct>%`), r in (0, 1]";

impl Mitigation {
    /// Reads `none`, `restart@0.8`, `tdp@0.8`, or the paper's `Res_80%` and `Dis_80%`.
    pub fn parse(s: &str) -> Result<Self, JobsError> {
        let s = s.trim();
        if s == "none" {
            return Ok(Self::None);
        }
        let bad = |why: &str| JobsError::Name(format!("mitigation `{s}`: {why}; {EXPECTED}"));
        let (restart, r) = if let Some((k, r)) = s.split_once('@') {
            match k {
                "restart" => (
                    true,
                    r.trim()
                        .parse::<f64>()
                        .map_err(|_| bad("r is not a number"))?,
                ),
                "tdp" => (
                    false,
                    r.trim()
                        .parse::<f64>()
                        .map_err(|_| bad("r is not a number"))?,
                ),
                _ => return Err(bad("unknown kind")),
            }
        } else if let Some((k, pct)) = s.split_once('_') {
            let pct = pct.trim_end_matches('%');
            let r = pct
                .parse::<f64>()
                .map_err(|_| bad("the percentage is not a number"))?
                / 100.0;
            match k {
                "Res" => (true, r),
                "Dis" => (false, r),
                _ => return Err(bad("unknown kind")),
            }
        } else {
            return Err(bad("unknown form"));
        };
        if !(r > 0.0 && r <= 1.0) {
            return Err(bad("r is out of range"));
        }
        Ok(if restart {
            Self::Restart { ratio: r }
        } else {
            Self::Discard { ratio: r }
        })
    }

    /// Its name as [`Self::parse`] reads it: `none`, `restart@0.8`, `tdp@0.72`.
    pub fn name(&self) -> String {
        match *self {
            Self::None => "none".into(),
            Self::Restart { ratio } => format!("restart@{}", fmt_ratio(ratio)),
            Self::Discard { ratio } => format!("tdp@{}", fmt_ratio(ratio)),
        }
    }

    /// Its name as EdgeTuner prints it: `none`, `Res_80%`, `Dis_72%`.
    pub fn paper_name(&self) -> String {
        match *self {
            Self::None => "none".into(),
            Self::Restart { ratio } => format!("Res_{}%", fmt_ratio(ratio * 100.0)),
            Self::Discard { ratio } => format!("Dis_{}%", fmt_ratio(ratio * 100.0)),
        }
    }

    /// EdgeTuner's grid: `none`, then `Res_r` and `Dis_r` for r = 0.70, 0.72, …, 0.90.
    pub fn grid() -> Vec<Self> {
        // Rounded to the hundredth the names print (0.70 + 4 × 0.02 is 0.7799… in binary).
        let r: Vec<f64> = grid_ratios()
            .iter()
            .map(|r| (r * 100.0).round() / 100.0)
            .collect();
        std::iter::once(Self::None)
            .chain(r.iter().map(|&ratio| Self::Restart { ratio }))
            .chain(r.iter().map(|&ratio| Self::Discard { ratio }))
            .collect()
    }

    /// Whether a job with `done` of its `tasks` finished is triggered now (never for `none`;
    /// never a discard for a job with dependencies).
    pub(crate) fn triggers(&self, done: u32, tasks: u32, has_dependencies: bool) -> bool {
        match *self {
            Self::None => false,
            Self::Restart { ratio } => done < tasks && job_triggered(done, tasks, ratio),
            Self::Discard { ratio } => {
                !has_dependencies && done < tasks && job_triggered(done, tasks, ratio)
            }
        }
    }
}

/// Two decimals at most, no trailing zeros: 0.8, 0.72, 80.
fn fmt_ratio(r: f64) -> String {
    let s = format!("{r:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for m in Mitigation::grid() {
            assert_eq!(Mitigation::parse(&m.name()).unwrap(), m);
            assert_eq!(Mitigation::parse(&m.paper_name()).unwrap().name(), m.name());
        }
        assert_eq!(Mitigation::grid().len(), 23);
        assert_eq!(
            Mitigation::parse("Res_80%").unwrap(),
            Mitigation::Restart { ratio: 0.8 }
        );
        assert_eq!(Mitigation::Discard { ratio: 0.7 }.paper_name(), "Dis_70%");
        assert_eq!(Mitigation::Restart { ratio: 0.72 }.name(), "restart@0.72");
        for bad in ["restart@1.5", "tdp@x", "skip@0.5", "Res_0%", "whatever"] {
            assert!(Mitigation::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_job_triggers_at_the_ceiling_of_its_share() {
        // r = 0.7 of 10 tasks: the 7th completion triggers; of 3 tasks, ⌈2.1⌉ = 3 = all.
        let m = Mitigation::Restart { ratio: 0.7 };
        assert!(!m.triggers(6, 10, false));
        assert!(m.triggers(7, 10, false));
        assert!(!m.triggers(3, 3, false));
        let d = Mitigation::Discard { ratio: 0.7 };
        assert!(d.triggers(7, 10, false));
        assert!(!d.triggers(7, 10, true));
        assert!(!Mitigation::None.triggers(9, 10, false));
    }
}
