use super::*;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

fn sensitive() -> MlTask {
    MlTask::synthetic(MlTaskKind::Sensitive)
}

fn insensitive() -> MlTask {
    MlTask::synthetic(MlTaskKind::Insensitive)
}

#[test]
fn sensitive_speed_by_hand() {
    let t = sensitive();
    // tanh 0.125 = 0.12435300, tanh 0.25 = 0.24491866, tanh 1 = 0.76159416, tanh 2 = 0.96402758.
    // φ(2, 1) = tanh(2/8)·tanh(1/8) = 0.24491866 × 0.12435300 = 0.03045637
    // φ(16, 16) = tanh(2)² = 0.96402758² = 0.92934918; φ(16,16) − φ(2,1) = 0.89889280
    // (8, 8): φ = tanh(1)² = 0.58002566; u = (0.58002566 − 0.03045637) / 0.89889280 = 0.61138468
    //   r = 1/17 + (1/2 − 1/17) × 0.61138468 = 0.05882353 + 0.44117647 × 0.61138468 = 0.32855206
    assert!(
        (t.speed(8, 8) - 0.328_552_06).abs() < 1e-8,
        "{}",
        t.speed(8, 8)
    );
    assert!((t.steps_at(8, 8) - 3.043_657_6).abs() < 1e-6);
    // (16, 1): φ = 0.96402758 × 0.12435300 = 0.11987972; u = 0.08942335 / 0.89889280 = 0.09948166
    //   r = 0.05882353 + 0.44117647 × 0.09948166 = 0.10271250, 9.7359 timesteps
    assert!(
        (t.speed(16, 1) - 0.102_712_50).abs() < 1e-8,
        "{}",
        t.speed(16, 1)
    );
    // (2, 16): φ = 0.24491866 × 0.96402758 = 0.23610835; u = 0.20565198 / 0.89889280 = 0.22878365
    //   r = 0.05882353 + 0.44117647 × 0.22878365 = 0.15975749, 6.2595 timesteps
    assert!(
        (t.speed(2, 16) - 0.159_757_49).abs() < 1e-8,
        "{}",
        t.speed(2, 16)
    );
    // GPUs are the scarcer resource at the minimum (1 GPU against 2 cores): 16 GPUs beat 16 cores.
    assert!(t.steps_at(2, 16) < t.steps_at(16, 1));
}

#[test]
fn sensitive_extremes_are_2_and_17_steps() {
    let t = sensitive();
    assert!(close(t.steps_at(2, 1), 17.0), "{}", t.steps_at(2, 1));
    assert!(close(t.steps_at(16, 16), 2.0), "{}", t.steps_at(16, 16));
    let (mut lo, mut hi) = (f64::INFINITY, 0.0_f64);
    for a in t.allocations() {
        let s = t.steps_at(a.cpu, a.gpu);
        lo = lo.min(s);
        hi = hi.max(s);
    }
    assert!(close(lo, 2.0) && close(hi, 17.0), "range [{lo}, {hi}]");
}

#[test]
fn sensitive_speed_rises_and_flattens_in_each_resource() {
    let t = sensitive();
    for a in t.allocations() {
        let v = t.speed(a.cpu, a.gpu);
        if a.cpu + 2 <= 16 {
            let (v1, v2) = (t.speed(a.cpu + 1, a.gpu), t.speed(a.cpu + 2, a.gpu));
            assert!(v1 > v && v2 - v1 <= v1 - v + 1e-15, "cpu at {a:?}");
        }
        if a.gpu + 2 <= 16 {
            let (v1, v2) = (t.speed(a.cpu, a.gpu + 1), t.speed(a.cpu, a.gpu + 2));
            assert!(v1 > v && v2 - v1 <= v1 - v + 1e-15, "gpu at {a:?}");
        }
    }
}

#[test]
fn insensitive_takes_4_steps_at_every_valid_allocation() {
    let t = insensitive();
    let mut n = 0;
    for a in t.allocations() {
        assert!(close(t.steps_at(a.cpu, a.gpu), 4.0), "{a:?}");
        assert!(close(t.speed(a.cpu, a.gpu), 0.25), "{a:?}");
        n += 1;
    }
    assert_eq!(n, 15 * 16, "cores 2..=16 times GPUs 1..=16");
}

#[test]
fn allocation_mask() {
    for t in [sensitive(), insensitive()] {
        for (cpu, gpu, ok) in [
            (2, 1, true),
            (16, 16, true),
            (2, 16, true),
            (16, 1, true),
            (7, 3, true),
            (0, 0, false),
            (1, 1, false),
            (2, 0, false),
            (1, 16, false),
            (17, 16, false),
            (16, 17, false),
        ] {
            assert_eq!(t.valid(cpu, gpu), ok, "({cpu}, {gpu})");
            assert_eq!(t.speed(cpu, gpu) > 0.0, ok, "speed at ({cpu}, {gpu})");
            assert_eq!(
                t.steps_at(cpu, gpu).is_finite(),
                ok,
                "steps at ({cpu}, {gpu})"
            );
        }
        assert!(t.allocations().all(|a| t.valid(a.cpu, a.gpu)));
    }
    let small = MlTask::new(
        MlTaskKind::Sensitive,
        Alloc::new(3, 3),
        Alloc::new(4, 5),
        1.0,
    );
    let all: Vec<Alloc> = small.allocations().collect();
    assert_eq!(all.len(), 2 * 3);
    assert_eq!(all[0], Alloc::new(3, 3));
    assert_eq!(all[5], Alloc::new(4, 5));
}

#[test]
fn switching_overhead_on_a_reallocation() {
    let t = insensitive();
    let at = Alloc::new(2, 1);
    // A fresh task pays nothing: 1 / 0.25 = 4 timesteps.
    assert!(close(t.remaining_steps(1.0, None, at), 4.0));
    // Half done, same allocation: 0.5 / 0.25 = 2 timesteps.
    assert!(close(t.remaining_steps(0.5, Some(at), at), 2.0));
    // Half done, moved to (4, 1): 0.5 + 2 = 2.5, although the speed is the same.
    assert!(close(
        t.remaining_steps(0.5, Some(at), Alloc::new(4, 1)),
        2.5
    ));
    // Half done and preempted in the last timestep, resumed at the same allocation: 2.5.
    assert!(close(t.remaining_steps(0.5, None, at), 2.5));
    // Sensitive, half done, (2, 1) -> (16, 16): 0.5 + 0.5 / 0.5 = 1.5 (it had 0.5 × 17 = 8.5 left).
    let s = sensitive();
    assert!(close(s.remaining_steps(0.5, Some(at), SYNTHETIC_MAX), 1.5));
    assert!(close(s.remaining_steps(0.5, Some(at), at), 8.5));
    // An invalid target never finishes.
    assert!(
        s.remaining_steps(0.5, Some(at), Alloc::new(1, 1))
            .is_infinite()
    );
}

#[test]
#[should_panic(expected = "remaining work")]
fn remaining_work_beyond_the_task_is_refused() {
    insensitive().remaining_steps(1.5, None, SYNTHETIC_MIN);
}

#[test]
#[should_panic(expected = "exceeds its maximum")]
fn minimum_above_maximum_is_refused() {
    MlTask::new(
        MlTaskKind::Sensitive,
        Alloc::new(4, 1),
        Alloc::new(3, 8),
        1.0,
    );
}

#[test]
fn work_scales_speed_not_steps() {
    let t = MlTask::new(MlTaskKind::Sensitive, SYNTHETIC_MIN, SYNTHETIC_MAX, 3.0);
    assert!(close(t.speed(16, 16), 1.5));
    assert!(close(t.steps_at(16, 16), 2.0));
    assert!(close(t.steps_at(2, 1), 17.0));
}
