use super::*;
use crate::tapfinger::features::{random_jobs_obs, random_obs};
use continuum_core::rng::{Purpose, stream_rng};
use rand::Rng;

/// Weights of the right names and shapes for `shape`, uniform in ±1/√fan_in.
fn random_weights(shape: TapNetShape, seed: u64) -> Weights {
    let h = shape.hidden;
    let [fc, fp, fw, fe] = shape.features.widths();
    let mut rng = stream_rng(seed, Purpose::Other, 0, 0);
    let mut w = Weights::default();
    let mut put = |name: &str, dims: Vec<usize>| {
        let n: usize = dims.iter().product();
        let b = 1.0 / (*dims.last().unwrap_or(&1) as f32).sqrt();
        let v = (0..n).map(|_| rng.random_range(-b..b)).collect();
        w.insert(name, dims, v);
    };
    for (name, ins, bias) in [
        ("enc_c", fc, true),
        ("enc_s", fc, true),
        ("enc_p", fp, true),
        ("enc_w", fw, true),
        ("enc_e", fe, true),
        ("sem_w", h, true),
        ("l1", 2 * h, true),
        ("l2", 2 * h, true),
        ("ctx", 3 * h, true),
        ("ptr_j", h, false),
        ("ptr_g", h, true),
        ("al_w", h, false),
        ("al_j", h, true),
    ] {
        put(&format!("{name}.weight"), vec![h, ins]);
        if bias {
            put(&format!("{name}.bias"), vec![h]);
        }
    }
    for a in ["att_w", "att_e", "att_p"] {
        for p in ["q", "k", "v"] {
            put(&format!("{a}.{p}.weight"), vec![h, h]);
        }
    }
    let fr = shape.features.running_width();
    if fr > 0 {
        put("enc_r.weight", vec![h, fr]);
        put("enc_r.bias", vec![h]);
        for p in ["q", "k", "v"] {
            put(&format!("att_r.{p}.weight"), vec![h, h]);
        }
    }
    for name in ["sem_q", "ptr_v", "al_v"] {
        put(&format!("{name}.weight"), vec![1, h]);
    }
    put("void", vec![h]);
    w
}

/// The AVX2 path (where the CPU has it) gives the same bits as the plain one: every sum
/// keeps its order whatever the vector width.
#[cfg(target_arch = "x86_64")]
#[test]
fn the_avx2_path_gives_the_same_bits() {
    if !std::arch::is_x86_feature_detected!("avx2") {
        eprintln!("no AVX2 on this CPU: nothing to compare");
        return;
    }
    let mut rng = stream_rng(6, Purpose::Other, 0, 0);
    for (seed, hidden, han, features) in [
        (1, 32, true, TapFeatures::Base),
        (3, 24, false, TapFeatures::Rules),
        (4, 64, true, TapFeatures::Rules),
        (5, 40, true, TapFeatures::Jobs),
        (6, 16, false, TapFeatures::Jobs),
    ] {
        let shape = TapNetShape {
            hidden,
            han,
            features,
        };
        let fast = FastTapNet::read(shape, &random_weights(shape, seed)).unwrap();
        for _ in 0..20 {
            let o = if features == TapFeatures::Jobs {
                random_jobs_obs(&mut rng)
            } else {
                random_obs(&mut rng)
            };
            let (mut wide, mut plain) = (AgentLogits::default(), AgentLogits::default());
            // SAFETY: the CPU has AVX2, checked above.
            unsafe { fast.pointer_avx2(&o, &mut wide) };
            fast.pointer_plain(&o, &mut plain);
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&wide.pointer), bits(&plain.pointer));
            assert_eq!(bits(&wide.h2), bits(&plain.h2));
            assert_eq!(bits(&wide.ew), bits(&plain.ew));
        }
    }
}

/// A weight of another shape than the network's, or a missing one, is refused by name.
#[test]
fn weights_of_another_shape_are_refused_by_name() {
    let shape = TapNetShape {
        hidden: 16,
        han: true,
        features: TapFeatures::Base,
    };
    let mut w = random_weights(shape, 1);
    w.insert("l1.weight", vec![16, 31], vec![0.0; 16 * 31]);
    let e = FastTapNet::read(shape, &w).unwrap_err();
    assert!(e.contains("`l1.weight`"), "{e}");
    let e = FastTapNet::read(
        TapNetShape {
            hidden: 8,
            han: true,
            features: TapFeatures::Base,
        },
        &random_weights(shape, 1),
    )
    .unwrap_err();
    assert!(e.contains("the network expects"), "{e}");
}

/// A network of the jobs' features reads its running-task layers, refusing weights without
/// them by name; one of the first set reads none, and its running tasks change nothing.
#[test]
fn only_the_jobs_network_reads_running_tasks() {
    let jobs = TapNetShape {
        hidden: 16,
        han: true,
        features: TapFeatures::Jobs,
    };
    let base = TapNetShape {
        features: TapFeatures::Base,
        ..jobs
    };
    let e = FastTapNet::read(jobs, &random_weights(base, 1)).unwrap_err();
    assert!(e.contains("`enc_r.weight`"), "{e}");
    let fast = FastTapNet::read(base, &random_weights(base, 1)).unwrap();
    let mut rng = stream_rng(8, Purpose::Other, 0, 0);
    let mut o = random_obs(&mut rng);
    let before = fast.pointer(&o).pointer;
    o.running = vec![[1.0; crate::tapfinger::features::RUNNING_FEATURES]; 3];
    assert_eq!(fast.pointer(&o).pointer, before);
    let fast = FastTapNet::read(jobs, &random_weights(jobs, 1)).unwrap();
    let o = random_jobs_obs(&mut rng);
    assert_eq!(fast.pointer(&o).pointer.len(), o.pending.len() + 1);
}
