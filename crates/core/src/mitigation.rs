//! Tail-latency mitigation (sans-IO): what to do with a query that is running late, applied
//! alike by the simulator and the gateway. A *configuration* is a dispatch policy plus one
//! mitigation and its ratio r (EdgeTuner's scheduler configuration). Two families:
//!
//! Per query, r a share of the query's deadline (simulator and gateway):
//!
//! - `none`: a query runs its course;
//! - `reissue@r` (a hedged request, "The Tail at Scale", Dean & Barroso 2013): a query not
//!   answered by r × its deadline is sent again to the feasible binding with the lowest
//!   expected delay other than its own; the first answer wins and the other copy is cancelled
//!   if it still waits in a queue (its work, if it ran, is waste);
//! - `discard@r`: a query whose predicted answer comes later than r × its deadline is dropped
//!   at the worker — on arrival or when it would start — and answered at once as rejected, so
//!   the client learns early and the capacity goes to queries that can still make it.
//!
//! Per job, r a share of the job's tasks (EdgeTuner's Res_r and TDP_r; simulator only): a *job*
//! is the queries one stream emits in one metrics window, its *tasks* (docs/model.md §12);
//! it is *triggered* once ⌈r · n_j⌉ of its n_j tasks are done ([`job_triggered`]):
//!
//! - `restart@r`: the job's tasks still unanswered then, and its later ones, each get a copy
//!   sent to the feasible binding with the lowest expected delay other than its own (the
//!   machinery of `reissue`);
//! - `tdp@r`: the job's tasks still unanswered then are discarded and its later ones not
//!   sent; each counts as *degraded* — the job completes without them.

use crate::feasibility::{Candidate, Demand};
use crate::policy::Policy;

/// The ratios of EdgeTuner's grid: 0.70, 0.72, …, 0.90.
pub fn grid_ratios() -> Vec<f64> {
    (0..=10).map(|i| 0.70 + 0.02 * f64::from(i)).collect()
}

/// A tail-latency mitigation policy.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Mitigation {
    /// Let every query run its course.
    #[default]
    None,
    /// Hedge: send a second copy of a query unanswered by `ratio` × its deadline.
    Reissue {
        /// r, in (0, 1].
        ratio: f64,
    },
    /// Drop a queued query whose predicted answer is later than `ratio` × its deadline.
    Discard {
        /// r, in (0, 1].
        ratio: f64,
    },
    /// EdgeTuner's task restart: once `ratio` of a job's tasks are done, send a copy of each
    /// of its unanswered and later tasks to a faster binding (simulator only).
    Restart {
        /// r, in (0, 1]: a share of the job's tasks.
        ratio: f64,
    },
    /// EdgeTuner's task discard (TDP): once `ratio` of a job's tasks are done, its unanswered
    /// and later tasks are discarded and count as degraded (simulator only).
    Tdp {
        /// r, in (0, 1]: a share of the job's tasks.
        ratio: f64,
    },
}

/// The kind of a mitigation with a ratio, as `--kinds` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MitigationKind {
    /// `reissue@r`.
    Reissue,
    /// `discard@r`.
    Discard,
    /// `restart@r`.
    Restart,
    /// `tdp@r`.
    Tdp,
}

impl MitigationKind {
    /// Every kind, in the order reports list them.
    pub const ALL: [Self; 4] = [Self::Reissue, Self::Discard, Self::Restart, Self::Tdp];

    /// Its name (`reissue`, `discard`, `restart`, `tdp`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Reissue => "reissue",
            Self::Discard => "discard",
            Self::Restart => "restart",
            Self::Tdp => "tdp",
        }
    }

    /// The kind named `s`; the error lists the kinds.
    pub fn parse(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|k| k.name() == s.trim())
            .ok_or_else(|| {
                format!(
                    "unknown mitigation kind `{}`; expected one of `reissue`, `discard`, `restart`, `tdp`",
                    s.trim()
                )
            })
    }

    /// This kind at ratio `ratio`.
    pub fn with_ratio(self, ratio: f64) -> Mitigation {
        match self {
            Self::Reissue => Mitigation::Reissue { ratio },
            Self::Discard => Mitigation::Discard { ratio },
            Self::Restart => Mitigation::Restart { ratio },
            Self::Tdp => Mitigation::Tdp { ratio },
        }
    }
}

/// What the expected forms are, for error messages.
const EXPECTED: &str = "expected `none`, `reissue@<r>`, `discard@<r>`, `restart@<r>` or `tdp@<r>`";

impl Mitigation {
    /// Parses `none`, `reissue@r`, `discard@r`, `restart@r` or `tdp@r` (r in (0, 1]); the
    /// error says what was expected.
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s == "none" {
            return Ok(Self::None);
        }
        let (kind, r) = s
            .split_once('@')
            .ok_or_else(|| format!("mitigation `{s}`: {EXPECTED}"))?;
        let kind = MitigationKind::parse(kind).map_err(|e| format!("mitigation `{s}`: {e}"))?;
        let ratio: f64 = r
            .trim()
            .parse()
            .map_err(|_| format!("mitigation `{s}`: r must be a number, got `{r}`"))?;
        if !(ratio > 0.0 && ratio <= 1.0) {
            let share = match kind {
                MitigationKind::Reissue | MitigationKind::Discard => "a share of the deadline",
                MitigationKind::Restart | MitigationKind::Tdp => "a share of the job's tasks",
            };
            return Err(format!(
                "mitigation `{s}`: r must be in (0, 1] ({share}), got {ratio}"
            ));
        }
        Ok(kind.with_ratio(ratio))
    }

    /// Its name as [`Self::parse`] reads it (`reissue@0.8`).
    pub fn name(&self) -> String {
        match self.kind_ratio() {
            None => "none".into(),
            Some((k, r)) => format!("{}@{}", k.name(), fmt_ratio(r)),
        }
    }

    /// Its kind and ratio; `None` for `none`.
    pub fn kind_ratio(&self) -> Option<(MitigationKind, f64)> {
        match *self {
            Self::None => None,
            Self::Reissue { ratio } => Some((MitigationKind::Reissue, ratio)),
            Self::Discard { ratio } => Some((MitigationKind::Discard, ratio)),
            Self::Restart { ratio } => Some((MitigationKind::Restart, ratio)),
            Self::Tdp { ratio } => Some((MitigationKind::Tdp, ratio)),
        }
    }

    /// When a query emitted at `t_emit_ms` and due at `due_ms` (emission + D^i) is reissued
    /// if still unanswered: r of the way to its deadline; `None` unless this is `reissue`.
    #[inline]
    pub fn reissue_at_ms(&self, t_emit_ms: f64, due_ms: f64) -> Option<f64> {
        match self {
            Self::Reissue { ratio } => Some(t_emit_ms + ratio * (due_ms - t_emit_ms)),
            _ => None,
        }
    }

    /// The latest predicted answer time a worker accepts for a query emitted at `t_emit_ms`
    /// and due at `due_ms`: r of the way to the deadline under `discard`, the deadline itself
    /// otherwise (docs/model.md §7's default queue bound).
    #[inline]
    pub fn answer_limit_ms(&self, t_emit_ms: f64, due_ms: f64) -> f64 {
        match self {
            Self::Discard { ratio } => t_emit_ms + ratio * (due_ms - t_emit_ms),
            _ => due_ms,
        }
    }

    /// Whether late queries are reissued.
    #[inline]
    pub fn reissues(&self) -> bool {
        matches!(self, Self::Reissue { .. })
    }

    /// Whether queued queries are checked again when their batch would start.
    #[inline]
    pub fn discards(&self) -> bool {
        matches!(self, Self::Discard { .. })
    }

    /// The share of a job's tasks that triggers it, for the per-job kinds (`restart`, `tdp`).
    #[inline]
    pub fn job_ratio(&self) -> Option<f64> {
        match self {
            Self::Restart { ratio } | Self::Tdp { ratio } => Some(*ratio),
            _ => None,
        }
    }

    /// Whether only the simulator applies it: the per-job kinds, which need a stream's whole
    /// window of queries in view (a gateway forwards one query at a time).
    #[inline]
    pub fn simulator_only(&self) -> bool {
        self.job_ratio().is_some()
    }
}

/// Whether a job of `tasks` tasks, `done` of them done (answered or dropped), has reached the
/// trigger of a per-job mitigation at ratio `ratio`: done ≥ ⌈r · n⌉ (at least one task). The
/// product is rounded down by 1e-9 first, so that 0.7 × 10 (7.000000000000001 in binary) asks
/// for 7 tasks, not 8; ratios are given to two decimals, far coarser than that.
#[inline]
pub fn job_triggered(done: u32, tasks: u32, ratio: f64) -> bool {
    let need = (ratio * f64::from(tasks) - 1e-9).ceil().max(1.0);
    f64::from(done) >= need
}

/// Two decimals at most, no trailing zeros: 0.8, 0.72, 1.
fn fmt_ratio(r: f64) -> String {
    let s = format!("{r:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// What a reissued copy asks of its new binding, `remaining_ms` before the query's deadline.
/// The copy leaves from the scheduler, which already holds the query: it pays no radio uplink
/// (access delay δ_i, transmission t_i) on the way out, only the network to the new worker, then
/// processing, then the network and δ_i back. [`crate::feasibility::feasible`] checks
/// 2(δ_i + net) + t_i + D_v ≤ D^i, so the copy's demand is the stream's with t_i = 0 and
/// D^i = remaining + δ_i: then the check reads δ_i + 2·net + D_v ≤ remaining.
pub fn reissue_demand(stream: &Demand, remaining_ms: f64) -> Demand {
    Demand {
        tx_ms: 0.0,
        max_delay_ms: remaining_ms + stream.access_ms,
        ..*stream
    }
}

/// The binding a late query is reissued to: among the feasible `candidates` (docs/model.md §5, for the
/// copy's [`reissue_demand`]), the lowest expected delay e2e(v, n) (docs/model.md §6) on a worker other
/// than `own`; ties go to the lower load share, then the lower worker index. `None` when no
/// other worker is feasible.
pub fn reissue_target(candidates: &[Candidate], own: u32) -> Option<&Candidate> {
    let share = |c: &Candidate| c.load_qps / c.capacity_qps.max(f64::MIN_POSITIVE);
    candidates
        .iter()
        .filter(|c| c.worker != own)
        .min_by(|a, b| {
            a.e2e_ms
                .total_cmp(&b.e2e_ms)
                .then(share(a).total_cmp(&share(b)))
                .then(a.worker.cmp(&b.worker))
        })
}

/// A scheduler configuration: a dispatch policy and a mitigation.
#[derive(Clone, Copy)]
pub struct Configuration {
    /// The dispatch policy binding new streams.
    pub policy: &'static dyn Policy,
    /// What happens to late queries.
    pub mitigation: Mitigation,
}

impl std::fmt::Debug for Configuration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

impl PartialEq for Configuration {
    fn eq(&self, o: &Self) -> bool {
        self.policy.name() == o.policy.name() && self.mitigation == o.mitigation
    }
}

impl Configuration {
    /// `policy` with no mitigation.
    pub fn plain(policy: &'static dyn Policy) -> Self {
        Self {
            policy,
            mitigation: Mitigation::None,
        }
    }

    /// Parses `policy` or `policy+mitigation` (`least-impedance+reissue@0.8`).
    pub fn parse(s: &str) -> Result<Self, String> {
        let (p, m) = match s.trim().split_once('+') {
            Some((p, m)) => (p.trim(), Mitigation::parse(m)?),
            None => (s.trim(), Mitigation::None),
        };
        let policy = crate::policy::parse_list(p)?
            .into_iter()
            .next()
            .ok_or_else(|| format!("configuration `{s}`: expected `policy[+mitigation]`"))?;
        Ok(Self {
            policy,
            mitigation: m,
        })
    }

    /// Its name in reports: the policy alone under `none`, else `policy+mitigation`.
    pub fn name(&self) -> String {
        match self.mitigation {
            Mitigation::None => self.policy.name().to_string(),
            m => format!("{}+{}", self.policy.name(), m.name()),
        }
    }

    /// Every policy × every mitigation of `ratios` (none, then reissue and discard at each).
    pub fn grid(policies: &[&'static dyn Policy], ratios: &[f64]) -> Vec<Self> {
        Self::grid_of(
            policies,
            ratios,
            &[MitigationKind::Reissue, MitigationKind::Discard],
        )
    }

    /// Every policy × every mitigation: none, then each of `kinds` at every ratio of `ratios`
    /// (kind by kind, in the order given).
    pub fn grid_of(
        policies: &[&'static dyn Policy],
        ratios: &[f64],
        kinds: &[MitigationKind],
    ) -> Vec<Self> {
        let mut mitigations = vec![Mitigation::None];
        for k in kinds {
            mitigations.extend(ratios.iter().map(|&ratio| k.with_ratio(ratio)));
        }
        policies
            .iter()
            .flat_map(|&policy| {
                mitigations
                    .iter()
                    .map(move |&mitigation| Self { policy, mitigation })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_names_round_trip() {
        for s in [
            "none",
            "reissue@0.8",
            "discard@0.72",
            "reissue@1",
            "restart@0.8",
            "tdp@0.74",
            "tdp@1",
        ] {
            assert_eq!(Mitigation::parse(s).unwrap().name(), s);
        }
        assert_eq!(
            Mitigation::parse(" restart @ 0.80 ").unwrap(),
            Mitigation::Restart { ratio: 0.8 }
        );
        let c = Configuration::parse("closest+tdp@0.9").unwrap();
        assert_eq!(c.mitigation, Mitigation::Tdp { ratio: 0.9 });
        assert_eq!(c.name(), "closest+tdp@0.9");
        let c = Configuration::parse("least-impedance+reissue@0.80").unwrap();
        assert_eq!(c.name(), "least-impedance+reissue@0.8");
        assert_eq!(
            Configuration::parse("closest+none").unwrap().name(),
            "closest"
        );
        assert_eq!(Configuration::parse("closest").unwrap().name(), "closest");
    }

    #[test]
    fn bad_input_says_what_was_expected() {
        for (s, want) in [
            ("reissue", "expected `none`"),
            ("reissue@x", "must be a number"),
            ("discard@1.5", "in (0, 1]"),
            ("discard@0", "in (0, 1]"),
            ("restrat@0.8", "unknown mitigation kind `restrat`"),
            ("restart@0", "a share of the job's tasks"),
            ("tdp@1.01", "in (0, 1]"),
            ("tdp", "`tdp@<r>`"),
        ] {
            let e = Mitigation::parse(s).unwrap_err();
            assert!(e.contains(want), "{s}: {e}");
        }
        // Every error that names the kinds names all five forms.
        for s in ["reissue", "foo@0.5"] {
            let e = Mitigation::parse(s).unwrap_err();
            for k in ["reissue", "discard", "restart", "tdp"] {
                assert!(e.contains(k), "{s}: {e}");
            }
        }
        let e = Configuration::parse("nearest+none").unwrap_err();
        assert!(e.contains("unknown policy `nearest`"), "{e}");
    }

    #[test]
    fn times_follow_the_ratio() {
        let m = Mitigation::Reissue { ratio: 0.8 };
        assert_eq!(m.reissue_at_ms(100.0, 150.0), Some(140.0));
        assert_eq!(m.answer_limit_ms(100.0, 150.0), 150.0);
        let d = Mitigation::Discard { ratio: 0.7 };
        assert_eq!(d.reissue_at_ms(100.0, 150.0), None);
        assert_eq!(d.answer_limit_ms(100.0, 150.0), 135.0);
        assert!(d.discards() && !m.discards());
        for j in [
            Mitigation::Restart { ratio: 0.8 },
            Mitigation::Tdp { ratio: 0.8 },
        ] {
            assert_eq!(j.reissue_at_ms(100.0, 150.0), None);
            assert_eq!(j.answer_limit_ms(100.0, 150.0), 150.0);
            assert!(!j.reissues() && !j.discards() && j.simulator_only());
            assert_eq!(j.job_ratio(), Some(0.8));
        }
        assert!(!m.simulator_only() && !d.simulator_only() && !Mitigation::None.simulator_only());
        let g = grid_ratios();
        assert_eq!(g.len(), 11);
        assert!((g[10] - 0.9).abs() < 1e-12 && (g[1] - 0.72).abs() < 1e-12);
    }

    /// A job of 10 tasks at r = 0.7 is triggered by its 7th done task (0.7 × 10 is
    /// 7.000000000000001 in binary, whose ceiling would ask for 8); at r = 0.75, ⌈7.5⌉ = 8;
    /// a job of one task, by that task; r = 1, by the last task.
    #[test]
    fn a_job_triggers_at_the_ceiling_of_its_share() {
        assert!(!job_triggered(6, 10, 0.7));
        assert!(job_triggered(7, 10, 0.7));
        assert!(!job_triggered(7, 10, 0.75));
        assert!(job_triggered(8, 10, 0.75));
        assert!(!job_triggered(0, 1, 0.1));
        assert!(job_triggered(1, 1, 0.1));
        assert!(!job_triggered(9, 10, 1.0));
        assert!(job_triggered(10, 10, 1.0));
        for r in grid_ratios() {
            for n in 1..200u32 {
                let need = (1..=n).find(|&d| job_triggered(d, n, r)).unwrap();
                let exact = (r * 100.0).round() as u32 * n;
                assert_eq!(need, exact.div_ceil(100).max(1), "r {r} n {n}");
            }
        }
    }

    fn cand(worker: u32, e2e_ms: f64, load_qps: f64) -> Candidate {
        Candidate {
            worker,
            cluster: worker,
            variant: 0,
            net_ms: 0.0,
            e2e_ms,
            load_qps,
            capacity_qps: 100.0,
            demand_qps: 1.0,
            cluster_shares: [0.0; 2],
        }
    }

    #[test]
    fn target_is_the_fastest_other_worker() {
        let c = [cand(0, 5.0, 0.0), cand(1, 9.0, 50.0), cand(2, 9.0, 10.0)];
        assert_eq!(reissue_target(&c, 0).unwrap().worker, 2);
        assert_eq!(reissue_target(&c, 2).unwrap().worker, 0);
        assert!(reissue_target(&c[..1], 0).is_none());
    }

    #[test]
    fn the_copy_pays_no_radio_uplink() {
        let d = Demand {
            task: 0,
            rate_qps: 10.0,
            frame_kb: 10.0,
            tx_ms: 3.0,
            access_ms: 2.0,
            max_delay_ms: 100.0,
            min_accuracy: 0.0,
            items: 1,
        };
        let c = reissue_demand(&d, 30.0);
        // δ + 2·net + D_v ≤ 30 ⟺ 2(δ + net) + 0 + D_v ≤ 32.
        assert_eq!((c.tx_ms, c.max_delay_ms, c.rate_qps), (0.0, 32.0, 10.0));
    }

    #[test]
    fn grid_crosses_policies_and_mitigations() {
        let p = crate::policy::parse_list("closest,least-impedance").unwrap();
        let g = Configuration::grid(&p, &[0.8, 0.9]);
        assert_eq!(g.len(), 2 * 5);
        assert_eq!(g[0].name(), "closest");
        assert_eq!(g[2].name(), "closest+reissue@0.9");
        assert_eq!(g[9].name(), "least-impedance+discard@0.9");
        let all = Configuration::grid_of(&p[..1], &[0.8], &MitigationKind::ALL);
        let names: Vec<_> = all.iter().map(Configuration::name).collect();
        assert_eq!(
            names,
            [
                "closest",
                "closest+reissue@0.8",
                "closest+discard@0.8",
                "closest+restart@0.8",
                "closest+tdp@0.8"
            ]
        );
        assert_eq!(
            MitigationKind::parse("tdp").unwrap().with_ratio(0.7),
            Mitigation::Tdp { ratio: 0.7 }
        );
        assert!(
            MitigationKind::parse("none")
                .unwrap_err()
                .contains("`restart`")
        );
    }
}
