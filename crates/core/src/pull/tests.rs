use super::bayes::posterior;
use super::*;
use crate::config::Source;
use crate::fixtures;
use crate::rng::{Purpose, stream_rng};
use crate::topology::Topology;
use rand::Rng;

fn setup() -> (Topology, Fleet) {
    let p = fixtures::profiles();
    let t = Topology::from_source(&Source::inline("t.yaml", fixtures::TOPOLOGY), &p).unwrap();
    let f = Fleet::new(&t, &p);
    (t, f)
}

fn demand(max_delay_ms: f64, min_accuracy: f64, rate_qps: f64) -> Demand {
    Demand {
        task: 0,
        rate_qps,
        frame_kb: 10.0,
        tx_ms: 1.0,
        access_ms: 2.0,
        max_delay_ms,
        min_accuracy,
        items: 1,
    }
}

/// A puller that replays fixed claims (by cluster) in its first round, then is void.
struct Fixed(Vec<(u32, Claim)>, Resolution, Vec<bool>);

impl Puller for Fixed {
    fn name(&self) -> String {
        "fixed".into()
    }
    fn resolution(&self) -> Resolution {
        self.1
    }
    fn claim(&mut self, round: &Round, _rng: &mut SimRng, out: &mut Vec<Option<Claim>>) {
        for a in round.agents {
            let c = if round.round == 0 {
                self.0.iter().find(|(n, _)| *n == a.cluster).map(|x| x.1)
            } else {
                None
            };
            out.push(c);
        }
    }
    fn resolved(&mut self, round: &Round, won: &[bool]) {
        if round.round == 0 {
            self.2 = won.to_vec();
        }
    }
}

#[test]
fn posterior_is_eq_11() {
    // Pr(j|n) 0.6 and 0.3, priors 1 and 3: joint 0.6 and 0.9, posterior 0.4 and 0.6.
    let post = posterior(&[0.6, 0.3], &[1.0, 3.0]);
    assert!((post[0] - 0.4).abs() < 1e-12 && (post[1] - 0.6).abs() < 1e-12);
    assert_eq!(posterior(&[0.0, 0.5], &[2.0, 0.0]), vec![0.0, 0.0]);
}

/// a0 and co both claim scheduler a0's one stream (30 ms, 10 qps of 10 KB), with pick
/// probabilities `p_a0` and `p_co`, resolved by `how`: the winning cluster, the step's counters
/// and which claim won (agents in cluster order).
fn conflict(how: Resolution, p_a0: f64, p_co: f64) -> (u32, StepStats, Vec<bool>) {
    let (t, f) = setup();
    let view = LoadView::idle(f.workers.len());
    let pending = [Pending {
        demand: demand(30.0, 0.0, 10.0),
        reach: &t.schedulers[0].reach,
        sched: 0,
        waited: 0,
    }];
    let mut cands = Vec::new();
    feasible(&pending[0].demand, pending[0].reach, &f, &view, &mut cands);
    let claim = |id: &str, p: f64| {
        let n = t.cluster_index(id).unwrap() as u32;
        let cand = cands.iter().position(|c| c.cluster == n).unwrap() as u32;
        (
            n,
            Claim {
                pending: 0,
                cand,
                p,
            },
        )
    };
    let claims = vec![claim("a0", p_a0), claim("co", p_co)];
    let mut rng = stream_rng(1, Purpose::Other, 0, 0);
    let mut fixed = Fixed(claims, how, Vec::new());
    let (out, stats) = step(&pending, &f, &view, &mut fixed, &mut rng);
    assert_eq!(out.len(), 1);
    (out[0].1.cluster, stats, fixed.2)
}

/// Scheduler a0's stream (10 qps of 10 KB, η = 1) fits 10 times on a0 (one small-b1, free 100)
/// and 20 times on co (two small-b1, free 200): priors 1/3 and 2/3. With Pr(j|a0) = 0.9 and
/// Pr(j|co) = 0.4, a0 wins (0.9 > 0.8); with Pr(j|co) = 0.5, co wins (1.0 > 0.9).
#[test]
fn bayes_weighs_the_pick_by_free_capacity() {
    let (t, _) = setup();
    let a0 = t.cluster_index("a0").unwrap() as u32;
    let co = t.cluster_index("co").unwrap() as u32;
    for (p_co, winner) in [(0.4, a0), (0.5, co)] {
        let (won_by, stats, won) = conflict(Resolution::Bayes, 0.9, p_co);
        assert_eq!(won_by, winner, "p_co = {p_co}");
        assert_eq!(stats.conflicts_lost, 1);
        assert_eq!(won.iter().filter(|w| **w).count(), 1);
    }
}

/// co is farther (its e2e is larger) but more confident (0.9 against 0.2).
#[test]
fn ablation_resolutions_pick_as_named() {
    let (t, _) = setup();
    let a0 = t.cluster_index("a0").unwrap() as u32;
    let co = t.cluster_index("co").unwrap() as u32;
    for (how, winner) in [
        (Resolution::UniformPrior, co),
        (Resolution::FirstClaim, a0.min(co)),
        (Resolution::EarliestFinish, a0),
    ] {
        assert_eq!(conflict(how, 0.2, 0.9).0, winner, "{how:?}");
    }
}

/// Whatever the agents claim, a step binds each stream at most once and only to a worker that
/// is feasible for it against the published view plus the step's earlier bindings.
#[test]
fn a_step_never_binds_an_infeasible_candidate() {
    let (t, f) = setup();
    let mut rng = stream_rng(7, Purpose::Other, 1, 0);
    for case in 0..300 {
        let mut view = LoadView::idle(f.workers.len());
        for (w, seen) in view.workers.iter_mut().enumerate() {
            seen.load_qps = rng.random_range(0.0..1.1) * f.workers[w].capacity_qps;
        }
        let n = rng.random_range(1..8);
        let pending: Vec<Pending> = (0..n)
            .map(|_| Pending {
                demand: demand(
                    rng.random_range(10.0..150.0),
                    rng.random_range(0.0..0.7),
                    rng.random_range(1.0..60.0),
                ),
                reach: &t.schedulers[rng.random_range(0..t.schedulers.len())].reach,
                sched: 0,
                waited: 0,
            })
            .collect();
        let mut puller: Box<dyn Puller> = match case % 3 {
            0 => Box::new(RandomPull),
            1 => Box::new(GreedyPull),
            _ => Box::new(PriorPull),
        };
        let (out, stats) = step(&pending, &f, &view, puller.as_mut(), &mut rng);
        let mut check = view.clone();
        let mut seen = vec![false; pending.len()];
        for (j, c) in &out {
            let j = *j as usize;
            assert!(!seen[j], "stream {j} bound twice");
            seen[j] = true;
            let mut ok = Vec::new();
            feasible(&pending[j].demand, pending[j].reach, &f, &check, &mut ok);
            assert!(ok.contains(c), "case {case}: {c:?} is not feasible");
            check.workers[c.worker as usize].load_qps += demand_load(&pending[j].demand, &f, c);
        }
        assert!(stats.rounds as usize <= pending.len() + 1);
        // Every stream left unbound has no feasible candidate left (the agents never stop
        // while one could be served: the baselines claim whenever they have an offer).
        for (j, p) in pending.iter().enumerate() {
            if !seen[j] {
                let mut ok = Vec::new();
                feasible(&p.demand, p.reach, &f, &check, &mut ok);
                assert!(ok.is_empty(), "case {case}: stream {j} left with {ok:?}");
            }
        }
    }
}

/// Greedy claims the binding it would answer earliest: a0's own worker for a0's stream.
#[test]
fn greedy_takes_the_earliest_finish() {
    let (t, f) = setup();
    let view = LoadView::idle(f.workers.len());
    let pending = [Pending {
        demand: demand(200.0, 0.0, 10.0),
        reach: &t.schedulers[0].reach,
        sched: 0,
        waited: 0,
    }];
    let mut rng = stream_rng(1, Purpose::Other, 0, 0);
    let (out, _) = step(&pending, &f, &view, &mut GreedyPull, &mut rng);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].1.cluster, t.cluster_index("a0").unwrap() as u32);
}

/// Scheduler a0's stream (30 ms, 10 qps of 10 KB) fits 10 times on a0 and 20 times on co (the
/// cloud is too far for 30 ms): greedy pull takes a0, the earliest finish; prior pull lets both
/// claim it with the same probability, so eq. 11's prior alone decides: co, which holds more
/// copies, on its least-e2e worker.
#[test]
fn prior_pull_gives_a_contested_stream_to_the_most_copies() {
    let (t, f) = setup();
    let view = LoadView::idle(f.workers.len());
    let pending = [Pending {
        demand: demand(30.0, 0.0, 10.0),
        reach: &t.schedulers[0].reach,
        sched: 0,
        waited: 0,
    }];
    let co = t.cluster_index("co").unwrap() as u32;
    for seed in 0..20 {
        let mut rng = stream_rng(seed, Purpose::Other, 0, 0);
        let (out, stats) = step(&pending, &f, &view, &mut PriorPull, &mut rng);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].1.cluster, co, "seed {seed}");
        assert_eq!(stats.conflicts_lost, 1, "both clusters claimed it");
        let mut cands = Vec::new();
        feasible(&pending[0].demand, pending[0].reach, &f, &view, &mut cands);
        let best = cands
            .iter()
            .filter(|c| c.cluster == co)
            .map(|c| c.e2e_ms)
            .fold(f64::INFINITY, f64::min);
        assert_eq!(out[0].1.e2e_ms, best);
    }
    let mut rng = stream_rng(1, Purpose::Other, 0, 0);
    let (out, _) = step(&pending, &f, &view, &mut GreedyPull, &mut rng);
    assert_ne!(out[0].1.cluster, co, "greedy pull decides otherwise here");
}
