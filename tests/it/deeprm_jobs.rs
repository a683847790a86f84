//! DeepRM's environment as a special case of the jobs simulator (docs/jobs.md, "DeepRM's
//! environment as a special case"): one node of DeepRM's capacities, one-task jobs replaying
//! the jobsets `crates/deeprm` draws (same seeds), placed by `DEEPRM_TETRIS@M` and
//! `DEEPRM_SJF@M`, against `crates/deeprm`'s own Tetris and SJF on its own environment. Every
//! job completes at the same time in both, at every load of `deeprm eval`'s figure, M = 5 and
//! 10, so the mean slowdowns are equal exactly. `cargo test --test it deeprm_jobs:: -- --nocapture`
//! prints the table of the docs.

use continuum_core::config::Source;
use continuum_core::rng::{Purpose, stream_rng};
use continuum_deeprm::env::{End, Env, EnvParams, JobSet};
use continuum_deeprm::eval::{EVAL_MAX_LENGTH, Scheduler, eval_jobsets, evaluate};
use continuum_deeprm::{Heuristic, Objective};
use continuum_jobs::placement::VisibleScore;
use continuum_jobs::{
    JobSpec, JobsWorkload, Mitigation, Node, Nodes, Placement, Res, SimSettings, StageSpec,
    run_jobs,
};

/// `deeprm eval`'s default loads, held-out seeds and jobsets per seed (its figure's setting).
const LOADS: [f64; 9] = [0.1, 0.3, 0.5, 0.7, 0.9, 1.1, 1.3, 1.5, 1.7];
const SEEDS: [u64; 5] = [101, 102, 103, 104, 105];
const JOBSETS: usize = 20;

/// DeepRM's environment with `m` visible slots at offered `load` (`deeprm eval`'s way).
fn params(m: usize, load: f64) -> EnvParams {
    let base = EnvParams {
        num_nw: m,
        ..EnvParams::default()
    };
    EnvParams {
        new_job_rate: base.rate_for_load(load),
        ..base
    }
}

/// (arrival, completion) of every job of `set` under `h` on DeepRM's own environment, in
/// arrival order, run as `deeprm eval` runs an episode (until every job is done).
fn deeprm_run(p: EnvParams, set: &JobSet, h: Heuristic) -> Vec<(f64, f64)> {
    let p = EnvParams {
        episode_max_length: p.episode_max_length.max(EVAL_MAX_LENGTH),
        ..p
    };
    let mut env = Env::new(p, set.clone(), End::AllDone, Objective::Slowdown);
    let mut rng = stream_rng(1, Purpose::Policy, 0, 0); // unused by Tetris and SJF
    while !env.step(h.act(&env, &mut rng)).done {}
    assert_eq!(env.in_system().count() + env.dropped as usize, 0);
    let mut out: Vec<(f64, f64)> = env
        .done_jobs
        .iter()
        .map(|j| (f64::from(j.enter), f64::from(j.finish.expect("finished"))))
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

/// DeepRM's machine: one node of `res_slot` cores and `res_slot` GB (resource 0 is cpu,
/// resource 1 memory).
fn machine(p: &EnvParams) -> Nodes {
    let u = f64::from(p.res_slot);
    Nodes::new(vec![Node {
        cluster: None,
        capacity: Res::new(u, 0.0, u),
        speed: 1.0,
    }])
    .expect("valid node")
}

/// The jobset as one-task jobs: DeepRM's timestep t is t seconds, its demand (cpu units, memory
/// units) the request, and work = duration × cores so that the task runs its duration.
fn jobs_of(set: &JobSet) -> Vec<JobSpec> {
    let job = |(t, (len, res)): (usize, &(u32, Vec<u32>))| {
        let (cpu, mem, len) = (f64::from(res[0]), f64::from(res[1]), f64::from(*len));
        JobSpec {
            arrival_s: t as f64,
            kind: 0,
            stages: vec![StageSpec {
                parents: vec![],
                request: Res::new(cpu, 0.0, mem),
                limit: Res::ZERO,
                work_cpu_s: vec![len * cpu],
            }],
            sla_waiting_s: None,
        }
    };
    set.iter()
        .enumerate()
        .filter_map(|(t, j)| j.as_ref().map(|j| (t, j)))
        .map(job)
        .collect()
}

/// (arrival, completion) of every job of `set` in the jobs simulator under `placement`, one
/// scheduling step a second, in arrival order.
fn jobs_run(p: &EnvParams, set: &JobSet, placement: &Placement) -> Vec<(f64, f64)> {
    let yaml = "schema: 1\narrivals: {per_min: 1}\nkinds:\n  - {name: deeprm, share: 1, tasks: \
                1, cpu_request: 1, mem_request_gb: 1, duration_s: 1}\n";
    let workload = JobsWorkload::from_source(&Source::inline("deeprm.yaml", yaml)).unwrap();
    let settings = SimSettings {
        duration_s: p.simu_len as f64,
        step_s: 1.0,
        ..SimSettings::default()
    };
    let jobs = jobs_of(set);
    let r = run_jobs(
        &machine(p),
        &workload,
        &jobs,
        placement,
        Mitigation::None,
        &settings,
    )
    .expect("runs");
    r.jobs
        .iter()
        .map(|j| (j.arrival_s, j.completion_s.expect("completed")))
        .collect()
}

/// Mean slowdown (completion − arrival) / duration over the jobs of some runs.
fn mean_slowdown(runs: &[(Vec<(f64, f64)>, &JobSet)]) -> f64 {
    let mut slow = Vec::new();
    for (done, set) in runs {
        let lens = set.iter().flatten().map(|(len, _)| f64::from(*len));
        slow.extend(done.iter().zip(lens).map(|((a, c), len)| (c - a) / len));
    }
    slow.iter().sum::<f64>() / slow.len() as f64
}

/// One seed at one load: `crates/deeprm`'s mean slowdown (its `evaluate`, the figure `deeprm
/// eval` prints) and the jobs simulator's, after checking that every job completes at the same
/// time in both.
fn compare(p: EnvParams, seed: u64, h: Heuristic, score: VisibleScore) -> (f64, f64) {
    let sets = eval_jobsets(&p, seed, JOBSETS);
    let placement = Placement::deeprm(score, p.num_nw).expect("valid");
    let mut runs = Vec::new();
    for (i, set) in sets.iter().enumerate() {
        let ours = jobs_run(&p, set, &placement);
        let theirs = deeprm_run(p, set, h);
        assert_eq!(
            ours,
            theirs,
            "{} at M = {}, seed {seed}, jobset {i}: (arrival, completion) differ",
            placement.name(),
            p.num_nw
        );
        runs.push((ours, set));
    }
    let (figures, _) = evaluate(p, &sets, Scheduler::Heuristic(h), seed);
    (figures.mean_slowdown, mean_slowdown(&runs))
}

#[test]
fn the_jobs_simulator_reproduces_deeprms_tetris_and_sjf_exactly() {
    let pairs = [
        (Heuristic::Tetris, VisibleScore::Tetris),
        (Heuristic::Sjf, VisibleScore::Sjf),
    ];
    println!(
        "| load | Tetris: deeprm | jobs | largest difference | SJF: deeprm | jobs | largest \
         difference |"
    );
    println!("|---|---|---|---|---|---|---|");
    for m in [5, 10] {
        for load in LOADS {
            let p = params(m, load);
            let mut row = format!("| {:.0} % ", load * 100.0);
            for (h, score) in pairs {
                let (mut d, mut j, mut worst) = (0.0, 0.0, 0.0_f64);
                for seed in SEEDS {
                    let (ds, js) = compare(p, seed, h, score);
                    worst = worst.max((js - ds).abs());
                    d += ds / SEEDS.len() as f64;
                    j += js / SEEDS.len() as f64;
                }
                // The same completions pooled the same way: equal but for the order of the sum.
                assert!(worst < 1e-12, "{h:?} at M = {m}, load {load}: {worst}");
                row += &format!("| {d:.4} | {j:.4} | {:.1e} ", worst);
            }
            if m == 10 {
                println!("{row}|");
            }
        }
    }
}
