//! The bounded stable-toolchain run of every fuzz target, for CI (`cargo test --workspace`
//! runs it): each target over its seed corpus, its saved regressions, and [`CASES`]
//! deterministic mutations of its seeds plus [`CASES`] random inputs (proptest, fixed seed).
//! The long libFuzzer runs are `fuzz/long_run.sh` (docs/fuzzing.md).

use continuum_fuzz_targets::{TARGETS, Target, regressions, seeds};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// Mutated inputs per target, and random inputs per target: the bound of this run (5 to 9 s
/// for all ten targets in a debug build on 2 cores). `CONTINUUM_FUZZ_CASES` overrides it.
const CASES: u32 = 500;

fn cases() -> u32 {
    std::env::var("CONTINUUM_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(CASES)
}

/// One edit of a byte string: at a position (taken modulo the length), overwrite, insert,
/// delete, or cut there, or splice in a run of an interesting byte.
#[derive(Debug, Clone)]
enum Edit {
    Set(usize, u8),
    Insert(usize, u8),
    Delete(usize),
    Truncate(usize),
    Run(usize, u8, u8),
}

fn edit() -> impl Strategy<Value = Edit> {
    let byte = prop_oneof![
        any::<u8>(),
        Just(0u8),
        Just(0xff),
        Just(b'"'),
        Just(b'{'),
        Just(b'-'),
        Just(b'9'),
        Just(b':'),
        Just(b'\n')
    ];
    prop_oneof![
        (any::<usize>(), byte.clone()).prop_map(|(p, b)| Edit::Set(p, b)),
        (any::<usize>(), byte.clone()).prop_map(|(p, b)| Edit::Insert(p, b)),
        any::<usize>().prop_map(Edit::Delete),
        any::<usize>().prop_map(Edit::Truncate),
        (any::<usize>(), byte, 1u8..64).prop_map(|(p, b, n)| Edit::Run(p, b, n)),
    ]
}

fn apply(mut v: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        let at = |p: usize, len: usize| if len == 0 { 0 } else { p % len };
        match *e {
            Edit::Set(p, b) if !v.is_empty() => {
                let i = at(p, v.len());
                v[i] = b;
            }
            Edit::Insert(p, b) => v.insert(at(p, v.len() + 1), b),
            Edit::Delete(p) if !v.is_empty() => {
                v.remove(at(p, v.len()));
            }
            Edit::Truncate(p) => v.truncate(at(p, v.len() + 1)),
            Edit::Run(p, b, n) => {
                let i = at(p, v.len() + 1);
                v.splice(i..i, std::iter::repeat_n(b, usize::from(n)));
            }
            _ => {}
        }
    }
    v
}

fn runner() -> TestRunner {
    let config = Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    };
    TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha))
}

fn run_bounded(t: Target) {
    let corpus = seeds(t.name);
    assert!(!corpus.is_empty(), "{}: no seeds", t.name);
    for s in &corpus {
        (t.run)(s);
    }
    for (file, input) in regressions(t.name) {
        eprintln!("{}: regression {file}", t.name);
        (t.run)(&input);
    }
    let n = corpus.len();
    let mutated = (0..n, proptest::collection::vec(edit(), 1..8));
    runner()
        .run(&mutated, |(i, edits)| {
            (t.run)(&apply(corpus[i].clone(), &edits));
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{}: {e}", t.name));
    runner()
        .run(&proptest::collection::vec(any::<u8>(), 0..512), |input| {
            (t.run)(&input);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{}: {e}", t.name));
}

fn by_name(name: &str) -> Target {
    *TARGETS.iter().find(|t| t.name == name).expect("a target")
}

macro_rules! bounded {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                run_bounded(by_name(stringify!($name)));
            }
        )*

        #[test]
        fn every_target_has_a_test() {
            let tested = [$(stringify!($name)),*];
            for t in TARGETS {
                assert!(tested.contains(&t.name), "no bounded run of {}", t.name);
            }
        }
    };
}

bounded!(
    oip_json,
    grpc_infer,
    quic_frame,
    worker_scrape,
    stream_token,
    yaml_profiles,
    yaml_topology,
    yaml_workload,
    gateway_config,
    checkpoint,
);
