//! The gateway's active dispatch policy per stream class, and where each came from: the
//! configuration (a policy, or a per-class table), the meta-policy's choice for the window, or
//! an operator's pin; and, when the meta-policy's actions are configurations with
//! mitigations, the mitigation it chose for each class. Streams are classed with the core's
//! rule ([`StreamClasses`]): the application a client names, else its docs/model.md §9 demand bucket.

use arc_swap::ArcSwap;
use continuum_core::mitigation::{Configuration, Mitigation};
use continuum_core::policy::{self, Policy, PolicyTable, StreamClasses};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Where a class's active policy came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum PolicySource {
    /// The configured static policy or table.
    Static = 0,
    /// Chosen by the meta-policy this window.
    Agent = 1,
    /// Pinned by an operator (`PUT /v1/policy`).
    Pinned = 2,
}

impl PolicySource {
    /// Lower-case name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Static => "static",
            Self::Agent => "agent",
            Self::Pinned => "pinned",
        }
    }

    fn from_u8(x: u8) -> Self {
        match x {
            1 => Self::Agent,
            2 => Self::Pinned,
            _ => Self::Static,
        }
    }
}

/// One class's active policy (an index into the registry) and its source.
struct Slot {
    policy: AtomicUsize,
    source: AtomicU8,
    configured: usize,
    /// The meta-policy's mitigation for the class (`None`: it does not choose one).
    agent_mitigation: Mutex<Option<Mitigation>>,
}

struct Inner {
    /// Whether the meta-policy chooses mitigations (else no slot has one: queries skip the
    /// per-class lookup).
    agent_mitigates: AtomicBool,
    classes: StreamClasses,
    labels: Vec<Arc<str>>,
    slots: Vec<Slot>,
}

/// The active policy of every class.
pub(crate) struct ActivePolicies {
    inner: ArcSwap<Inner>,
}

/// The class a stream falls in and that class's active policy.
#[derive(Clone)]
pub(crate) struct StreamPolicy {
    /// Class index.
    #[cfg(test)]
    pub(crate) class: usize,
    /// Class name.
    pub(crate) name: Arc<str>,
    /// The class's active policy.
    pub(crate) policy: &'static dyn Policy,
}

/// One class's state, for the admin API and metrics.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ClassPolicy {
    /// Class name.
    pub(crate) class: String,
    /// Active policy.
    pub(crate) policy: &'static str,
    /// Where it came from.
    pub(crate) source: PolicySource,
}

fn registry_index(p: &dyn Policy) -> usize {
    policy::every()
        .iter()
        .position(|q| q.name() == p.name())
        .expect("a nameable policy")
}

fn inner_of(table: &PolicyTable) -> Inner {
    Inner {
        agent_mitigates: AtomicBool::new(false),
        classes: table.classes.clone(),
        labels: table
            .classes
            .names()
            .iter()
            .map(|n| Arc::from(n.as_str()))
            .collect(),
        slots: table
            .policies
            .iter()
            .map(|p| {
                let i = registry_index(*p);
                Slot {
                    policy: AtomicUsize::new(i),
                    source: AtomicU8::new(PolicySource::Static as u8),
                    configured: i,
                    agent_mitigation: Mutex::new(None),
                }
            })
            .collect(),
    }
}

impl ActivePolicies {
    /// Every class starts with its configured policy in `table`.
    pub(crate) fn new(table: &PolicyTable) -> Self {
        Self {
            inner: ArcSwap::from_pointee(inner_of(table)),
        }
    }

    /// Replaces the classes and configured policies (a reload); pins are dropped.
    pub(crate) fn reset(&self, table: &PolicyTable) {
        self.inner.store(Arc::new(inner_of(table)));
    }

    fn get(&self) -> Arc<Inner> {
        self.inner.load_full()
    }

    /// The class of a stream of application `app` (if it names one) with deadline
    /// `max_delay_ms` and rate `rate_qps`, and that class's active policy.
    pub(crate) fn for_stream(
        &self,
        app: Option<&str>,
        max_delay_ms: f64,
        rate_qps: f64,
    ) -> StreamPolicy {
        let inner = self.get();
        let c = inner.classes.class_of(app, max_delay_ms, rate_qps);
        StreamPolicy {
            #[cfg(test)]
            class: c,
            name: inner.labels[c].clone(),
            policy: policy::every()[inner.slots[c].policy.load(Ordering::Acquire)],
        }
    }

    /// Sets class `class`'s policy from `source`, unless the class is pinned and `source` is
    /// not an operator's; whether it changed. Out-of-range classes are ignored.
    pub(crate) fn set(&self, class: usize, p: &'static dyn Policy, source: PolicySource) -> bool {
        let inner = self.get();
        let Some(slot) = inner.slots.get(class) else {
            return false;
        };
        let pinned =
            PolicySource::from_u8(slot.source.load(Ordering::Acquire)) == PolicySource::Pinned;
        if pinned && source != PolicySource::Pinned {
            return false;
        }
        let i = registry_index(p);
        let changed = slot.policy.swap(i, Ordering::AcqRel) != i;
        slot.source.store(source as u8, Ordering::Release);
        changed
    }

    /// Applies a meta-policy decision: class `c` gets the policy of `actions[row[c]]` from the
    /// agent, unless pinned, and its mitigation when any action has one; the classes whose
    /// policy changed. A row that does not fit the classes or the actions changes nothing and
    /// says why.
    pub(crate) fn apply_decision(
        &self,
        actions: &[Configuration],
        row: &[usize],
    ) -> Result<Vec<usize>, String> {
        let inner = self.get();
        let n = inner.slots.len();
        if row.len() != n {
            return Err(format!(
                "the decision has {} classes, the gateway {n}",
                row.len()
            ));
        }
        if let Some(a) = row.iter().find(|a| **a >= actions.len()) {
            return Err(format!(
                "action {a} is out of range: the agent has {} actions",
                actions.len()
            ));
        }
        let mitigates = actions.iter().any(|a| a.mitigation != Mitigation::None);
        for (slot, &a) in inner.slots.iter().zip(row) {
            *slot.agent_mitigation.lock().expect("mitigation lock") =
                mitigates.then_some(actions[a].mitigation);
        }
        inner.agent_mitigates.store(mitigates, Ordering::Release);
        Ok(row
            .iter()
            .enumerate()
            .filter(|(c, a)| self.set(*c, actions[**a].policy, PolicySource::Agent))
            .map(|(c, _)| c)
            .collect())
    }

    /// The mitigation the meta-policy chose for the class named `class`, if it chooses one.
    pub(crate) fn agent_mitigation(&self, class: &str) -> Option<Mitigation> {
        let inner = self.inner.load();
        if !inner.agent_mitigates.load(Ordering::Acquire) {
            return None;
        }
        let c = inner.classes.by_name(class)?;
        *inner.slots[c]
            .agent_mitigation
            .lock()
            .expect("mitigation lock")
    }

    /// Pins `p` for class `class`, or for every class when `None`.
    pub(crate) fn pin(&self, class: Option<usize>, p: &'static dyn Policy) {
        let n = self.get().slots.len();
        for c in (0..n).filter(|c| class.is_none_or(|k| k == *c)) {
            self.set(c, p, PolicySource::Pinned);
        }
    }

    /// Removes the pins of `class` (every class when `None`): the configured policy applies
    /// until the agent's next choice.
    pub(crate) fn unpin(&self, class: Option<usize>) {
        let inner = self.get();
        for (c, slot) in inner.slots.iter().enumerate() {
            if class.is_none_or(|k| k == c)
                && PolicySource::from_u8(slot.source.load(Ordering::Acquire))
                    == PolicySource::Pinned
            {
                slot.policy.store(slot.configured, Ordering::Release);
                slot.source
                    .store(PolicySource::Static as u8, Ordering::Release);
            }
        }
    }

    /// The index of the class named `name`.
    pub(crate) fn class_index(&self, name: &str) -> Option<usize> {
        self.get().classes.by_name(name)
    }

    /// The class names, in class order.
    pub(crate) fn class_names(&self) -> Vec<String> {
        self.get().classes.names().to_vec()
    }

    /// Every class's state, in class order.
    pub(crate) fn list(&self) -> Vec<ClassPolicy> {
        let inner = self.get();
        inner
            .classes
            .names()
            .iter()
            .zip(&inner.slots)
            .map(|(name, slot)| ClassPolicy {
                class: name.clone(),
                policy: policy::every()[slot.policy.load(Ordering::Acquire)].name(),
                source: PolicySource::from_u8(slot.source.load(Ordering::Acquire)),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use continuum_core::observe::DemandBuckets;
    use continuum_core::policy::by_name;

    fn two_classes() -> PolicyTable {
        PolicyTable {
            classes: StreamClasses::new(
                vec!["ar".into(), "cam".into()],
                DemandBuckets::default(),
                // Deadlines ≤ 100 ms are `ar`, the rest `cam`.
                [[0u16; 3], [1; 3], [1; 3], [1; 3]].concat(),
            )
            .unwrap(),
            policies: vec![by_name("closest").unwrap(), by_name("farthest").unwrap()],
            default: None,
        }
    }

    #[test]
    fn classes_by_name_then_bucket_and_pins_win() {
        let a = ActivePolicies::new(&two_classes());
        let of = |app, d, r| {
            let s = a.for_stream(app, d, r);
            (s.class, s.name.to_string(), s.policy.name())
        };
        assert_eq!(
            of(Some("cam"), 50.0, 30.0),
            (1, "cam".to_string(), "farthest")
        );
        assert_eq!(of(None, 50.0, 30.0), (0, "ar".to_string(), "closest"));
        assert_eq!(
            of(Some("other"), 800.0, 5.0),
            (1, "cam".to_string(), "farthest")
        );
        // The agent sets one class; an operator pins every class; the agent cannot override.
        assert!(a.set(0, by_name("least-impedance").unwrap(), PolicySource::Agent));
        a.pin(None, by_name("random").unwrap());
        assert!(!a.set(0, by_name("closest").unwrap(), PolicySource::Agent));
        assert!(a.list().iter().all(|c| c.policy == "random"));
        // Unpinning one class brings its configured policy back.
        a.unpin(Some(1));
        let l = a.list();
        assert_eq!((l[0].policy, l[0].source), ("random", PolicySource::Pinned));
        assert_eq!(
            (l[1].policy, l[1].source),
            ("farthest", PolicySource::Static)
        );
        assert_eq!(a.class_index("cam"), Some(1));
    }

    #[test]
    fn decisions_apply_per_class_except_pinned() {
        let a = ActivePolicies::new(&two_classes());
        let acts = [
            Configuration::plain(by_name("least-impedance").unwrap()),
            Configuration::plain(by_name("farthest").unwrap()),
        ];
        // Class 0 goes to least-impedance; class 1 already has farthest.
        assert_eq!(a.apply_decision(&acts, &[0, 1]), Ok(vec![0]));
        // Plain policies choose no mitigation.
        assert_eq!(a.agent_mitigation("ar"), None);
        let l = a.list();
        assert_eq!(
            (l[0].policy, l[0].source),
            ("least-impedance", PolicySource::Agent)
        );
        assert_eq!(
            (l[1].policy, l[1].source),
            ("farthest", PolicySource::Agent)
        );
        a.pin(Some(1), by_name("closest").unwrap());
        assert_eq!(a.apply_decision(&acts, &[1, 0]), Ok(vec![0]));
        let names: Vec<_> = a.list().iter().map(|c| c.policy).collect();
        assert_eq!(names, ["farthest", "closest"]);
        // Rows that do not fit change nothing.
        assert!(
            a.apply_decision(&acts, &[0])
                .unwrap_err()
                .contains("1 classes")
        );
        assert!(
            a.apply_decision(&acts, &[0, 2])
                .unwrap_err()
                .contains("out of range")
        );
        assert_eq!(a.list()[0].policy, "farthest");
        // Configurations with mitigations set each class's (even a pinned policy's class).
        let confs = [
            Configuration::parse("closest+reissue@0.8").unwrap(),
            Configuration::parse("farthest").unwrap(),
        ];
        assert!(a.apply_decision(&confs, &[1, 0]).is_ok());
        assert_eq!(a.agent_mitigation("ar"), Some(Mitigation::None));
        assert_eq!(
            a.agent_mitigation("cam"),
            Some(Mitigation::Reissue { ratio: 0.8 })
        );
        assert_eq!(a.agent_mitigation("nope"), None);
        // A reset brings the configured table back and drops the pins.
        a.reset(&two_classes());
        assert_eq!(a.agent_mitigation("cam"), None);
        let l = a.list();
        assert_eq!(
            (l[1].policy, l[1].source),
            ("farthest", PolicySource::Static)
        );
    }
}
