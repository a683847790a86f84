use super::*;
use crate::ml::MlReport;
use crate::ml::task::{MlTask, MlTaskKind};

/// One cluster of 16 cores and 16 GPUs, no noise, the paper's overhead.
fn one_cluster() -> MlSetting {
    let mut s = MlSetting::synthetic(1, 1.0);
    s.noise = 0.0;
    s
}

fn spec(id: u32, arrival: u64, kind: MlTaskKind) -> MlTaskSpec {
    MlTaskSpec {
        id,
        arrival,
        task: MlTask::synthetic(kind),
        eligible: vec![0],
    }
}

/// Runs to the end, calling `act` at each timestep.
fn drive(run: &mut MlRun, mut act: impl FnMut(&mut Interval<'_>)) {
    while !run.finished() {
        run.admit();
        act(&mut run.interval());
        run.advance();
    }
}

#[test]
fn tasks_finish_when_their_work_is_done() {
    use MlTaskKind::*;
    let tasks = vec![
        spec(0, 0, Insensitive),
        spec(1, 0, Sensitive),
        spec(2, 5, Sensitive),
    ];
    let mut run = MlRun::of_tasks(one_cluster(), tasks, 1);
    drive(&mut run, |iv| match iv.run().now() {
        0 => {
            iv.place(0, 0, Alloc::new(2, 1)).unwrap();
            iv.place(1, 0, Alloc::new(2, 1)).unwrap();
        }
        // Task 0 completed at 4: (14, 15) is free.
        5 => iv.place(2, 0, Alloc::new(14, 15)).unwrap(),
        _ => {}
    });
    let r = MlReport::of(&run);
    assert_eq!((r.completed, r.unfinished), (3, 0));
    let done = |j: usize| match run.tasks()[j].state {
        TaskState::Done(f) => f,
        s => panic!("{s:?}"),
    };
    // The insensitive task: 4 steps; the sensitive one at its minimum: 17.
    assert!((done(0) - 4.0).abs() < 1e-9);
    assert!((done(1) - 17.0).abs() < 1e-9);
    let at = MlTask::synthetic(Sensitive).steps_at(14, 15);
    assert!((done(2) - 5.0 - at).abs() < 1e-9);
    assert!((r.total_completion - (4.0 + 17.0 + at)).abs() < 1e-9);
    assert!((r.makespan - 17.0).abs() < 1e-9);
}

#[test]
fn a_task_never_placed_is_reported_unfinished() {
    let mut s = one_cluster();
    s.max_steps = 30;
    let mut run = MlRun::of_tasks(s, vec![spec(0, 2, MlTaskKind::Sensitive)], 1);
    drive(&mut run, |_| {});
    let r = MlReport::of(&run);
    assert_eq!((r.completed, r.unfinished, r.steps), (0, 1, 30));
    assert!((r.total_completion - 28.0).abs() < 1e-9);
}

#[test]
fn the_whole_cluster_runs_a_sensitive_task_in_two_steps() {
    let mut run = MlRun::of_tasks(one_cluster(), vec![spec(0, 3, MlTaskKind::Sensitive)], 1);
    drive(&mut run, |iv| {
        if iv.run().now() == 3 {
            iv.place(0, 0, Alloc::new(16, 16)).unwrap();
        }
    });
    let r = MlReport::of(&run);
    assert!((r.total_completion - 2.0).abs() < 1e-9, "{r:?}");
    assert!((r.makespan - 5.0).abs() < 1e-9);
}

/// Resizing after progress costs 0.5 step; so does resuming after a pre-emption; keeping the
/// allocation costs nothing.
#[test]
fn the_switching_overhead_is_paid_on_a_change_after_progress() {
    let resize = |plan: &dyn Fn(u64) -> Option<Option<Alloc>>| {
        let mut run = MlRun::of_tasks(one_cluster(), vec![spec(0, 0, MlTaskKind::Insensitive)], 1);
        drive(&mut run, |iv| {
            let now = iv.run().now();
            if now == 0 {
                iv.place(0, 0, Alloc::new(2, 1)).unwrap();
            } else if let Some(a) = plan(now) {
                iv.set_alloc(0, a).unwrap();
            }
        });
        MlReport::of(&run).total_completion
    };
    assert!((resize(&|_| None) - 4.0).abs() < 1e-9);
    assert!((resize(&|t| (t == 1).then_some(Some(Alloc::new(2, 1)))) - 4.0).abs() < 1e-9);
    assert!((resize(&|t| (t == 1).then_some(Some(Alloc::new(4, 1)))) - 4.5).abs() < 1e-9);
    // Withdrawn at 1, back at 2: one step lost and the overhead.
    let pre = |t: u64| match t {
        1 => Some(None),
        2 => Some(Some(Alloc::new(2, 1))),
        _ => None,
    };
    assert!((resize(&pre) - 5.5).abs() < 1e-9);
}

#[test]
fn refused_actions_say_why() {
    let mut s = one_cluster();
    s.clusters.push(Alloc::new(16, 16));
    let tasks = vec![
        spec(0, 0, MlTaskKind::Sensitive),
        spec(1, 0, MlTaskKind::Sensitive),
    ];
    let mut run = MlRun::of_tasks(s, tasks, 1);
    run.admit();
    let mut iv = run.interval();
    assert_eq!(
        iv.place(0, 1, Alloc::new(2, 1)),
        Err(ActionError::Unreachable(0, 1))
    );
    assert_eq!(
        iv.place(0, 0, Alloc::new(1, 1)),
        Err(ActionError::Invalid(0, Alloc::new(1, 1)))
    );
    iv.place(0, 0, Alloc::new(15, 2)).unwrap();
    assert_eq!(
        iv.place(0, 0, Alloc::new(2, 1)),
        Err(ActionError::NotQueued(0))
    );
    assert!(matches!(
        iv.place(1, 0, Alloc::new(2, 1)),
        Err(ActionError::NoRoom(..))
    ));
    assert_eq!(iv.set_alloc(1, None), Err(ActionError::NotBound(1)));
    // A resize that does not fit leaves the old allocation in place.
    assert!(iv.set_alloc(0, Some(Alloc::new(17, 2))).is_err());
    assert_eq!(iv.run().free(0), Alloc::new(1, 14));
    assert_eq!(iv.run().associated(0), 2);
    assert_eq!(iv.run().associated(1), 0);
}

#[test]
fn noise_keeps_progress_within_ten_percent() {
    let mut s = one_cluster();
    s.noise = 0.1;
    for seed in 0..20 {
        let mut run = MlRun::of_tasks(s.clone(), vec![spec(0, 0, MlTaskKind::Insensitive)], seed);
        drive(&mut run, |iv| {
            if iv.run().now() == 0 {
                iv.place(0, 0, Alloc::new(2, 1)).unwrap();
            }
        });
        let t = MlReport::of(&run).total_completion;
        assert!(
            (4.0 / 1.1 - 1e-9..=4.0 / 0.9 + 1e-9).contains(&t),
            "seed {seed}: {t}"
        );
    }
}
