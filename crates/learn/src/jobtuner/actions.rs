//! The tuner's actions: EdgeTuner's 2-tuple (a¹, a²), one scheduling algorithm and one
//! mitigation ("Action"), every pair of a scheduler's algorithms and the mitigations asked for.

use anyhow::{Result, bail};
use continuum_jobs::placement::{KUBERNETES, VOLCANO};
use continuum_jobs::{Mitigation, Placement};

/// Which scheduler's algorithms the tuner chooses among.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheduler {
    /// kube-scheduler's scoring plugins (the paper's DAG batch workloads).
    Kubernetes,
    /// Volcano's job-level configurations (the paper's AI workloads).
    Volcano,
}

impl Scheduler {
    /// Reads `kubernetes` or `volcano`.
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "kubernetes" | "k8s" => Ok(Self::Kubernetes),
            "volcano" => Ok(Self::Volcano),
            _ => bail!("scheduler `{s}`: expected `kubernetes` or `volcano`"),
        }
    }

    /// The configuration names it offers.
    pub fn algorithms(self) -> &'static [&'static str] {
        match self {
            Self::Kubernetes => &KUBERNETES,
            Self::Volcano => &VOLCANO,
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Kubernetes => "kubernetes",
            Self::Volcano => "volcano",
        }
    }
}

/// Every (algorithm, mitigation) pair, algorithm-major.
#[derive(Debug, Clone)]
pub struct ActionSet {
    placements: Vec<Placement>,
    mitigations: Vec<Mitigation>,
}

impl ActionSet {
    /// The pairs of `algorithms` × `mitigations` (neither empty).
    pub fn new(algorithms: &[&str], mitigations: &[Mitigation]) -> Result<Self> {
        if algorithms.is_empty() || mitigations.is_empty() {
            bail!("the tuner needs at least one algorithm and one mitigation");
        }
        let placements = algorithms
            .iter()
            .map(|a| Placement::by_name(a))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            placements,
            mitigations: mitigations.to_vec(),
        })
    }

    /// Actions in all.
    pub fn len(&self) -> usize {
        self.placements.len() * self.mitigations.len()
    }

    /// Whether there are none (never, once built).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Action `a`'s placement and mitigation.
    pub fn get(&self, a: usize) -> (&Placement, Mitigation) {
        let m = self.mitigations.len();
        (&self.placements[a / m], self.mitigations[a % m])
    }

    /// Action `a`'s name, `PLACEMENT+MITIGATION`.
    pub fn name(&self, a: usize) -> String {
        let (p, m) = self.get(a);
        format!("{}+{}", p.name(), m.name())
    }

    /// The algorithms.
    pub fn placements(&self) -> &[Placement] {
        &self.placements
    }

    /// The mitigations.
    pub fn mitigations(&self) -> &[Mitigation] {
        &self.mitigations
    }

    /// The actions whose mitigation is `m` (a scenario of the paper's tables fixes it).
    pub fn with_mitigation(&self, m: Mitigation) -> Vec<usize> {
        (0..self.len()).filter(|&a| self.get(a).1 == m).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_pair_every_algorithm_with_every_mitigation() {
        let ms = [
            Mitigation::None,
            Mitigation::parse("Res_80%").unwrap(),
            Mitigation::parse("Res_70%").unwrap(),
        ];
        let set = ActionSet::new(Scheduler::Kubernetes.algorithms(), &ms).unwrap();
        assert_eq!(set.len(), 18);
        assert_eq!(set.name(0), "LRP+none");
        assert_eq!(set.get(4).0.name(), "MRP");
        assert_eq!(set.get(4).1, ms[1]);
        let res80 = set.with_mitigation(ms[1]);
        assert_eq!(res80.len(), 6);
        assert!(res80.iter().all(|&a| set.get(a).1 == ms[1]));
        assert!(ActionSet::new(&["NOPE"], &ms).is_err());
        assert!(ActionSet::new(&["LRP"], &[]).is_err());
    }
}
