//! Checkpoints: the online network's weights in safetensors format, with metadata (action
//! list, state dimensions, topology fingerprint, hyper-parameters) in the file's header; and the
//! [`Agent`] a checkpoint becomes, which picks a policy per scheduler from live observations.

use super::config::DqnConfig;
use super::net::{NetShape, QNet};
use super::state::StateEncoder;
use crate::feasibility::Fleet;
use crate::observe::WindowObservation;
use crate::policy::{self, Policy};
use crate::rng::mix64;
use crate::topology::Topology;
use candle_core::{DType, Device, Tensor};
use candle_nn::{VarBuilder, VarMap};
use std::collections::HashMap;
use std::path::Path;

/// Format tag written in every checkpoint.
const FORMAT: &str = "continuum-dqn/1";

/// The header metadata key under which a checkpoint's fields are stored (as a JSON object).
const META_KEY: &str = "continuum";

/// Why a checkpoint cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The file cannot be read or written.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        message: String,
    },
    /// The file is not a continuum checkpoint, or is damaged.
    #[error("{path}: not a continuum DQN checkpoint: {message}")]
    Format {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The checkpoint was trained for another topology or action set.
    #[error("{path}: incompatible checkpoint: {message}")]
    Incompatible {
        /// The file.
        path: String,
        /// What differs.
        message: String,
    },
}

/// A fingerprint of what the state encoding depends on: every scheduler's workers in distance
/// order (cluster id, variant name, replicas). Two topologies with the same fingerprint give
/// states of the same meaning.
pub fn topology_fingerprint(t: &Topology, variant_names: &[String]) -> String {
    let mut h = mix64(0x636f_6e74);
    let mut eat = |bytes: &[u8]| {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            h = mix64(h ^ u64::from_le_bytes(b));
        }
        h = mix64(h ^ bytes.len() as u64);
    };
    for s in &t.schedulers {
        eat(t.clusters[s.cluster].id.as_bytes());
        for r in &s.reach {
            let w = &t.workers[r.worker as usize];
            eat(t.clusters[w.cluster].id.as_bytes());
            eat(variant_names[w.variant].as_bytes());
            eat(&w.replicas.to_le_bytes());
        }
    }
    format!("{h:016x}")
}

/// A loaded checkpoint.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    /// Policy names, in action order.
    pub actions: Vec<String>,
    /// Topology name it was trained on.
    pub topology: String,
    /// Fingerprint of that topology.
    pub fingerprint: String,
    /// Network shape.
    pub shape: NetShape,
    /// Hyper-parameters it was trained with.
    pub config: DqnConfig,
    /// Weights by variable name.
    pub tensors: HashMap<String, Tensor>,
}

impl Checkpoint {
    /// Writes the variables of `vars` with the metadata to `path`.
    pub fn save(
        path: &Path,
        vars: &VarMap,
        shape: NetShape,
        config: &DqnConfig,
        topology: &str,
        fingerprint: &str,
    ) -> Result<(), CheckpointError> {
        let io = |m: String| CheckpointError::Io {
            path: path.display().to_string(),
            message: m,
        };
        // One metadata entry holding an ordered JSON object: the header's map is a hash map,
        // so several entries would be written in a different order every time.
        let fields: std::collections::BTreeMap<String, String> = [
            ("format", FORMAT.to_string()),
            ("actions", config.actions.join(",")),
            ("topology", topology.to_string()),
            ("topology_fingerprint", fingerprint.to_string()),
            ("features", shape.features.to_string()),
            ("history", shape.history.to_string()),
            ("conv_channels", shape.conv_channels.to_string()),
            ("conv_kernel", shape.conv_kernel.to_string()),
            ("hidden", shape.hidden.to_string()),
            (
                "config",
                serde_json::to_string(config).map_err(|e| io(e.to_string()))?,
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let meta: HashMap<String, String> = [(
            META_KEY.to_string(),
            serde_json::to_string(&fields).map_err(|e| io(e.to_string()))?,
        )]
        .into_iter()
        .collect();
        let data = vars.data().lock().expect("var map lock");
        let tensors: Vec<(String, Tensor)> = data
            .iter()
            .map(|(k, v)| (k.clone(), v.as_tensor().clone()))
            .collect();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| io(e.to_string()))?;
        }
        safetensors::serialize_to_file(tensors, Some(meta), path).map_err(|e| io(e.to_string()))
    }

    /// Reads a checkpoint; a file that is not one gets [`CheckpointError::Format`].
    pub fn load(path: &Path) -> Result<Self, CheckpointError> {
        let p = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| CheckpointError::Io {
            path: p.clone(),
            message: e.to_string(),
        })?;
        let fmt = |m: String| CheckpointError::Format {
            path: p.clone(),
            message: m,
        };
        let (_, header) =
            safetensors::SafeTensors::read_metadata(&bytes).map_err(|e| fmt(e.to_string()))?;
        let raw = header
            .metadata()
            .as_ref()
            .and_then(|m| m.get(META_KEY))
            .ok_or_else(|| fmt("no continuum metadata".into()))?;
        let meta: HashMap<String, String> =
            serde_json::from_str(raw).map_err(|e| fmt(format!("metadata: {e}")))?;
        let get = |k: &str| {
            meta.get(k)
                .cloned()
                .ok_or_else(|| fmt(format!("metadata lacks `{k}`")))
        };
        if get("format")? != FORMAT {
            return Err(fmt(format!(
                "format is `{}`, expected `{FORMAT}`",
                get("format")?
            )));
        }
        let num = |k: &str| {
            get(k)?
                .parse::<usize>()
                .map_err(|e| fmt(format!("`{k}`: {e}")))
        };
        let config: DqnConfig =
            serde_json::from_str(&get("config")?).map_err(|e| fmt(format!("`config`: {e}")))?;
        let actions: Vec<String> = get("actions")?.split(',').map(String::from).collect();
        let shape = NetShape {
            features: num("features")?,
            history: num("history")?,
            conv_channels: num("conv_channels")?,
            conv_kernel: num("conv_kernel")?,
            hidden: num("hidden")?,
            actions: actions.len(),
        };
        let tensors = candle_core::safetensors::load_buffer(&bytes, &Device::Cpu)
            .map_err(|e| fmt(e.to_string()))?;
        Ok(Self {
            actions,
            topology: get("topology")?,
            fingerprint: get("topology_fingerprint")?,
            shape,
            config,
            tensors,
        })
    }
}

/// A trained meta-policy: encodes each window's observation and picks, per scheduler, the
/// action with the greatest Q-value.
pub struct Agent {
    net: QNet,
    _vars: VarMap,
    encoder: StateEncoder,
    actions: Vec<&'static dyn Policy>,
    batch: Vec<f32>,
    state: Vec<f32>,
}

impl Agent {
    /// Builds the agent of `ck` for `topology`; fails if the checkpoint was trained for a
    /// topology with other workers or for policies this build does not know.
    pub fn new(
        ck: &Checkpoint,
        path: &Path,
        topology: &Topology,
        fleet: &Fleet,
        variant_names: &[String],
    ) -> Result<Self, CheckpointError> {
        let bad = |m: String| CheckpointError::Incompatible {
            path: path.display().to_string(),
            message: m,
        };
        let fp = topology_fingerprint(topology, variant_names);
        if fp != ck.fingerprint {
            return Err(bad(format!(
                "it was trained on topology `{}` (fingerprint {}), but `{}` has other workers (fingerprint {fp})",
                ck.topology, ck.fingerprint, topology.name
            )));
        }
        let actions = ck
            .actions
            .iter()
            .map(|a| {
                policy::by_name(a)
                    .ok_or_else(|| bad(format!("unknown policy `{a}` in its action list")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let encoder = StateEncoder::new(topology, fleet, &ck.config);
        if encoder.features() != ck.shape.features || encoder.history() != ck.shape.history {
            return Err(bad(format!(
                "state is {}×{} for this topology, but the network expects {}×{}",
                encoder.features(),
                encoder.history(),
                ck.shape.features,
                ck.shape.history
            )));
        }
        let vars = VarMap::new();
        let net = QNet::new(
            ck.shape,
            VarBuilder::from_varmap(&vars, DType::F32, &Device::Cpu),
        )
        .map_err(|e| bad(e.to_string()))?;
        {
            let data = vars.data().lock().expect("var map lock");
            for (name, var) in data.iter() {
                let t = ck
                    .tensors
                    .get(name)
                    .ok_or_else(|| bad(format!("weights lack `{name}`")))?;
                var.set(t).map_err(|e| bad(format!("`{name}`: {e}")))?;
            }
        }
        Ok(Self {
            net,
            _vars: vars,
            encoder,
            actions,
            batch: Vec::new(),
            state: Vec::new(),
        })
    }

    /// The policies the agent chooses among.
    pub fn actions(&self) -> &[&'static dyn Policy] {
        &self.actions
    }

    /// Adds a window's observation to the state history.
    pub fn observe(&mut self, obs: &WindowObservation) {
        self.encoder.push(obs);
    }

    /// Q-values of every scheduler's current state, `[scheduler][action]`.
    pub fn q_values(&mut self) -> candle_core::Result<Vec<Vec<f32>>> {
        let n = self.encoder.schedulers();
        self.batch.clear();
        for s in 0..n {
            self.encoder.state_into(s, &mut self.state);
            self.batch.extend_from_slice(&self.state);
        }
        let shape = self.net.shape();
        let x = Tensor::from_slice(
            &self.batch,
            (n, shape.features, shape.history),
            &Device::Cpu,
        )?;
        self.net.forward(&x)?.to_vec2::<f32>()
    }

    /// The greedy action of every scheduler (ties: the lower index).
    pub fn decide(&mut self) -> candle_core::Result<Vec<usize>> {
        Ok(self.q_values()?.iter().map(|q| argmax(q)).collect())
    }
}

/// Index of the greatest value (the first on ties).
pub fn argmax(q: &[f32]) -> usize {
    let mut best = 0;
    for (i, x) in q.iter().enumerate() {
        if *x > q[best] {
            best = i;
        }
    }
    best
}
