//! The best static per-class table for a set of episodes, by an [`Objective`] (the success
//! ratio by default): every action (a configuration) alone, then the best action of each
//! class, then coordinate ascent (one class at a time, every policy for it, the
//! others fixed; a change is kept only if the whole table scores better; sweeps repeat until
//! none changes, at most three). It starts from the
//! better of the best single policy and the per-class best, so the table it returns never
//! scores below the best single policy on the episodes it was chosen on. With `every_episode`,
//! a table replaces the current one only if it also scores at least as well on each episode
//! (not only in total): a change that wins on one seed by more than it loses on another is
//! noise as likely as gain.
//!
//! It gives `compare` its per-class baseline (`continuum table`, chosen on training seeds, never
//! the evaluation seed) and the trained agent its fallback.

use crate::episode::EpisodeSpec;
use continuum_core::metrics::{Counts, LogHistogram, Objective};
use continuum_core::mitigation::Configuration;
use continuum_core::policy::{PolicyTable, StreamClasses};
use continuum_sim::{QueueBound, Scenario, SimConfig, Simulation};
use rayon::prelude::*;
use std::sync::Arc;

/// Most sweeps of coordinate ascent over the classes.
const MAX_SWEEPS: usize = 3;

/// What the search found.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchResult {
    /// Index of the best single action and its score over the episodes.
    pub best_single: (usize, f64),
    /// The best table found (action index per class) and its score.
    pub table: (Vec<usize>, f64),
    /// Runs simulated.
    pub runs: usize,
}

/// Scores tables on a fixed set of episodes.
pub struct TableSearch<'a> {
    /// The scenario (its λ is replaced by each episode's).
    pub scenario: &'a Scenario,
    /// The episodes.
    pub episodes: &'a [EpisodeSpec],
    /// Simulated duration of each, s.
    pub duration_s: f64,
    /// The workers' queue bound in every run.
    pub queue_bound: QueueBound,
    /// The load view the schedulers decide on (docs/model.md §8).
    pub load_view: continuum_core::load::LoadViewMode,
    /// The candidate configurations.
    pub actions: &'a [Configuration],
    /// How streams are classed.
    pub classes: &'a StreamClasses,
    /// What a table is scored by.
    pub objective: Objective,
    /// Whether a change must also hold on every episode, not only in total.
    pub every_episode: bool,
}

/// Counts and latencies of one table's runs, overall and per class.
#[derive(Debug, Clone, Default)]
pub struct TableRuns {
    /// Over every class.
    pub total: (Counts, LogHistogram),
    /// Per class.
    pub per_class: Vec<(Counts, LogHistogram)>,
    /// Per episode, over every class.
    pub per_episode: Vec<(Counts, LogHistogram)>,
}

fn add_into(a: &mut (Counts, LogHistogram), b: &(Counts, LogHistogram)) {
    a.0.add(&b.0);
    a.1.add(&b.1);
}

impl TableSearch<'_> {
    /// Totals and per-class counts and latencies of each table (action index per class) over
    /// every episode, one simulation per episode, in parallel; the result does not depend on
    /// the threads.
    pub fn evaluate(&self, tables: &[Vec<usize>]) -> Vec<TableRuns> {
        let jobs: Vec<(usize, usize)> = (0..tables.len())
            .flat_map(|t| (0..self.episodes.len()).map(move |e| (t, e)))
            .collect();
        let runs: Vec<TableRuns> = jobs
            .par_iter()
            .map(|&(t, e)| self.run(&tables[t], &self.episodes[e]))
            .collect();
        runs.chunks(self.episodes.len().max(1))
            .map(|per_episode| {
                let mut sum = TableRuns {
                    per_class: vec![Default::default(); self.classes.len()],
                    ..Default::default()
                };
                for r in per_episode {
                    sum.per_episode.push(r.total.clone());
                    add_into(&mut sum.total, &r.total);
                    for (a, b) in sum.per_class.iter_mut().zip(&r.per_class) {
                        add_into(a, b);
                    }
                }
                sum
            })
            .collect()
    }

    fn run(&self, table: &[usize], ep: &EpisodeSpec) -> TableRuns {
        let sc = Arc::new(self.scenario.clone().with_lambda_profile(ep.lambda.clone()));
        let cfg = SimConfig {
            duration_s: self.duration_s,
            seed: ep.seed,
            capacity: ep.capacity,
            queue_bound: self.queue_bound,
            load_view: self.load_view,
            ..SimConfig::default()
        };
        let mut sim = Simulation::new(sc.clone(), cfg, self.actions[table[0]].policy);
        sim.set_classes(Arc::new(self.classes.clone()));
        for s in 0..sc.topology.schedulers.len() {
            for (c, &a) in table.iter().enumerate() {
                sim.set_class_configuration(s, c, &self.actions[a]);
            }
        }
        sim.finish();
        let by_app = self.classes.for_apps(&sc.workload);
        let m = sim.metrics();
        let latency = |keep: &dyn Fn(usize) -> bool| {
            let mut h = LogHistogram::default();
            if self.objective.needs_latency() {
                (0..by_app.len())
                    .filter(|&a| keep(a))
                    .for_each(|a| h.add(m.app_latency(a)));
            }
            h
        };
        let per_class = (0..self.classes.len())
            .map(|c| {
                let keep = |a: usize| by_app[a] == Some(c as u16);
                (m.sum(|_, _, a| keep(a)), latency(&keep))
            })
            .collect();
        TableRuns {
            total: (m.sum(|_, _, _| true), latency(&|_| true)),
            per_class,
            per_episode: Vec::new(),
        }
    }

    /// The table of action indices as a [`PolicyTable`].
    pub fn table(&self, table: &[usize]) -> PolicyTable {
        PolicyTable {
            classes: self.classes.clone(),
            policies: table.iter().map(|&a| self.actions[a].policy).collect(),
            default: None,
        }
    }

    /// Runs the search (see the module documentation).
    pub fn search(&self) -> SearchResult {
        self.search_with(&|_, _| {})
    }

    /// [`Self::search`], calling `progress(runs done, runs planned)` after each batch of runs
    /// (planned: the single policies, the per-class table and two sweeps over the classes; a
    /// longer search raises it).
    pub fn search_with(&self, progress: &dyn Fn(usize, usize)) -> SearchResult {
        let (n_a, n_c) = (self.actions.len(), self.classes.len());
        let planned = self.episodes.len() * (n_a + 1 + 2 * n_c * n_a.saturating_sub(1));
        let report = |runs: usize| progress(runs, planned.max(runs));
        let uniform: Vec<Vec<usize>> = (0..n_a).map(|a| vec![a; n_c]).collect();
        let scored = self.evaluate(&uniform);
        let mut runs = n_a * self.episodes.len();
        report(runs);
        let ratio = |c: &(Counts, LogHistogram)| self.objective.score(&c.0, &c.1);
        let single = (0..n_a).fold(0, |b, a| {
            if ratio(&scored[a].total) > ratio(&scored[b].total) {
                a
            } else {
                b
            }
        });
        let per_class: Vec<usize> = (0..n_c)
            .map(|c| {
                (0..n_a).fold(0, |b, a| {
                    if ratio(&scored[a].per_class[c]) > ratio(&scored[b].per_class[c]) {
                        a
                    } else {
                        b
                    }
                })
            })
            .collect();
        let each = |r: &TableRuns| r.per_episode.iter().map(ratio).collect::<Vec<f64>>();
        // Whether runs `r` beat the current best (total `best`, per episode `best_each`).
        let beats = |r: &TableRuns, best: f64, best_each: &[f64]| {
            ratio(&r.total) > best
                && (!self.every_episode || each(r).iter().zip(best_each).all(|(x, y)| x >= y))
        };
        let mut best = (uniform[single].clone(), ratio(&scored[single].total));
        let mut best_each = each(&scored[single]);
        if !uniform.contains(&per_class) {
            let r = &self.evaluate(std::slice::from_ref(&per_class))[0];
            runs += self.episodes.len();
            report(runs);
            if beats(r, best.1, &best_each) {
                best = (per_class, ratio(&r.total));
                best_each = each(r);
            }
        }
        // Sweeps over the classes until none improves (or MAX_SWEEPS).
        let mut sweeps = 0;
        let mut changed = n_c > 1;
        while changed && sweeps < MAX_SWEEPS {
            changed = false;
            sweeps += 1;
            for c in 0..n_c {
                let tries: Vec<Vec<usize>> = (0..n_a)
                    .filter(|&a| a != best.0[c])
                    .map(|a| {
                        let mut t = best.0.clone();
                        t[c] = a;
                        t
                    })
                    .collect();
                runs += tries.len() * self.episodes.len();
                for (t, runs) in tries.iter().zip(self.evaluate(&tries)) {
                    if beats(&runs, best.1, &best_each) {
                        best = (t.clone(), ratio(&runs.total));
                        best_each = each(&runs);
                        changed = true;
                    }
                }
                report(runs);
            }
        }
        SearchResult {
            best_single: (single, ratio(&scored[single].total)),
            table: best,
            runs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use continuum_core::fixtures;
    use continuum_core::policy::by_name;

    /// Two classes on the tiny topology and two policies, `closest` and `farthest`; the right
    /// table is known by reasoning. The tight class (40 ms) is best served at the access site
    /// `a0` (1 ms away; the central office is 20 ± 5 ms away, the cloud farther), the loose one
    /// (400 ms, three times the streams) can be served anywhere and only crowds `a0` if sent
    /// there. So: tight → `closest`, loose → `farthest`, a table no single policy gives. The
    /// search must return that table, which must also be the best of all four tables scored one
    /// by one here (not through the search), clearly above both single policies.
    #[test]
    fn the_search_finds_the_table_known_to_be_best() {
        let text = r#"
lambda_per_min: 40
jitter: {uniform_ms: 3}
access_delay_ms: 2
apps:
  - {name: tight, share: 1, task: detect, rate_qps: 10, frame_kb: 10, uplink_mbps: 80, max_delay_ms: 40, min_accuracy: 0, duration_s: 30}
  - {name: loose, share: 3, task: detect, rate_qps: 10, frame_kb: 10, uplink_mbps: 80, max_delay_ms: 400, min_accuracy: 0, duration_s: 30}
"#;
        let sc = fixtures::scenario(fixtures::TOPOLOGY, text);
        let classes = StreamClasses::from_workload(
            &sc.workload,
            &continuum_core::observe::DemandBuckets::default(),
        );
        assert_eq!(classes.names(), ["tight".to_string(), "loose".to_string()]);
        let names = ["closest", "farthest"];
        let actions: Vec<Configuration> = names
            .iter()
            .map(|n| Configuration::plain(by_name(n).unwrap()))
            .collect();
        let episodes = [1, 2]
            .map(|seed| EpisodeSpec::new(continuum_core::workload::Lambda::Constant(40.0), seed));
        let search = TableSearch {
            scenario: &sc,
            episodes: &episodes,
            duration_s: 60.0,
            queue_bound: QueueBound::Deadline,
            load_view: Default::default(),
            actions: &actions,
            classes: &classes,
            objective: Objective::SuccessRatio,
            every_episode: false,
        };
        let r = search.search();
        // Every table [tight, loose], scored one at a time.
        let all = [[0, 0], [0, 1], [1, 0], [1, 1]];
        let scores: Vec<f64> = all
            .iter()
            .map(|t| search.evaluate(&[t.to_vec()])[0].total.0.success_ratio())
            .collect();
        let report: Vec<String> = all
            .iter()
            .zip(&scores)
            .map(|(t, s)| format!("[{}, {}] {s:.4}", names[t[0]], names[t[1]]))
            .collect();
        // The reasoning, checked on the scan: [closest, farthest] beats the other three.
        for i in [0, 2, 3] {
            assert!(scores[1] > scores[i], "{report:?}");
        }
        // The search returns it, with the score the scan gave it.
        assert_eq!(r.table, (vec![0, 1], scores[1]), "{report:?}");
        // The best single policy is the better uniform table, half a point below the table.
        let single = if scores[3] > scores[0] { 1 } else { 0 };
        assert_eq!(r.best_single, (single, scores[3 * single]), "{report:?}");
        assert!(scores[1] > scores[3 * single] + 0.005, "{report:?}");
        // The stricter rule keeps a table only where it holds on each episode: what it keeps
        // scores at least as well as the best single policy on every episode, and it keeps the
        // total rule's table exactly when that table does so too.
        let strict = TableSearch {
            every_episode: true,
            ..search
        };
        let rs = strict.search();
        let each = |t: &[usize]| -> Vec<f64> {
            strict.evaluate(&[t.to_vec()])[0]
                .per_episode
                .iter()
                .map(|c| Objective::SuccessRatio.score(&c.0, &c.1))
                .collect()
        };
        let (kept, single_each, table_each) =
            (each(&rs.table.0), each(&[single; 2]), each(&[0, 1]));
        assert_eq!(kept.len(), 2);
        assert!(
            kept.iter().zip(&single_each).all(|(k, s)| k >= s),
            "{kept:?} {single_each:?}"
        );
        let holds = table_each.iter().zip(&single_each).all(|(t, s)| t >= s);
        assert_eq!(
            rs.table.0 == vec![0, 1],
            holds,
            "{table_each:?} {single_each:?}"
        );
    }
}
