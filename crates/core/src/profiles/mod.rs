//! Tasks, models and model variants (docs/model.md §3): what can run, how fast, how accurately, at what
//! resource cost. Loaded from `profiles/*.yaml`.

mod schema;

use crate::config::{ConfigError, Source};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Index of a task in [`Profiles::tasks`].
pub type TaskId = u16;

/// An inference task, e.g. `object-detection`.
#[derive(Debug, Clone)]
pub struct Task {
    /// Task name.
    pub name: String,
    /// The accuracy metric its models are scored with (e.g. `COCO mAP@0.5`).
    pub metric: String,
}

/// A model that serves a task with a given accuracy.
#[derive(Debug, Clone)]
pub struct Model {
    /// Model name.
    pub name: String,
    /// The task it serves.
    pub task: TaskId,
    /// Accuracy A_m in the task's metric, in [0, 1].
    pub accuracy: f64,
}

/// One way to run a model (docs/model.md §3): runtime, device, batch size, delay, capacity, resources.
#[derive(Debug, Clone)]
pub struct Variant {
    /// Variant name (unique across the profile).
    pub name: String,
    /// Index of its model in [`Profiles::models`].
    pub model: usize,
    /// The task of its model (copied for speed).
    pub task: TaskId,
    /// Accuracy of its model (copied for speed).
    pub accuracy: f64,
    /// Runtime label (e.g. `onnxruntime`, `tensorrt`), informative.
    pub runtime: String,
    /// Device label (`cpu`, `gpu`), informative.
    pub device: String,
    /// Batch size B_v: the most queries one batch takes.
    pub batch: u32,
    /// Fixed part of the delay of one batch, ms.
    pub base_ms: f64,
    /// Delay per KB of query input, ms/KB.
    pub per_kb_ms: f64,
    /// Reference input size ζ_ref(v), KB: a query of this size costs one unit of load.
    pub ref_kb: f64,
    /// Throughput capacity C_v of one replica, in normalised qps.
    pub capacity_qps: f64,
    /// Resource vector r_v of one replica.
    pub resources: BTreeMap<String, f64>,
    /// Time to load one replica (fetch, initialise, warm up) before it serves, s: what a
    /// deployment change waits for ([`DEFAULT_LOAD_S`] unless the profile says).
    pub load_s: f64,
}

/// Model-load time of a variant whose profile gives none, s. Assumption: loading an ONNX
/// detector of tens of MB from local disk and warming it up (first batches, CUDA/TensorRT
/// initialisation on GPUs) takes seconds; 5 s sits in that range.
pub const DEFAULT_LOAD_S: f64 = 5.0;

impl Variant {
    /// Processing delay D_v(ζ) of one batch whose largest query is `frame_kb`.
    #[inline]
    pub fn delay_ms(&self, frame_kb: f64) -> f64 {
        self.base_ms + self.per_kb_ms * frame_kb
    }

    /// Load per query η_v^i = ζ_i / ζ_ref(v).
    #[inline]
    pub fn load_per_query(&self, frame_kb: f64) -> f64 {
        frame_kb / self.ref_kb
    }
}

/// A whole profile file: tasks, models, variants, with name look-ups.
#[derive(Debug, Clone, Default)]
pub struct Profiles {
    /// Tasks, indexed by [`TaskId`].
    pub tasks: Vec<Task>,
    /// Models.
    pub models: Vec<Model>,
    /// Variants.
    pub variants: Vec<Variant>,
    variant_index: HashMap<String, usize>,
}

impl Profiles {
    /// Loads and validates a profile file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        Self::from_source(&Source::read(path)?)
    }

    /// Parses and validates profile text.
    pub fn from_source(src: &Source) -> Result<Self, ConfigError> {
        schema::build(src)
    }

    /// The task with this name.
    pub fn task_id(&self, name: &str) -> Option<TaskId> {
        self.tasks
            .iter()
            .position(|t| t.name == name)
            .map(|i| i as TaskId)
    }

    /// The variant with this name.
    pub fn variant_id(&self, name: &str) -> Option<usize> {
        self.variant_index.get(name).copied()
    }

    /// Every variant's name, in index order.
    pub fn variant_names(&self) -> Vec<String> {
        self.variants.iter().map(|v| v.name.clone()).collect()
    }

    /// Whether some variant serves this task.
    pub fn task_is_served(&self, task: TaskId) -> bool {
        self.variants.iter().any(|v| v.task == task)
    }
}

#[cfg(test)]
mod tests;
