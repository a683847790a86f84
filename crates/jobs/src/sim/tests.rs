//! Runs on hand-built nodes and jobs where the outcome is known by reasoning (dependencies,
//! gang, DRF, restart, discard, rejection), then conservation and reproducibility on random
//! runs.

use super::*;
use crate::nodes::Node;
use crate::placement::{JobOrder, Level, Plugin};
use crate::resources::Res;
use crate::workload::StageSpec;
use continuum_core::config::Source;

/// Kind 0 `ai` (independent tasks), kind 1 `dag` (3 chained stages), kind 2 `slow` (a slowdown
/// of 1 or 3); 1 core, 1 GB, 10 CPU-seconds each.
const WORKLOAD: &str = r#"
schema: 1
arrivals: {per_min: 6}
kinds:
  - {name: ai, share: 2, tasks: {uniform: [2, 12]}, cpu_request: 1, cpu_limit: {choice: [1, 2]}, mem_request_gb: 1, gpu: {choice: [0, 0.5]}, work_cpu_s: {lognormal: {mean: 60, std: 120}}}
  - {name: dag, share: 1, tasks: {uniform: [3, 20]}, dag: {stages: {uniform: [1, 4]}}, cpu_request: {choice: [0.5, 1]}, mem_request_gb: 2, duration_s: {exponential: {mean: 30}}, sla_waiting_s: 120}
  - {name: slow, share: 1, tasks: 8, cpu_request: 1, mem_request_gb: 1, work_cpu_s: 20, slowdown: {choice: {values: [1, 3], weights: [0.8, 0.2]}}}
"#;

fn workload() -> JobsWorkload {
    JobsWorkload::from_source(&Source::inline("jobs.yaml", WORKLOAD)).expect("valid workload")
}

fn nodes(specs: &[(f64, f64)]) -> Nodes {
    Nodes::new(
        specs
            .iter()
            .map(|&(cpu, speed)| Node {
                cluster: None,
                capacity: Res::new(cpu, 0.0, 0.0),
                speed,
            })
            .collect(),
    )
    .expect("valid nodes")
}

/// A stage of tasks with `cores` each and these works.
fn stage(parents: Vec<usize>, cores: f64, works: &[f64]) -> StageSpec {
    StageSpec {
        parents,
        request: Res::new(cores, 0.0, 0.0),
        limit: Res::ZERO,
        work_cpu_s: works.to_vec(),
    }
}

fn job(arrival_s: f64, kind: usize, stages: Vec<StageSpec>) -> JobSpec {
    JobSpec {
        arrival_s,
        kind,
        stages,
        sla_waiting_s: None,
    }
}

fn run_by(n: &Nodes, jobs: &[JobSpec], placement: &str, m: Mitigation) -> Report {
    let p = Placement::by_name(placement).expect("named");
    let r = run_jobs(n, &workload(), jobs, &p, m, &SimSettings::default()).expect("runs");
    balanced(&r);
    r
}

fn balanced(r: &Report) {
    assert!(r.tasks.attempts_balance(), "{:?}", r.tasks);
    assert!(r.tasks.tasks_balance(), "{:?}", r.tasks);
}

#[test]
fn a_dag_stage_waits_for_its_parents() {
    // 4 cores. Stage 0: two 10 s tasks from t = 0; stage 1 (after 0): one 5 s task, queued at
    // t = 10 and placed by the step at 10: the job completes at 15.
    let n = nodes(&[(4.0, 1.0)]);
    let j = job(
        0.0,
        1,
        vec![
            stage(vec![], 1.0, &[10.0, 10.0]),
            stage(vec![0], 1.0, &[5.0]),
        ],
    );
    let r = run_by(&n, &[j], "LRP", Mitigation::None);
    assert_eq!(r.jobs[0].completion_s, Some(15.0));
    // At t = 10 (the window end, state after the step at 10) only stage 1 runs.
    assert_eq!((r.queue[0].t_s, r.queue[0].running), (10.0, 1));
    assert_eq!(r.tasks.placed, 3);
    balanced(&r);
    // A job arriving between steps waits for the next: arrival 0.5, placed at 1, done at 11.
    let late = job(0.5, 0, vec![stage(vec![], 1.0, &[10.0])]);
    let r = run_by(&n, &[late], "LRP", Mitigation::None);
    assert_eq!(r.jobs[0].latency_s(), Some(10.5));
}

#[test]
fn restart_and_discard_cut_a_straggler_short() {
    // Node 0: 9 cores at speed 1; node 1: 1 core at speed 0.1. Ten 10 CPU-s tasks: LRP fills
    // node 0 with nine (its score stays above node 1's until they tie at 0, and ties go to
    // node 0), the tenth lands on node 1 and runs 100 s.
    let n = nodes(&[(9.0, 1.0), (1.0, 0.1)]);
    let jobs = [job(0.0, 0, vec![stage(vec![], 1.0, &[10.0; 10])])];
    let none = run_by(&n, &jobs, "LRP", Mitigation::None);
    assert_eq!(none.jobs[0].latency_s(), Some(100.0));
    // restart@0.9: at t = 10 nine are done; the tenth restarts from zero, placed on the now
    // empty node 0 by the step at 10, done at 20.
    let res = run_by(&n, &jobs, "LRP", Mitigation::Restart { ratio: 0.9 });
    assert_eq!(res.jobs[0].latency_s(), Some(20.0));
    assert_eq!((res.jobs[0].restarted, res.jobs[0].discarded), (1, 0));
    assert_eq!(
        (res.tasks.placed, res.tasks.finished, res.tasks.restarted),
        (11, 10, 1)
    );
    balanced(&res);
    // tdp@0.9: the job completes at t = 10 without its tenth task.
    let dis = run_by(&n, &jobs, "LRP", Mitigation::Discard { ratio: 0.9 });
    assert_eq!(dis.jobs[0].latency_s(), Some(10.0));
    assert_eq!((dis.jobs[0].restarted, dis.jobs[0].discarded), (0, 1));
    assert_eq!((dis.tasks.discarded_running, dis.tasks.finished), (1, 9));
    balanced(&dis);
    // A DAG job is never discarded: the same tasks in a stage after a one-task stage.
    let dag = [job(
        0.0,
        1,
        vec![stage(vec![], 1.0, &[1.0]), stage(vec![0], 1.0, &[10.0; 10])],
    )];
    let r = run_by(&n, &dag, "LRP", Mitigation::Discard { ratio: 0.5 });
    assert_eq!(r.jobs[0].discarded, 0);
    assert!(r.jobs[0].completion_s.is_some());
    balanced(&r);
}

#[test]
fn gang_holds_a_job_until_all_its_tasks_fit() {
    // Two nodes of 2 cores. Job 0 (t = 0): one 2-core task for 100 s, on node 0. Job 1 (t = 1):
    // three 1-core 10 s tasks, only two cores free until t = 100. Per task (LRP): two start at
    // 1, the third at 11, done at 21. Gang: all three wait for t = 100, done at 110.
    let n = nodes(&[(2.0, 1.0), (2.0, 1.0)]);
    let jobs = [
        job(0.0, 0, vec![stage(vec![], 2.0, &[200.0])]),
        job(1.0, 0, vec![stage(vec![], 1.0, &[10.0; 3])]),
    ];
    let lrp = run_by(&n, &jobs, "LRP", Mitigation::None);
    assert_eq!(lrp.jobs[1].completion_s, Some(21.0));
    let gang = run_by(&n, &jobs, "GANG_LRP", Mitigation::None);
    assert_eq!(gang.jobs[1].completion_s, Some(110.0));
    assert_eq!(gang.tasks.placed, 4);
    balanced(&gang);
}

#[test]
fn drf_serves_the_job_with_the_smaller_share_first() {
    // One node of 4 cores. Job 0 (t = 0): three 2-core tasks of 50 s, 100 s, 50 s: two start,
    // the third waits. Job 1 (t = 1): one 2-core task of 50 s. At t = 50 two cores free up: job 0
    // holds 2 of 4 cores (share 0.5), job 1 none. DRF starts job 1 (done at 100, job 0's third
    // at 100, done 150); first come first served starts job 0's third (done 100) and job 1 at
    // 100 (done 150).
    let n = nodes(&[(4.0, 1.0)]);
    let jobs = [
        job(0.0, 0, vec![stage(vec![], 2.0, &[100.0, 200.0, 100.0])]),
        job(1.0, 0, vec![stage(vec![], 2.0, &[100.0])]),
    ];
    let drf = run_by(&n, &jobs, "DRF_LRP", Mitigation::None);
    assert_eq!(
        (drf.jobs[0].completion_s, drf.jobs[1].completion_s),
        (Some(150.0), Some(100.0))
    );
    let fifo = Placement::new(
        "FIFO_LRP",
        vec![(Plugin::LeastAllocated, 1.0)],
        Level::Job,
        JobOrder::Fifo,
        false,
    )
    .unwrap();
    let r = run_jobs(
        &n,
        &workload(),
        &jobs,
        &fifo,
        Mitigation::None,
        &SimSettings::default(),
    )
    .unwrap();
    balanced(&r);
    assert_eq!(
        (r.jobs[0].completion_s, r.jobs[1].completion_s),
        (Some(100.0), Some(150.0))
    );
    let lrp = run_by(&n, &jobs, "LRP", Mitigation::None);
    assert_eq!(lrp.jobs[1].completion_s, Some(150.0));
}

#[test]
fn a_job_that_fits_no_node_is_rejected() {
    let n = nodes(&[(2.0, 1.0)]);
    let jobs = [
        job(0.0, 0, vec![stage(vec![], 3.0, &[1.0])]),
        job(0.0, 0, vec![stage(vec![], 1.0, &[1.0])]),
    ];
    let r = run_by(&n, &jobs, "MRP", Mitigation::None);
    assert!(r.jobs[0].rejected && !r.jobs[1].rejected);
    assert_eq!(
        (
            r.jobs_rejected,
            r.jobs_completed,
            r.tasks.rejected,
            r.tasks.created
        ),
        (1, 1, 1, 1)
    );
    balanced(&r);
}

#[test]
fn bad_settings_and_jobs_are_refused() {
    let n = nodes(&[(2.0, 1.0)]);
    let p = Placement::by_name("LRP").unwrap();
    let w = workload();
    let s = SimSettings {
        step_s: 0.0,
        ..SimSettings::default()
    };
    assert!(matches!(
        run(&n, &w, &p, Mitigation::None, &s),
        Err(JobsError::Setting {
            setting: "step_s",
            ..
        })
    ));
    let bad = [job(0.0, 0, vec![stage(vec![1], 1.0, &[1.0])])];
    assert!(matches!(
        run_jobs(&n, &w, &bad, &p, Mitigation::None, &SimSettings::default()),
        Err(JobsError::Job { job: 0, .. })
    ));
    let bad = [job(0.0, 7, vec![stage(vec![], 1.0, &[1.0])])];
    assert!(run_jobs(&n, &w, &bad, &p, Mitigation::None, &SimSettings::default()).is_err());
}

fn random_nodes() -> Nodes {
    Nodes::new(
        (0..12)
            .map(|i| Node {
                cluster: None,
                capacity: Res::new(8.0 + f64::from(i % 3) * 4.0, f64::from(i % 2), 32.0),
                speed: 1.0 + f64::from(i % 4) * 0.25,
            })
            .collect(),
    )
    .unwrap()
}

#[test]
fn every_attempt_is_accounted_for_on_random_runs() {
    let (n, w) = (random_nodes(), workload());
    let mitigations = [
        Mitigation::None,
        Mitigation::Restart { ratio: 0.7 },
        Mitigation::Discard { ratio: 0.8 },
    ];
    for name in [
        "LRP",
        "BRA",
        "RLP",
        "GANG_DRF_BINPACK",
        "SLA_MRP",
        "DRF_BRA",
    ] {
        let p = Placement::by_name(name).unwrap();
        for m in mitigations {
            // A drain too short for every job: some are still running or waiting at the end.
            let s = SimSettings {
                seed: 5,
                duration_s: 900.0,
                drain_s: 30.0,
                ..SimSettings::default()
            };
            let r = run(&n, &w, &p, m, &s).unwrap();
            balanced(&r);
            assert!(r.jobs_completed > 0 && r.jobs_arrived == r.jobs.len());
            assert_eq!(
                r.jobs_arrived,
                r.jobs_completed + r.jobs_rejected + r.jobs_unfinished
            );
            let restarted: u32 = r.jobs.iter().map(|j| j.restarted).sum();
            let discarded: u32 = r.jobs.iter().map(|j| j.discarded).sum();
            assert_eq!(u64::from(restarted), r.tasks.restarted);
            assert_eq!(
                u64::from(discarded),
                r.tasks.discarded_running + r.tasks.discarded_waiting
            );
            match m {
                Mitigation::None => assert_eq!(restarted + discarded, 0),
                Mitigation::Restart { .. } => assert!(restarted > 0 && discarded == 0, "{name}"),
                Mitigation::Discard { .. } => assert!(discarded > 0 && restarted == 0, "{name}"),
            }
            // Until every job is done, with no drain limit: nothing left over.
            let s = SimSettings {
                drain_s: f64::INFINITY,
                ..s
            };
            let r = run(&n, &w, &p, m, &s).unwrap();
            balanced(&r);
            assert_eq!(r.jobs_unfinished, 0);
            assert_eq!(
                r.tasks.running_at_end + r.tasks.waiting_at_end + r.tasks.pending_at_end,
                0
            );
            assert!(
                r.queue
                    .iter()
                    .all(|q| (0.0..=1.0 + 1e-9).contains(&q.cpu_allocated))
            );
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_report() {
    let (n, w) = (random_nodes(), workload());
    let p = Placement::by_name("GANG_LRP").unwrap();
    let s = SimSettings {
        seed: 11,
        duration_s: 600.0,
        ..SimSettings::default()
    };
    let m = Mitigation::Restart { ratio: 0.8 };
    let a = run(&n, &w, &p, m, &s).unwrap();
    assert_eq!(a, run(&n, &w, &p, m, &s).unwrap());
    let b = run(&n, &w, &p, m, &SimSettings { seed: 12, ..s }).unwrap();
    assert_ne!(a.jobs, b.jobs);
    // The jobs do not depend on the placement: every configuration sees the same arrivals.
    let other = run(&n, &w, &Placement::by_name("MRP").unwrap(), m, &s).unwrap();
    let arrivals = |r: &Report| {
        r.jobs
            .iter()
            .map(|j| (j.arrival_s, j.kind, j.tasks))
            .collect::<Vec<_>>()
    };
    assert_eq!(arrivals(&a), arrivals(&other));
}

/// Drives `jobs` window by window (10 s) under `placement` throughout; returns the report and
/// the jobs completed window by window.
fn stepped(
    n: &Nodes,
    w: &JobsWorkload,
    jobs: &[JobSpec],
    p: &Placement,
    m: Mitigation,
    s: &SimSettings,
) -> (Report, usize) {
    let mut st = Stepper::new(n, w, jobs, p, m, s).unwrap();
    let (mut done, mut end) = (0, 0.0);
    loop {
        end += s.window_s;
        st.set_config(p, m);
        let (c, going) = st.advance(end);
        done += c.len();
        if !going {
            break;
        }
    }
    (st.report(), done)
}

#[test]
fn a_run_driven_window_by_window_with_one_configuration_is_the_plain_run() {
    let (n, w) = (random_nodes(), workload());
    let s = SimSettings {
        seed: 5,
        duration_s: 900.0,
        ..SimSettings::default()
    };
    let jobs = w.sample_jobs(s.seed, s.duration_s);
    for (name, m) in [
        ("LRP", Mitigation::None),
        ("MRP", Mitigation::Restart { ratio: 0.8 }),
        ("GANG_DRF_BINPACK", Mitigation::Discard { ratio: 0.7 }),
    ] {
        let p = Placement::by_name(name).unwrap();
        let plain = run_jobs(&n, &w, &jobs, &p, m, &s).unwrap();
        let (by_window, done) = stepped(&n, &w, &jobs, &p, m, &s);
        assert_eq!(plain, by_window, "{name}");
        assert_eq!(done, plain.jobs_completed, "{name}");
    }
}

#[test]
fn the_scheduler_sees_nodes_queue_and_running_tasks_at_a_window_end() {
    // One 4-core node; one job of six 1-core tasks of 10 CPU-s at t = 0: four run from 0, two
    // wait. At t = 5 the four have run 5 s and the two waited 5 s.
    let n = nodes(&[(4.0, 1.0)]);
    let j = job(0.0, 0, vec![stage(vec![], 1.0, &[10.0; 6])]);
    let p = Placement::by_name("LRP").unwrap();
    let jobs = [j];
    let (w, s) = (workload(), SimSettings::default());
    let mut st = Stepper::new(&n, &w, &jobs, &p, Mitigation::None, &s).unwrap();
    let (done, going) = st.advance(5.0);
    assert!(done.is_empty() && going);
    let o = st.observe(5.0, 10, 3);
    assert_eq!(o.nodes[0].cpu, [4.0, 4.0, 4.0]);
    assert_eq!((o.waiting_total, o.running_total), (2, 4));
    assert_eq!(o.waiting.len(), 2);
    assert_eq!(o.running.len(), 3);
    assert_eq!((o.max_waited_s, o.max_elapsed_s), (5.0, 5.0));
    assert_eq!(o.waiting[0].work_cpu_s, 10.0);
    // At 10 the first four end and the two start; at 20 the job completes, 20 s after arrival.
    let (done, _) = st.advance(15.0);
    assert!(done.is_empty());
    let o = st.observe(15.0, 10, 10);
    assert_eq!(
        (o.waiting_total, o.running_total, o.max_elapsed_s),
        (0, 2, 5.0)
    );
    let (done, going) = st.advance(25.0);
    assert_eq!(
        done,
        vec![Completed {
            job: 0,
            latency_s: 20.0
        }]
    );
    assert!(!going);
}

#[test]
fn a_switched_configuration_places_from_the_next_step() {
    // Two idle nodes of 4 and 8 cores; a 1-core task at every 10 s. Least-requested puts each on
    // the 8-core node (more free), most-requested on the 4-core node (fuller after placement).
    let n = nodes(&[(4.0, 1.0), (8.0, 1.0)]);
    let jobs: Vec<JobSpec> = (0..4)
        .map(|i| job(f64::from(i) * 10.0, 0, vec![stage(vec![], 1.0, &[1.0])]))
        .collect();
    let (lrp, mrp) = (
        Placement::by_name("LRP").unwrap(),
        Placement::by_name("MRP").unwrap(),
    );
    let (w, s) = (workload(), SimSettings::default());
    let mut st = Stepper::new(&n, &w, &jobs, &lrp, Mitigation::None, &s).unwrap();
    st.advance(0.5);
    assert_eq!(st.observe(0.5, 0, 10).running[0].node, 1);
    st.set_config(&mrp, Mitigation::None);
    st.advance(10.5);
    assert_eq!(st.observe(10.5, 0, 10).running[0].node, 0);
    st.set_config(&lrp, Mitigation::None);
    st.advance(20.5);
    assert_eq!(st.observe(20.5, 0, 10).running[0].node, 1);
}
