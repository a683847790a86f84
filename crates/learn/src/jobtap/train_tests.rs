use super::*;
use crate::jobtap::agents::variant;
use continuum_infer::tapfinger::features::AgentObs;

fn decision(cluster: u32, step: u64) -> Decision {
    Decision {
        obs: AgentObs::default(),
        action: None,
        won: false,
        logp_ptr: 0.0,
        logp_alloc: 0.0,
        value: 0.0,
        cluster,
        step,
        pending: None,
        offers: 1,
        reward: 0.0,
    }
}

/// Each timestep's count goes to the cluster's last decision at or before it; a cluster's
/// timesteps before its first decision are dropped.
#[test]
fn rewards_go_to_the_last_decision_at_or_before_each_timestep() {
    let mut d = vec![
        decision(0, 0),
        decision(1, 0),
        decision(0, 0),
        decision(1, 2),
    ];
    // Cluster 0 holds 2, 3, 1 tasks at timesteps 0, 1, 2; cluster 1 holds 4, 5, 6.
    let tally = vec![vec![2, 4], vec![3, 5], vec![1, 6]];
    credit(&mut d, &tally, 1.0);
    let r: Vec<f32> = d.iter().map(|x| x.reward).collect();
    assert_eq!(r, vec![0.0, -9.0, -6.0, -6.0]);
    // With γ = 1 the return of cluster 0's last decision is the sum of its counts: what it
    // adds to the total completion time.
    let (_, ret) = crate::tapfinger::ppo::advantages(&d, 1.0, 1.0);
    assert_eq!(ret[2], -6.0);
    assert_eq!(ret[1], -15.0);
}

fn tiny() -> JobTapSettings {
    JobTapSettings {
        updates: 2,
        envs: 3,
        clusters: vec![2, 3],
        tasks_per_cluster: 6,
        hidden: 8,
        minibatch: 16,
        ..JobTapSettings::default()
    }
}

/// Same seed, same weights, whether the environments run on one thread or several.
#[test]
fn same_seed_same_network_whatever_the_thread_count() {
    let v = variant("tapfinger").unwrap();
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let t = pool.install(|| train(v, &tiny(), 3, &|_| {})).unwrap();
        let w = weights_of(&t.vars).unwrap();
        (t.logs, w)
    };
    let (a, b) = (run(1), run(3));
    assert_eq!(a.0, b.0);
    assert_eq!(a.1, b.1);
    let (c, _) = {
        let t = train(v, &tiny(), 4, &|_| {}).unwrap();
        (t.logs, ())
    };
    assert_ne!(a.0, c, "another seed trains another way");
}

#[test]
fn bad_settings_name_their_field() {
    let mut s = tiny();
    s.rate_per_cluster = [0.0, 1.0];
    assert!(s.check().unwrap_err().starts_with("rate_per_cluster"));
    let mut s = tiny();
    s.clusters = vec![];
    assert!(s.check().unwrap_err().starts_with("clusters"));
    assert!(tiny().check().is_ok());
}
