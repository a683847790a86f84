//! Tail-latency mitigation (sans-IO): what to do with a query that is running late, applied
//! alike by the simulator and the gateway. A *configuration* is a dispatch policy plus one
//! mitigation and its ratio r (EdgeTuner's scheduler configuration):
//!
//! - `none`: a query runs its course;
//! - `reissue@r` (EdgeTuner's task restart, a hedged request in "The Tail at Scale", Dean &
//!   Barroso 2013): a query not answered by r × its deadline is sent again to the feasible
//!   binding with the lowest expected delay other than its own; the first answer wins and the
//!   other copy is cancelled if it still waits in a queue (its work, if it ran, is waste);
//! - `discard@r` (EdgeTuner's task discard): a query whose predicted answer comes later than
//!   r × its deadline is dropped at the worker — on arrival or when it would start — and
//!   answered at once as rejected, so the client learns early and the capacity goes to queries
//!   that can still make it.

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
}

impl Mitigation {
    /// Parses `none`, `reissue@r` or `discard@r` (r in (0, 1]); the error says what was
    /// expected.
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s == "none" {
            return Ok(Self::None);
        }
        let (kind, r) = s.split_once('@').ok_or_else(|| {
            format!("mitigation `{s}`: expected `none`, `reissue@<r>` or `discard@<r>`")
        })?;
        let ratio: f64 = r
            .trim()
            .parse()
            .map_err(|_| format!("mitigation `{s}`: r must be a number, got `{r}`"))?;
        if !(ratio > 0.0 && ratio <= 1.0) {
            return Err(format!(
                "mitigation `{s}`: r must be in (0, 1] (a share of the deadline), got {ratio}"
            ));
        }
        match kind.trim() {
            "reissue" => Ok(Self::Reissue { ratio }),
            "discard" => Ok(Self::Discard { ratio }),
            k => Err(format!(
                "mitigation `{s}`: unknown kind `{k}`; expected `none`, `reissue` or `discard`"
            )),
        }
    }

    /// Its name as [`Self::parse`] reads it (`reissue@0.8`).
    pub fn name(&self) -> String {
        match self {
            Self::None => "none".into(),
            Self::Reissue { ratio } => format!("reissue@{}", fmt_ratio(*ratio)),
            Self::Discard { ratio } => format!("discard@{}", fmt_ratio(*ratio)),
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
        let mut mitigations = vec![Mitigation::None];
        mitigations.extend(ratios.iter().map(|&ratio| Mitigation::Reissue { ratio }));
        mitigations.extend(ratios.iter().map(|&ratio| Mitigation::Discard { ratio }));
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
        for s in ["none", "reissue@0.8", "discard@0.72", "reissue@1"] {
            assert_eq!(Mitigation::parse(s).unwrap().name(), s);
        }
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
            ("restart@0.8", "unknown kind `restart`"),
        ] {
            let e = Mitigation::parse(s).unwrap_err();
            assert!(e.contains(want), "{s}: {e}");
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
        let g = grid_ratios();
        assert_eq!(g.len(), 11);
        assert!((g[10] - 0.9).abs() < 1e-12 && (g[1] - 0.72).abs() < 1e-12);
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
            size_kb: 10.0,
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
    }
}
