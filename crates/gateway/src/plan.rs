//! The gateway's settings resolved against its topology and profiles: which scheduler it is,
//! which live worker serves each of the topology's workers, the tasks' wire names, and the
//! meta-policy checkpoint. Built at start and again on every reload.

use crate::config::{GatewayConfig, TaskIo, UpstreamConfig};
use anyhow::{Context, Result, anyhow, bail};
use continuum_core::feasibility::Fleet;
use continuum_core::policy::{PolicyTable, StreamClasses};
use continuum_core::profiles::{Profiles, TaskId};
use continuum_core::topology::{Reach, Topology};
use continuum_infer::agent::{Agent, Checkpoint};
use continuum_wire::oip::OipModel;
use std::path::Path;

/// A task as served by the gateway: its id in the profiles and its wire description.
#[derive(Debug, Clone)]
pub(crate) struct TaskSpec {
    /// Task name (the model name clients use on `/v2/models/{task}`).
    pub(crate) name: String,
    /// Task id in the profiles.
    pub(crate) id: TaskId,
    /// Tensor names and shapes.
    pub(crate) io: TaskIo,
}

impl OipModel for TaskSpec {
    fn model_name(&self) -> &str {
        &self.name
    }
    fn input_name(&self) -> &str {
        &self.io.input
    }
    fn output_name(&self) -> &str {
        &self.io.output
    }
}

/// Everything the gateway derives from its configuration files.
pub struct Plan {
    /// The settings it was built from.
    pub cfg: GatewayConfig,
    /// The topology.
    pub topology: Topology,
    /// The profiles.
    pub(crate) profiles: Profiles,
    /// Static worker facts for feasibility.
    pub fleet: Fleet,
    /// Index of this gateway's scheduler in `topology.schedulers`.
    pub(crate) sched: usize,
    /// For each topology worker, the index in `cfg.workers` of the live worker serving it.
    pub served_by: Vec<Option<usize>>,
    /// For each topology worker, its entry of this scheduler's reach in the topology (the
    /// network figures injected in sim-to-live mode); `None` where it is out of reach.
    pub(crate) topo_reach: Vec<Option<Reach>>,
    /// Served tasks.
    pub(crate) tasks: Vec<TaskSpec>,
    /// The meta-policy, with its window and demand buckets.
    pub(crate) agent: Option<Agent>,
    /// The checkpoint's hyper-parameters, when an agent is configured.
    pub(crate) agent_config: Option<continuum_infer::agent::DqnConfig>,
    /// The stream classes and each one's configured policy: the agent's classes, each with
    /// `policy` (until the agent's first decision); else the `policy_table`; else one class
    /// with `policy`.
    pub(crate) policies: PolicyTable,
}

impl Plan {
    /// Loads the topology, profiles and checkpoint named by `cfg` and matches the live workers
    /// to the topology's workers.
    pub fn build(cfg: GatewayConfig) -> Result<Self> {
        let profiles = Profiles::load(&cfg.profiles)?;
        let topology = Topology::load(&cfg.topology, &profiles)?;
        let fleet = Fleet::new(&topology, &profiles);
        let cluster = topology.cluster_index(&cfg.scheduler).ok_or_else(|| {
            anyhow!(
                "scheduler: no cluster `{}` in {}",
                cfg.scheduler,
                cfg.topology.display()
            )
        })?;
        let sched = topology
            .schedulers
            .iter()
            .position(|s| s.cluster == cluster)
            .ok_or_else(|| {
                anyhow!(
                    "scheduler: cluster `{}` is not an access cluster of {} (schedulers sit on the access layer)",
                    cfg.scheduler,
                    cfg.topology.display()
                )
            })?;
        let served_by = match_workers(&cfg.workers, &topology, &profiles)?;
        let mut tasks = Vec::new();
        for (name, io) in &cfg.tasks {
            let id = profiles.task_id(name).ok_or_else(|| {
                anyhow!(
                    "tasks.{name}: no such task in {}; known tasks: {}",
                    cfg.profiles.display(),
                    profiles
                        .tasks
                        .iter()
                        .map(|t| t.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })?;
            tasks.push(TaskSpec {
                name: name.clone(),
                id,
                io: io.clone(),
            });
        }
        let (agent, agent_config) = match &cfg.agent {
            None => (None, None),
            Some(path) => {
                let (a, c) = load_agent(path, &topology, &fleet, &profiles)?;
                (Some(a), Some(c))
            }
        };
        let policies = configured_policies(&cfg, agent.as_ref())?;
        let mut topo_reach = vec![None; topology.workers.len()];
        for r in &topology.schedulers[sched].reach {
            topo_reach[r.worker as usize] = Some(*r);
        }
        Ok(Self {
            topo_reach,
            policies,
            cfg,
            topology,
            profiles,
            fleet,
            sched,
            served_by,
            tasks,
            agent,
            agent_config,
        })
    }

    /// The task of this name.
    pub(crate) fn task(&self, name: &str) -> Option<&TaskSpec> {
        self.tasks.iter().find(|t| t.name == name)
    }

    /// Name of topology worker `w`'s variant.
    pub fn variant_name(&self, w: usize) -> &str {
        &self.profiles.variants[self.topology.workers[w].variant].name
    }

    /// Cluster id of topology worker `w`.
    pub(crate) fn cluster_id(&self, w: usize) -> &str {
        &self.topology.clusters[self.topology.workers[w].cluster].id
    }
}

/// The classes and configured policies (see [`Plan::policies`]); a bad table file is an error
/// naming `policy_table`, the file and what is wrong in it.
fn configured_policies(cfg: &GatewayConfig, agent: Option<&Agent>) -> Result<PolicyTable> {
    let policy = continuum_core::policy::by_name(&cfg.policy)
        .ok_or_else(|| anyhow!("policy: {}", continuum_core::policy::unknown(&cfg.policy)))?;
    Ok(match (agent, &cfg.policy_table) {
        (Some(a), _) => PolicyTable::uniform(a.classes().clone(), policy),
        (None, Some(path)) => PolicyTable::load(path).map_err(|e| anyhow!("policy_table: {e}"))?,
        (None, None) => PolicyTable::uniform(StreamClasses::single(), policy),
    })
}

fn load_agent(
    path: &Path,
    topology: &Topology,
    fleet: &Fleet,
    profiles: &Profiles,
) -> Result<(Agent, continuum_infer::agent::DqnConfig)> {
    let ck = Checkpoint::load(path).with_context(|| format!("agent: {}", path.display()))?;
    let agent = Agent::new(&ck, path, topology, fleet, &profiles.variant_names())?;
    for a in agent.actions() {
        crate::config::refuse_simulator_only(&a.mitigation)
            .map_err(|e| anyhow!("agent: {}: action `{}`: {e}", path.display(), a.name()))?;
    }
    Ok((agent, ck.meta.config))
}

/// For each topology worker, the live worker on its cluster that serves its variant.
fn match_workers(
    ups: &[UpstreamConfig],
    topology: &Topology,
    profiles: &Profiles,
) -> Result<Vec<Option<usize>>> {
    for (i, u) in ups.iter().enumerate() {
        let Some(c) = topology.cluster_index(&u.cluster) else {
            bail!(
                "workers[{i}].cluster: no cluster `{}` in topology `{}`",
                u.cluster,
                topology.name
            );
        };
        for v in u.variants.iter().flatten() {
            let Some(vi) = profiles.variant_id(v) else {
                bail!("workers[{i}].variants: unknown variant `{v}`");
            };
            if !topology
                .workers
                .iter()
                .any(|w| w.cluster == c && w.variant == vi)
            {
                bail!(
                    "workers[{i}].variants: `{v}` is not deployed on cluster `{}` in topology `{}`",
                    u.cluster,
                    topology.name
                );
            }
        }
    }
    Ok(topology
        .workers
        .iter()
        .map(|w| {
            let cluster = &topology.clusters[w.cluster].id;
            let variant = &profiles.variants[w.variant].name;
            ups.iter().position(|u| {
                &u.cluster == cluster
                    && u.variants
                        .as_ref()
                        .is_none_or(|vs| vs.iter().any(|x| x == variant))
            })
        })
        .collect())
}
