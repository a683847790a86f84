//! Unit tests of the reproduction: environment dynamics, baselines, the policy gradient on
//! problems whose answer is known, Reptile's update, reproducibility and refusals.

use super::env::{End, Env, EnvParams, JobSet};
use super::eval::{Scheduler, episode};
use super::heuristics::{Heuristic, alignment};
use super::imitate::imitate_sjf;
use super::net::{PgShape, build};
use super::objective::Objective;
use super::reinforce::{
    PgVariant, SparseRows, Trajectory, optimiser, returns, time_baseline, update, update_in_chunks,
};
use super::train::{PgConfig, rollouts, train, train_jobsets};
use continuum_core::rng::{Purpose, stream_rng};
use continuum_learn::agent::flat;
use continuum_learn::reptile::meta_train_step;

/// One resource of 2 units, 2 slots, an 8-step horizon, jobs up to 4 steps.
fn tiny() -> EnvParams {
    EnvParams {
        num_res: 1,
        num_nw: 2,
        time_horizon: 8,
        res_slot: 2,
        max_job_size: 2,
        max_job_len: 4,
        backlog_size: 2,
        simu_len: 8,
        new_job_rate: 1.0,
        small_job_chance: 0.5,
        max_track_since_new: 4,
        episode_max_length: 40,
    }
}

/// A long job (4 steps) at t = 0, a short one (1 step) at t = 1, each needing the whole
/// cluster: placing the long one at once gives slowdowns 1 and 4 (mean 2.5); waiting one step
/// and running the short one first gives 1 and 6/4 (mean 1.25), the optimum. Nothing arrives
/// after t = 1; the 8-step window lets the training return see the long job finish.
fn wait_for_short() -> JobSet {
    let mut j = vec![Some((4, vec![2])), Some((1, vec![2]))];
    j.resize(8, None);
    j
}

#[test]
fn placing_and_moving_on_follow_the_model() {
    let mut e = Env::new(tiny(), wait_for_short(), End::AllDone, Objective::Slowdown);
    assert!(e.placeable(0) && !e.placeable(1));
    let s = e.step(0);
    assert!(s.placed && !s.done);
    // Long job in the system (1/4), the short one arrives: −(1/4 + 1).
    let s = e.step(2);
    assert!(!s.placed);
    assert!((s.reward + 1.25).abs() < 1e-9);
    assert!(
        e.placeable(0),
        "the short job fits after the long one, within the horizon"
    );
    assert!(!e.fits_now(e.slot(0).unwrap()));
    while !e.step(if e.placeable(0) { 0 } else { 2 }).done {}
    let sum = e.summary();
    let mean = sum.slowdowns.iter().sum::<f64>() / sum.slowdowns.len() as f64;
    assert!((mean - 2.5).abs() < 1e-9, "{:?}", sum.slowdowns);
    assert_eq!(sum.makespan, 5);
    assert_eq!(sum.unfinished, 0);
}

#[test]
fn the_image_shows_cluster_slots_backlog_and_time() {
    let p = tiny();
    let e = Env::new(p, wait_for_short(), End::AllDone, Objective::Slowdown);
    let mut ob = Vec::new();
    e.observe(&mut ob);
    assert_eq!(ob.len(), p.input_len());
    let w = p.image_width();
    // Columns: cluster 0..2, slot 0 at 2..4, slot 1 at 4..6, backlog 6, time 7.
    assert_eq!(w, 8);
    let filled: usize = (0..p.time_horizon)
        .map(|t| (2..4).filter(|c| ob[t * w + c] == 1.0).count())
        .sum();
    assert_eq!(filled, 4 * 2, "the long job's block is 4 steps × 2 units");
    assert!(
        (0..p.time_horizon).all(|t| ob[t * w] == 0.0),
        "nothing runs yet"
    );
    assert_eq!(ob[7], 0.0, "a job has just arrived");
}

#[test]
fn tetris_picks_the_best_aligned_job_that_fits() {
    assert_eq!(alignment(&[6, 2], &[5, 1]), 32.0);
    let p = EnvParams {
        num_res: 2,
        num_nw: 3,
        simu_len: 3,
        ..EnvParams::default()
    };
    // Free [10, 10]: job 0 [9, 1] scores 100, job 1 [2, 2] scores 40, job 2 [10, 10] would
    // score 200 but only fits once the others are gone... it fits now, so it wins.
    let jobs = vec![
        Some((2, vec![9, 1])),
        Some((2, vec![2, 2])),
        Some((2, vec![10, 10])),
    ];
    let mut e = Env::new(p, jobs, End::AllDone, Objective::Slowdown);
    e.step(p.num_nw); // the second job arrives
    e.step(p.num_nw); // the third
    let mut rng = stream_rng(1, Purpose::Other, 0, 0);
    assert_eq!(Heuristic::Tetris.act(&e, &mut rng), 2);
    assert_eq!(
        Heuristic::Sjf.act(&e, &mut rng),
        0,
        "equal lengths: the lower slot"
    );
    e.step(2);
    // Free [0, 0]: nothing fits, the void action.
    assert_eq!(Heuristic::Tetris.act(&e, &mut rng), p.num_nw);
}

#[test]
fn tetris_sjf_spans_tetris_to_sjf_and_the_authors_random_takes_any_action() {
    let p = EnvParams {
        num_res: 2,
        num_nw: 3,
        simu_len: 3,
        ..EnvParams::default()
    };
    // Free [10, 10]: job 0 (3 steps, [9, 1]) aligns best (100), job 1 (1 step, [2, 2]) is the
    // shortest (alignment 40).
    let jobs = vec![Some((3, vec![9, 1])), Some((1, vec![2, 2])), None];
    let mut e = Env::new(p, jobs, End::AllDone, Objective::Slowdown);
    e.step(p.num_nw); // the second job arrives
    let mut rng = stream_rng(1, Purpose::Other, 0, 0);
    let knob = |k: f64| Heuristic::TetrisSjf { knob: k };
    assert_eq!(knob(1.0).act(&e, &mut rng), 0, "knob 1: Tetris");
    assert_eq!(knob(0.0).act(&e, &mut rng), 1, "knob 0: SJF");
    // 100k + (1 − k)/3 against 40k + (1 − k): SJF's pick wins while k < 1/91.
    assert_eq!(knob(0.01).act(&e, &mut rng), 1);
    assert_eq!(knob(0.02).act(&e, &mut rng), 0);
    assert!("tetris-sjf:1.5".parse::<Heuristic>().is_err());
    assert_eq!("tetris-sjf:0.25".parse::<Heuristic>(), Ok(knob(0.25)));
    // The authors' random draws among all M + 1 actions, empty slot 2 and void included; the
    // fitting-only one only among jobs 0 and 1.
    let draws = |h: Heuristic, rng: &mut _| {
        let mut seen = [0usize; 4];
        for _ in 0..400 {
            seen[h.act(&e, rng)] += 1;
        }
        seen
    };
    let all = draws(Heuristic::Random, &mut rng);
    assert!(all.iter().all(|&n| n > 60), "{all:?}");
    let fit = draws(Heuristic::RandomFit, &mut rng);
    assert!(
        fit[0] > 150 && fit[1] > 150 && fit[2] + fit[3] == 0,
        "{fit:?}"
    );
}

#[test]
fn imitating_sjf_makes_the_policy_pick_sjfs_actions() {
    let cfg = PgConfig {
        env: tiny(),
        jobsets: 4,
        hidden: 16,
        learning_rate: 0.01,
        end: End::AllDone,
        ..PgConfig::default()
    };
    let (vars, net) = build(cfg.shape(), 2).unwrap();
    let jobsets = train_jobsets(&cfg, 2, 0);
    let before = imitate_sjf(&vars, &net, &cfg, &jobsets, 0, 2).unwrap();
    let after = imitate_sjf(&vars, &net, &cfg, &jobsets, 60, 2).unwrap();
    assert!(after.decisions > 8, "{after:?}");
    assert!(
        after.agreement > 0.95 && after.agreement > before.agreement,
        "{before:?} -> {after:?}"
    );
}

#[test]
fn the_time_baseline_pads_short_rollouts_with_zeros() {
    let b = time_baseline(&[vec![1.0, 2.0, 3.0], vec![3.0]]);
    assert_eq!(b, vec![2.0, 1.0, 1.5]);
    assert_eq!(returns(&[1.0, 0.0, -2.0], 1.0), vec![-1.0, -2.0, -2.0]);
    assert_eq!(returns(&[1.0, 1.0], 0.5), vec![1.5, 1.0]);
}

#[test]
fn reinforce_learns_a_two_armed_bandit() {
    let shape = PgShape {
        input: 3,
        hidden: 8,
        actions: 2,
        critic: false,
    };
    let (vars, net) = build(shape, 3).unwrap();
    let mut opt = optimiser(&vars, 0.01).unwrap();
    let mut rng = stream_rng(4, Purpose::Other, 0, 0);
    let mut probs = Vec::new();
    for _ in 0..150 {
        let snap = net.snapshot().unwrap();
        let batch: Vec<Trajectory> = (0..16)
            .map(|_| {
                snap.probs(&[1.0, 0.5, -0.5], None, &mut probs);
                let a = usize::from(rand::Rng::random::<f32>(&mut rng) >= probs[0]);
                Trajectory {
                    obs: {
                        let mut o = SparseRows::default();
                        o.push(&[1.0, 0.5, -0.5]);
                        o
                    },
                    left: vec![1.0],
                    actions: vec![a as u32],
                    rewards: vec![if a == 1 { 1.0 } else { 0.0 }],
                    allowed: vec![true, true],
                    ..Trajectory::default()
                }
            })
            .collect();
        update(&net, &mut opt, &[batch], &PgVariant::PLAIN, 1.0, 1.0).unwrap();
    }
    net.snapshot()
        .unwrap()
        .probs(&[1.0, 0.5, -0.5], None, &mut probs);
    assert!(probs[1] > 0.95, "π(better arm) = {}", probs[1]);
}

#[test]
fn reinforce_finds_the_known_best_order() {
    let cfg = PgConfig {
        env: tiny(),
        jobsets: 1,
        rollouts: 16,
        hidden: 16,
        learning_rate: 0.01,
        ..PgConfig::default()
    };
    let (vars, net) = build(cfg.shape(), 5).unwrap();
    let mut opt = optimiser(&vars, cfg.learning_rate).unwrap();
    let jobsets = vec![wait_for_short()];
    for it in 0..150 {
        let batches = rollouts(&cfg, &net, &jobsets, 5, it).unwrap();
        update(&net, &mut opt, &batches, &cfg.variant, 1.0, 1.0).unwrap();
    }
    let snap = net.snapshot().unwrap();
    let s = episode(
        cfg.env,
        &jobsets[0],
        Scheduler::Agent(&snap, false, true),
        9,
        0,
    );
    let mean = s.slowdowns.iter().sum::<f64>() / s.slowdowns.len() as f64;
    assert!(
        (mean - 1.25).abs() < 1e-9,
        "greedy policy's slowdowns {:?}",
        s.slowdowns
    );
    // A work-conserving heuristic cannot wait: it gets 2.5.
    let h = episode(
        cfg.env,
        &jobsets[0],
        Scheduler::Heuristic(Heuristic::Sjf),
        9,
        0,
    );
    assert!((h.slowdowns.iter().sum::<f64>() / 2.0 - 2.5).abs() < 1e-9);
}

#[test]
fn keep_best_keeps_the_lowest_validated_iteration() {
    let cfg = PgConfig {
        env: tiny(),
        jobsets: 2,
        rollouts: 4,
        hidden: 8,
        learning_rate: 0.05,
        iterations: 12,
        eval_every: 1,
        eval_jobsets: 4,
        keep_best: true,
        ..PgConfig::default()
    };
    let t = train(&cfg, 4, None, &|_| {}).unwrap();
    let vals: Vec<f64> = t
        .log
        .iter()
        .map(|l| l.eval.as_ref().unwrap().mean_slowdown)
        .collect();
    let kept = t.kept.expect("an iteration kept");
    let low = vals.iter().copied().fold(f64::INFINITY, f64::min);
    assert_eq!(vals[kept], low, "{vals:?}");
    assert!(
        vals[..kept].iter().all(|v| *v > low),
        "the first lowest: {vals:?}"
    );
    // The kept weights are that iteration's: they score its validation figure again.
    let val = super::eval::eval_jobsets(&cfg.env, 4 ^ 0x7661_6c69, cfg.eval_jobsets);
    let snap = t.net.snapshot().unwrap();
    let (f, _) = super::eval::evaluate(cfg.env, &val, Scheduler::Agent(&snap, false, false), 4);
    assert_eq!(f.mean_slowdown, low);
    let bad = PgConfig {
        eval_every: 0,
        ..cfg
    };
    assert!(
        bad.validate()
            .unwrap_err()
            .to_string()
            .contains("keep_best")
    );
}

#[test]
fn a_batch_cut_into_chunks_takes_the_whole_batch_step() {
    // The critic variant has every term of the loss: entropy, normalised advantages, the mask
    // and the critic's own loss.
    let cfg = PgConfig {
        env: tiny(),
        jobsets: 2,
        rollouts: 4,
        hidden: 8,
        variant: PgVariant::preset("critic").unwrap(),
        ..PgConfig::default()
    };
    let jobsets = vec![wait_for_short(), wait_for_short()];
    let step = |rows: usize| {
        let (vars, net) = build(cfg.shape(), 3).unwrap();
        let mut opt = optimiser(&vars, 0.01).unwrap();
        let batches = rollouts(&cfg, &net, &jobsets, 3, 0).unwrap();
        let decisions: usize = batches.iter().flatten().map(|t| t.actions.len()).sum();
        assert!(
            decisions > 3 * rows.min(3),
            "too few decisions to cut: {decisions}"
        );
        let s = update_in_chunks(&net, &mut opt, &batches, &cfg.variant, 1.0, 1.0, rows).unwrap();
        (flat(&vars).unwrap(), s.entropy)
    };
    let (whole, e1) = step(100_000);
    let (cut, e2) = step(3);
    assert!((e1 - e2).abs() < 1e-5, "entropy {e1} vs {e2}");
    let start = flat(&build(cfg.shape(), 3).unwrap().0).unwrap();
    let moved = whole.iter().zip(&start).any(|(a, b)| (a - b).abs() > 1e-4);
    assert!(moved, "the step moved nothing");
    for (a, b) in whole.iter().zip(&cut) {
        assert!((a - b).abs() < 1e-5, "{a} vs {b}");
    }
}

#[test]
fn reptile_converges_to_the_mean_of_the_task_optima() {
    // Tasks: minimise (θ − c)², c in {−1, 2, 5}; inner loop: 5 SGD steps of rate 0.1. The
    // adapted weights move a fixed share of the way to c, so the fixed point is mean c = 2.
    let tasks = [-1.0f32, 2.0, 5.0];
    let mut theta = vec![10.0f32];
    for _ in 0..200 {
        let dirs: Vec<Vec<f32>> = tasks
            .iter()
            .map(|c| {
                let mut w = theta[0];
                for _ in 0..5 {
                    w -= 0.1 * 2.0 * (w - c);
                }
                vec![w - theta[0]]
            })
            .collect();
        meta_train_step(&mut theta, &dirs, 0.5);
    }
    assert!((theta[0] - 2.0).abs() < 1e-4, "θ = {}", theta[0]);
}

#[test]
fn training_is_reproducible_whatever_the_thread_count() {
    let cfg = PgConfig {
        env: EnvParams {
            simu_len: 10,
            ..EnvParams::default()
        },
        iterations: 2,
        jobsets: 2,
        rollouts: 3,
        eval_every: 1,
        eval_jobsets: 2,
        variant: PgVariant::preset("critic").unwrap(),
        ..PgConfig::default()
    };
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| flat(&train(&cfg, 11, None, &|_| {}).unwrap().vars).unwrap())
    };
    assert_eq!(run(1), run(3));
}

#[test]
fn bad_names_and_incompatible_checkpoints_are_refused() {
    let e = "speed".parse::<Objective>().unwrap_err();
    assert!(
        e.contains("slowdown, completion, utilisation, makespan"),
        "{e}"
    );
    assert!(PgVariant::preset("fancy").unwrap_err().contains("plain"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.deeprm");
    let cfg = PgConfig::default();
    let (vars, net) = build(cfg.shape(), 1).unwrap();
    super::PgCheckpoint::save(&path, &vars, &net, &cfg, "train").unwrap();
    let ck = super::PgCheckpoint::load(&path).unwrap();
    assert_eq!(ck.weights, flat(&vars).unwrap());
    let other = PgConfig { hidden: 32, ..cfg };
    let err = ck.init_for(other.shape(), &path).unwrap_err().to_string();
    assert!(
        err.contains("incompatible") && err.contains("hidden"),
        "{err}"
    );
    let bad = PgConfig {
        iterations: 0,
        ..cfg
    };
    assert!(
        bad.validate()
            .unwrap_err()
            .to_string()
            .contains("`iterations`")
    );
}

#[test]
fn an_episode_run_to_the_end_waits_for_the_last_arrival() {
    let mut jobs: JobSet = vec![None; 8];
    jobs[0] = Some((2, vec![1]));
    jobs[6] = Some((1, vec![1]));
    let mut e = Env::new(tiny(), jobs, End::AllDone, Objective::Slowdown);
    let mut rng = stream_rng(1, Purpose::Other, 0, 0);
    while !e.step(Heuristic::Tetris.act(&e, &mut rng)).done {}
    let s = e.summary();
    assert_eq!(s.slowdowns, vec![1.0, 1.0]);
    assert_eq!((s.makespan, s.unfinished), (7, 0));
}

#[test]
fn a_job_left_waiting_counts_with_its_earliest_completion() {
    // A policy that only ever moves time on: the one job waits until the cap (12 steps).
    let p = EnvParams {
        episode_max_length: 12,
        ..tiny()
    };
    let mut jobs: JobSet = vec![None; 8];
    jobs[0] = Some((2, vec![1]));
    let mut e = Env::new(p, jobs, End::AllDone, Objective::Slowdown);
    while !e.step(p.num_nw).done {}
    let s = e.summary();
    assert_eq!(s.unfinished, 1);
    // Earliest completion: now (13) + its 2 steps, from arrival at 0: slowdown 15 / 2.
    assert_eq!(s.slowdowns, vec![7.5]);
}

#[test]
fn within_2_charges_each_job_once_when_its_slowdown_passes_2() {
    // Placing the long job at once (slot 0 whenever it can be placed): the short job arrives
    // at t = 1, starts at t = 4 and ends at t = 5, slowdown 4; it is still in the system at
    // t = 1 + 2·1 = 3, the one charge. The long job's slowdown is 1.
    let run = |objective| {
        let mut e = Env::new(tiny(), wait_for_short(), End::AllDone, objective);
        let mut paid = Vec::new();
        loop {
            let s = e.step(if e.placeable(0) { 0 } else { 2 });
            if !s.placed {
                paid.push((e.time(), s.reward));
            }
            if s.done {
                return (paid, e.summary());
            }
        }
    };
    let (paid, sum) = run(Objective::Within2);
    assert_eq!(sum.slowdowns, vec![1.0, 4.0]);
    let charged: Vec<_> = paid.iter().filter(|p| p.1 != 0.0).collect();
    assert_eq!(charged, vec![&(3, -1.0)], "{paid:?}");
    let over = sum.slowdowns.iter().filter(|&&s| s > 2.0).count() as f64;
    assert_eq!(paid.iter().map(|p| p.1).sum::<f64>(), -over);
    // The mixed objective is the slowdown reward plus the same charge.
    let total = |o| run(o).0.iter().map(|p| p.1).sum::<f64>();
    let mixed = total(Objective::Within2Slowdown);
    assert!((mixed - (total(Objective::Slowdown) - 1.0)).abs() < 1e-9);
    // Waiting one step and running the short job first: slowdowns 1 and 1.5, no charge.
    let mut e = Env::new(tiny(), wait_for_short(), End::AllDone, Objective::Within2);
    let mut ret = e.step(2).reward;
    assert!(
        e.step(1).placed && e.step(0).placed,
        "the short job, then the long one"
    );
    loop {
        let s = e.step(2);
        ret += s.reward;
        if s.done {
            break;
        }
    }
    assert_eq!(ret, 0.0);
    assert!(e.summary().slowdowns.iter().all(|&s| s <= 2.0));
}
