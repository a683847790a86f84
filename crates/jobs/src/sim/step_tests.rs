//! DeepRM's queue order (docs/jobs.md, "DeepRM's environment as a special case") on hand-built
//! runs whose outcome is known by reasoning: the backlog is not scheduled, Tetris packs by
//! alignment, and ties go to the lower visible slot, which a placed task's slot passes to the
//! backlog's front. The comparison with `crates/deeprm` itself is `tests/it/deeprm_jobs.rs`.

use super::super::*;
use crate::nodes::Node;
use crate::placement::VisibleScore;
use crate::resources::Res;
use crate::workload::StageSpec;
use continuum_core::config::Source;

fn workload() -> JobsWorkload {
    let yaml = "schema: 1\narrivals: {per_min: 1}\nkinds:\n  - {name: one, share: 1, tasks: 1, \
                cpu_request: 1, mem_request_gb: 1, duration_s: 1}\n";
    JobsWorkload::from_source(&Source::inline("jobs.yaml", yaml)).expect("valid workload")
}

/// One node of 10 cores and 10 GB, DeepRM's machine.
fn machine() -> Nodes {
    Nodes::new(vec![Node {
        cluster: None,
        capacity: Res::new(10.0, 0.0, 10.0),
        speed: 1.0,
    }])
    .expect("valid node")
}

/// A one-task job arriving at `at` asking for `cpu` cores and `mem` GB for `len` seconds.
fn job(at: f64, cpu: f64, mem: f64, len: f64) -> JobSpec {
    JobSpec {
        arrival_s: at,
        kind: 0,
        stages: vec![StageSpec {
            parents: vec![],
            request: Res::new(cpu, 0.0, mem),
            limit: Res::ZERO,
            work_cpu_s: vec![len * cpu],
        }],
        sla_waiting_s: None,
    }
}

/// Every job's completion time under `placement`.
fn completions(jobs: &[JobSpec], placement: &Placement) -> Vec<f64> {
    let r = run_jobs(
        &machine(),
        &workload(),
        jobs,
        placement,
        Mitigation::None,
        &SimSettings::default(),
    )
    .expect("runs");
    assert!(r.tasks.attempts_balance() && r.tasks.tasks_balance());
    r.jobs
        .iter()
        .map(|j| j.completion_s.expect("done"))
        .collect()
}

fn deeprm(score: VisibleScore, slots: usize) -> Placement {
    Placement::deeprm(score, slots).expect("valid")
}

#[test]
fn the_backlog_waits_even_when_it_would_fit() {
    // 6 cores busy until 2; at 1, A (5 cores) does not fit and B (4 cores) would. With one
    // visible slot B is backlog: it waits for A, placed at 2 beside it. kube-scheduler's queue
    // order places B at 1.
    let jobs = [
        job(0.0, 6.0, 1.0, 2.0),
        job(1.0, 5.0, 1.0, 3.0),
        job(1.0, 4.0, 1.0, 3.0),
    ];
    let sjf = completions(&jobs, &deeprm(VisibleScore::Sjf, 1));
    assert_eq!(sjf, vec![2.0, 5.0, 5.0]);
    let ep = completions(&jobs, &Placement::by_name("EP").unwrap());
    assert_eq!(ep, vec![2.0, 5.0, 4.0]);
}

#[test]
fn tetris_places_the_best_aligned_task_first() {
    // Free (10 cores, 10 GB): A (6, 1) aligns 70, B (5, 8) 130. Tetris places B, and A no
    // longer fits (5 cores left) until B ends at 4; queue order places A, and B waits.
    let jobs = [job(0.0, 6.0, 1.0, 2.0), job(0.0, 5.0, 8.0, 4.0)];
    let tetris = completions(&jobs, &deeprm(VisibleScore::Tetris, 10));
    assert_eq!(tetris, vec![6.0, 4.0]);
    let ep = completions(&jobs, &Placement::by_name("EP").unwrap());
    assert_eq!(ep, vec![2.0, 6.0]);
}

#[test]
fn ties_go_to_the_lower_slot_the_backlog_front_took() {
    // 6 cores busy until 2. At 1, A (3 s), B (1 s), C (2 s), D (2 s) arrive, 5 cores each:
    // slots [A, B, C], D in the backlog. At 2 SJF places B and D takes B's slot: [A, D, C].
    // C and D tie at 2 s and D's slot is lower, so D runs 2–4, then C 3–5 and A 4–7 (ties
    // to the earlier queued would run C first, D 3–5).
    let mut jobs = vec![job(0.0, 6.0, 1.0, 2.0)];
    for len in [3.0, 1.0, 2.0, 2.0] {
        jobs.push(job(1.0, 5.0, 1.0, len));
    }
    let sjf = completions(&jobs, &deeprm(VisibleScore::Sjf, 3));
    assert_eq!(sjf, vec![2.0, 7.0, 3.0, 5.0, 4.0]);
}
