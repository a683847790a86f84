//! Today's mitigations (`none`, `reissue@r`, `discard@r`) count exactly as they did before the
//! per-job kinds and the job bookkeeping were added: the figures below were produced by the
//! simulator as it stood before (the same test run on that code), on a loaded tiny topology.

use super::*;
use continuum_core::fixtures;
use continuum_core::policy::by_name;

/// Offered, success, failure, rejected; reissued, reissue_won, reissue_no_target, cancelled,
/// wasted, discarded; p99 latency in µs; stream tail p99 in µs.
type Golden = ([u64; 4], [u64; 6], u64, u64);

fn run(m: &str, policy: &str) -> Golden {
    let sc = Arc::new(fixtures::scenario(
        fixtures::TOPOLOGY,
        &fixtures::workload(150.0, "poisson", 120.0, 0.0),
    ));
    let cfg = SimConfig {
        duration_s: 40.0,
        seed: 23,
        mitigation: Mitigation::parse(m).unwrap(),
        ..SimConfig::default()
    };
    let mut sim = Simulation::new(sc, cfg, by_name(policy).unwrap());
    sim.finish();
    let t = sim.metrics().sum(|_, _, _| true);
    let c = sim.metrics().mitigation;
    let mut tails = sim.stream_tails_ms();
    tails.sort_unstable_by(f64::total_cmp);
    let tail = tails[(tails.len() * 99).div_ceil(100) - 1];
    (
        [t.offered, t.success, t.failure, t.rejected],
        [
            c.reissued,
            c.reissue_won,
            c.reissue_no_target,
            c.cancelled,
            c.wasted,
            c.discarded,
        ],
        (sim.metrics().latency_quantile_ms(0.99) * 1000.0).round() as u64,
        (tail * 1000.0).round() as u64,
    )
}

#[test]
fn todays_kinds_count_as_before() {
    let want: [(&str, &str, Golden); 4] = [
        (
            "none",
            "closest",
            (
                [39065, 15468, 347, 23250],
                [0, 0, 0, 0, 0, 0],
                123071,
                135532,
            ),
        ),
        (
            "reissue@0.7",
            "closest",
            (
                [39065, 15253, 354, 23458],
                [691, 188, 5703, 37, 343, 0],
                122943,
                131464,
            ),
        ),
        (
            "discard@0.8",
            "closest",
            (
                [39065, 12538, 0, 26527],
                [0, 0, 0, 0, 0, 5583],
                99519,
                110164,
            ),
        ),
        (
            "reissue@0.5",
            "random-proportional-load",
            (
                [39065, 14838, 352, 23875],
                [1699, 661, 8442, 156, 899, 0],
                123199,
                133419,
            ),
        ),
    ];
    for (m, policy, golden) in want {
        assert_eq!(run(m, policy), golden, "{m} {policy}");
    }
}
