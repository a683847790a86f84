//! The [`Agent`] a checkpoint becomes: it encodes each window's observation and picks, per
//! scheduler and stream class, a configuration (a dispatch policy, and a mitigation when the
//! action set has them). With `granularity: global` every scheduler takes the action most of
//! them chose; with `granularity: system` one decision of the system's state is everyone's. A
//! class leaves its fallback action (chosen on validation episodes when training) only when the
//! network's value of the greedy action beats the fallback's by more than the checkpoint's
//! margin: the learned policy improves on the fallback where it is confident and keeps it
//! elsewhere.

use super::checkpoint::{Checkpoint, topology_fingerprint};
use super::config::StateKind;
use super::config::{Granularity, parse_actions};
use super::fallback::Fallback;
use super::fast::FastQNet;
use super::situation::SituationEncoder;
use super::state::StateEncoder;
use crate::checkpoint::CheckpointError;
use continuum_core::feasibility::Fleet;
use continuum_core::mitigation::Configuration;
use continuum_core::observe::WindowObservation;
use continuum_core::policy::StreamClasses;
use continuum_core::topology::Topology;
use std::path::Path;

/// A trained meta-policy. Its network runs in plain Rust ([`FastQNet`], equal to the training
/// network's forward within 1e-5).
pub struct Agent {
    net: FastQNet,
    encoder: Encoder,
    actions: Vec<Configuration>,
    granularity: Granularity,
    classes: StreamClasses,
    fallback: Fallback,
    margin: f64,
    /// Each scheduler's current load level of the fallback (None before its first decision).
    levels: Vec<Option<usize>>,
    q: Vec<f32>,
    state: Vec<f32>,
}

/// The state a checkpoint reads: a network per topology, or one for any (docs/model.md §9.9).
enum Encoder {
    Slots(StateEncoder),
    Situation(SituationEncoder),
}

impl Encoder {
    fn schedulers(&self) -> usize {
        match self {
            Self::Slots(e) => e.schedulers(),
            Self::Situation(e) => e.schedulers(),
        }
    }

    fn incoming_qps(&self, s: usize) -> f64 {
        match self {
            Self::Slots(e) => e.incoming_qps(s),
            Self::Situation(e) => e.incoming_qps(s),
        }
    }

    /// (features, history) of one state.
    fn shape(&self) -> (usize, usize) {
        match self {
            Self::Slots(e) => (e.features(), e.history()),
            Self::Situation(e) => (e.features(), 1),
        }
    }
}

impl Agent {
    /// Builds the agent of `ck` for `topology`; fails if the checkpoint was trained for a
    /// topology with other workers (a `situation` checkpoint fits every topology) or for
    /// policies this build does not know.
    pub fn new(
        ck: &Checkpoint,
        path: &Path,
        topology: &Topology,
        fleet: &Fleet,
        variant_names: &[String],
    ) -> Result<Self, CheckpointError> {
        let m = &ck.meta;
        let bad = |msg: String| CheckpointError::Incompatible {
            path: path.display().to_string(),
            message: msg,
        };
        let situation = m.config.state == StateKind::Situation;
        let fp = topology_fingerprint(topology, variant_names);
        if !situation && fp != m.fingerprint {
            return Err(bad(format!(
                "it was trained on topology `{}` (fingerprint {}), but `{}` has other workers (fingerprint {fp})",
                m.topology, m.fingerprint, topology.name
            )));
        }
        let actions = parse_actions(&m.actions)
            .map_err(|e| bad(format!("its action list does not parse: {e}")))?;
        let encoder = if situation {
            if m.shape.classes != 1 || !m.classes.is_per_bucket() {
                return Err(bad(
                    "a `situation` checkpoint needs one head and one class per demand bucket"
                        .into(),
                ));
            }
            Encoder::Situation(SituationEncoder::new(topology, fleet, &m.config))
        } else {
            Encoder::Slots(StateEncoder::new(topology, fleet, &m.config))
        };
        let (features, history) = encoder.shape();
        if features != m.shape.features || history != m.shape.history {
            return Err(bad(format!(
                "state is {features}×{history} for this topology, but the network expects {}×{}",
                m.shape.features, m.shape.history
            )));
        }
        let heads = m.shape.classes * m.shape.actions;
        if let Some(out) = ck.weights.get("out.weight")
            && out.dims.first() != Some(&heads)
        {
            return Err(bad(format!(
                "its header lists {} classes × {} actions ({heads} outputs), but its network has {:?} outputs",
                m.shape.classes,
                m.shape.actions,
                out.dims.first()
            )));
        }
        let net = FastQNet::read(m.shape, &ck.weights).map_err(bad)?;
        Ok(Self {
            net,
            encoder,
            actions,
            granularity: m.config.granularity,
            classes: m.classes.clone(),
            fallback: m.fallback.clone(),
            margin: m.margin,
            levels: vec![None; topology.schedulers.len()],
            q: Vec::new(),
            state: Vec::new(),
        })
    }

    /// The configurations the agent chooses among.
    pub fn actions(&self) -> &[Configuration] {
        &self.actions
    }

    /// How streams are grouped into the agent's classes.
    pub fn classes(&self) -> &StreamClasses {
        &self.classes
    }

    /// The fallback tables.
    pub fn fallback(&self) -> &Fallback {
        &self.fallback
    }

    /// The margin a class's greedy action must beat its fallback by.
    pub fn margin(&self) -> f64 {
        self.margin
    }

    /// Replaces the margin at every level (validation tries several on one network).
    pub fn set_margin(&mut self, margin: f64) {
        self.margin = margin;
        self.fallback.margins.clear();
    }

    /// Replaces the per-level margins (`None`: infinite at that level).
    pub fn set_level_margins(&mut self, margins: Vec<Option<f64>>) {
        self.fallback.margins = margins;
    }

    /// Adds a window's observation to the state history.
    pub fn observe(&mut self, obs: &WindowObservation) {
        match &mut self.encoder {
            Encoder::Slots(e) => e.push(obs),
            Encoder::Situation(e) => e.push(obs),
        }
    }

    /// Values of every scheduler's current state, `[scheduler][class][action]`.
    pub fn q_values(&mut self) -> Vec<Vec<Vec<f32>>> {
        let n = self.encoder.schedulers();
        let actions = self.net.shape().actions;
        let mut out = Vec::with_capacity(n);
        for s in 0..n {
            match &self.encoder {
                Encoder::Slots(e) => {
                    e.state_into(s, &mut self.state);
                    self.net.forward(&self.state, &mut self.q);
                    out.push(self.q.chunks_exact(actions).map(<[f32]>::to_vec).collect());
                }
                Encoder::Situation(e) => {
                    let mut per_class = Vec::with_capacity(e.buckets());
                    for b in 0..e.buckets() {
                        e.state_into(s, b, &mut self.state);
                        self.net.forward(&self.state, &mut self.q);
                        per_class.push(self.q.clone());
                    }
                    out.push(per_class);
                }
            }
        }
        out
    }

    /// Under `state: situation`: per scheduler and bucket, the table's action unless the
    /// network's greedy one beats it by more than the margin; a bucket that brought no query
    /// in the last window keeps the table's (its state says nothing), and the network is
    /// evaluated for the others only.
    fn situation_choice(&mut self, tables: &[Vec<usize>], margins: &[f64]) -> Vec<Vec<usize>> {
        let Encoder::Situation(e) = &self.encoder else {
            unreachable!("called for situation checkpoints only")
        };
        let mut out = Vec::with_capacity(tables.len());
        for (s, table) in tables.iter().enumerate() {
            let mut row = table.clone();
            if margins[s].is_finite() {
                for (b, a) in row.iter_mut().enumerate() {
                    if e.incoming(s, b) > 0.0 {
                        e.state_into(s, b, &mut self.state);
                        self.net.forward(&self.state, &mut self.q);
                        *a = conservative_choice(&self.q, *a, margins[s]);
                    }
                }
            }
            out.push(row);
        }
        out
    }

    /// The action of every scheduler and class, `[scheduler][class]`: the greedy one where it
    /// beats the fallback (the table of the scheduler's load level, which changes only past
    /// the hysteresis, [`Fallback::level`]) by more than the margin (the level's own where the
    /// fallback has per-level margins, [`Fallback::margin`]),
    /// else the fallback; under `granularity: global`, then the action most schedulers chose,
    /// for all. With an infinite margin the network is not even evaluated.
    pub fn decide(&mut self) -> Vec<Vec<usize>> {
        let n = self.encoder.schedulers();
        if self.granularity == Granularity::System {
            return vec![self.system_choice(); n];
        }
        let mut margins = Vec::with_capacity(n);
        let tables: Vec<Vec<usize>> = (0..n)
            .map(|s| {
                let level = self
                    .fallback
                    .level(self.encoder.incoming_qps(s), self.levels[s]);
                self.levels[s] = Some(level);
                margins.push(self.fallback.margin(level, self.margin));
                self.fallback.tables[level].clone()
            })
            .collect();
        let own = if matches!(self.encoder, Encoder::Situation(_)) {
            self.situation_choice(&tables, &margins)
        } else if margins.iter().all(|m| m.is_infinite()) {
            tables
        } else {
            let q = self.q_values();
            q.iter()
                .zip(&tables)
                .zip(&margins)
                .map(|((per_class, table), &margin)| {
                    per_class
                        .iter()
                        .zip(table)
                        .map(|(q, &fb)| conservative_choice(q, fb, margin))
                        .collect()
                })
                .collect()
        };
        match self.granularity {
            Granularity::PerScheduler => own,
            Granularity::Global => vec![majority(&own, self.actions.len()); n],
            Granularity::System => unreachable!("decided above"),
        }
    }

    /// Under `granularity: system`: the greedy action per class of the system's state (the
    /// network alone: such a checkpoint has no fallback tables).
    fn system_choice(&mut self) -> Vec<usize> {
        let mut scratch = Vec::new();
        let Encoder::Slots(e) = &self.encoder else {
            unreachable!("a situation checkpoint decides per scheduler")
        };
        e.system_state_into(&mut self.state, &mut scratch);
        self.net.forward(&self.state, &mut self.q);
        self.q
            .chunks_exact(self.net.shape().actions)
            .map(argmax)
            .collect()
    }
}

/// Per class, the action most rows chose (ties to the lower index); `rows` is
/// `[scheduler][class]`.
pub fn majority(rows: &[Vec<usize>], actions: usize) -> Vec<usize> {
    let classes = rows.first().map_or(0, Vec::len);
    (0..classes)
        .map(|c| {
            let mut votes = vec![0usize; actions];
            rows.iter().for_each(|r| votes[r[c]] += 1);
            (0..actions).fold(0, |b, a| if votes[a] > votes[b] { a } else { b })
        })
        .collect()
}

/// The greedy action of `q` if its value exceeds the fallback's by more than `margin`, else
/// `fallback`.
pub fn conservative_choice(q: &[f32], fallback: usize, margin: f64) -> usize {
    let best = argmax(q);
    if f64::from(q[best] - q[fallback]) > margin {
        best
    } else {
        fallback
    }
}

/// Index of the greatest value (the first on ties).
pub fn argmax(q: &[f32]) -> usize {
    let mut best = 0;
    for (i, x) in q.iter().enumerate() {
        if *x > q[best] {
            best = i;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deviates_only_beyond_the_margin() {
        let q = [0.1f32, 0.5, 0.3];
        assert_eq!(conservative_choice(&q, 2, 0.1), 1);
        assert_eq!(conservative_choice(&q, 2, 0.25), 2);
        assert_eq!(conservative_choice(&q, 1, 0.0), 1);
        assert_eq!(conservative_choice(&q, 0, f64::INFINITY), 0);
    }

    #[test]
    fn the_majority_decides_per_class_and_ties_go_low() {
        let rows = vec![vec![2, 0], vec![1, 0], vec![2, 1], vec![1, 1]];
        assert_eq!(majority(&rows, 3), vec![1, 0]);
        assert_eq!(majority(&rows[..3], 3), vec![2, 0]);
        assert!(majority(&[], 3).is_empty());
    }
}
