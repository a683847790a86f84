//! `balanced-allocation`: Kubernetes' BalancedAllocation node score (EdgeTuner's
//! BalancedResourceAllocation, BRA) with a cluster as the node — the binding that leaves its
//! cluster's busy `cpu` and `mem_gb` shares closest to each other (docs/model.md §6).
//!
//! A binding's demand is one throughput figure d (normalised qps); it maps onto a cluster's two
//! resources through the replicas that serve it: a worker of variant v whose replicas are busy
//! a fraction u of the time holds u of their resource vectors, so each normalised qps of load on
//! it keeps r_v[k] / C_v of resource k busy ([`crate::feasibility::WorkerInfo::busy_share_per_qps`]).
//! The cluster's busy share of k is the sum over its workers of seen load × that figure, over
//! its capacity c_n[k]; placing the stream adds d × the candidate's figure. A GPU replica (few
//! cores, several GB) loads memory more than cores, a CPU replica the reverse, so the rule
//! steers streams between a cluster's GPU and CPU workers to keep the two shares level.

use super::{Policy, pick_max};
use crate::feasibility::Candidate;
use crate::rng::SimRng;

/// Binds to the candidate whose cluster is left most balanced.
pub(super) struct BalancedAllocation;

/// Kubernetes' score for two resources: 1 − |f_cpu − f_mem|, 0 once either share reaches 1.
fn balance(c: &Candidate) -> f64 {
    let [cpu, mem] = c.cluster_shares;
    if cpu >= 1.0 || mem >= 1.0 {
        0.0
    } else {
        1.0 - (cpu - mem).abs()
    }
}

impl Policy for BalancedAllocation {
    fn name(&self) -> &'static str {
        "balanced-allocation"
    }
    fn choose(&self, c: &[Candidate], _: &mut SimRng) -> usize {
        pick_max(c, balance)
    }
    fn uses_cluster_shares(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Source;
    use crate::dispatch::bind;
    use crate::feasibility::Demand;
    use crate::fixtures;
    use crate::load::{LoadView, OwnBindings, OwnLoad};
    use crate::policy::by_name;
    use crate::profiles::Profiles;
    use crate::rng::{Purpose, stream_rng};
    use crate::scenario::Scenario;
    use crate::topology::Topology;
    use crate::workload::Workload;

    /// One access cluster with 16 cores and 16 GB holding a CPU worker (a replica needs 4 cores
    /// and 1 GB, serves 100 qps) and a GPU worker (2 cores and 4 GB, 100 qps); a scheduler on it.
    const TOPOLOGY: &str = "clusters:\n  - {id: a0, layer: access, capacity: {cpu: 16, gpu: 1, mem_gb: 16}, deploy: {replicas: {cpu-v: 1, gpu-v: 1}}}\n";
    const PROFILES: &str = r#"
tasks: [{name: detect, metric: "test accuracy"}]
models: [{name: m, task: detect, accuracy: 0.5}]
variants:
  - {name: cpu-v, model: m, batch: 1, delay: {base_ms: 5}, ref_kb: 10, capacity_qps: 100, resources: {cpu: 4, mem_gb: 1}}
  - {name: gpu-v, model: m, batch: 1, delay: {base_ms: 5}, ref_kb: 10, capacity_qps: 100, resources: {gpu: 1, cpu: 2, mem_gb: 4}}
"#;

    fn scenario() -> Scenario {
        let p = Profiles::from_source(&Source::inline("p.yaml", PROFILES)).unwrap();
        let t = Topology::from_source(&Source::inline("t.yaml", TOPOLOGY), &p).unwrap();
        let w = fixtures::workload(1.0, "periodic", 1000.0, 0.0);
        let w = Workload::from_source(&Source::inline("w.yaml", &w), &p).unwrap();
        Scenario::new(p, t, w)
    }

    /// A 10 qps stream of 10 KB frames with a 1 s deadline.
    fn demand(sc: &Scenario) -> Demand {
        Demand {
            task: sc.profiles.task_id("detect").expect("task"),
            rate_qps: 10.0,
            frame_kb: 10.0,
            tx_ms: 0.0,
            access_ms: 1.0,
            max_delay_ms: 1000.0,
            min_accuracy: 0.0,
            items: 1,
        }
    }

    #[test]
    fn it_levels_the_cluster_cpu_and_memory_shares() {
        let sc = scenario();
        let fleet = &sc.fleet;
        let w = |v: &str| fixtures::worker(&sc, "a0", v) as u32;
        let (cpu_w, gpu_w) = (w("cpu-v"), w("gpu-v"));
        // Per qps: the CPU worker keeps 4/(100·16) of the cores and 1/(100·16) of the memory busy,
        // the GPU worker 2/(100·16) and 4/(100·16).
        let per = |x: u32| fleet.workers[x as usize].busy_share_per_qps;
        assert_eq!(per(cpu_w), [4.0 / 1600.0, 1.0 / 1600.0]);
        assert_eq!(per(gpu_w), [2.0 / 1600.0, 4.0 / 1600.0]);
        let d = demand(&sc);
        let bra = by_name("balanced-allocation").unwrap();
        let mut rng = stream_rng(1, Purpose::Other, 0, 0);
        let reach = &sc.topology.schedulers[0].reach;
        let mut own = OwnLoad::new(OwnBindings::Off, 1000.0);
        let mut scratch = Vec::new();
        let mut pick = |view: &LoadView| {
            bind(
                &d,
                reach,
                fleet,
                view,
                &mut own,
                0.0,
                bra,
                &mut rng,
                &mut scratch,
            )
            .unwrap()
            .candidate
        };
        // The CPU worker at 60 qps: cores 0.15, memory 0.0375 busy. Another 10 qps on it
        // widens the gap (0.175 vs 0.04375); on the GPU worker it closes it (0.1625 vs 0.0625).
        let mut view = LoadView::idle(fleet.workers.len());
        view.workers[cpu_w as usize].load_qps = 60.0;
        let c = pick(&view);
        assert_eq!(c.worker, gpu_w);
        assert!(
            (c.cluster_shares[0] - 0.1625).abs() < 1e-12,
            "{:?}",
            c.cluster_shares
        );
        assert!(
            (c.cluster_shares[1] - 0.0625).abs() < 1e-12,
            "{:?}",
            c.cluster_shares
        );
        // The GPU worker at 60 qps instead: memory leads (0.15 vs 0.075); the CPU worker evens it.
        let mut view = LoadView::idle(fleet.workers.len());
        view.workers[gpu_w as usize].load_qps = 60.0;
        assert_eq!(pick(&view).worker, cpu_w);
    }

    #[test]
    fn other_policies_get_no_shares() {
        let sc = scenario();
        let view = LoadView::idle(sc.fleet.workers.len());
        let d = demand(&sc);
        let mut own = OwnLoad::new(OwnBindings::Off, 1000.0);
        let c = bind(
            &d,
            &sc.topology.schedulers[0].reach,
            &sc.fleet,
            &view,
            &mut own,
            0.0,
            by_name("least-allocated").unwrap(),
            &mut stream_rng(1, Purpose::Other, 0, 0),
            &mut Vec::new(),
        )
        .unwrap()
        .candidate;
        assert_eq!(c.cluster_shares, [0.0; 2]);
    }
}
