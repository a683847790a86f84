//! `continuum profile --models models/ --out profiles` (writes `profiles/local.yaml`): measures the processing delay
//! D_v and capacity C_v of every model of a models directory at every batch size of its
//! manifest, on this machine and backend, and writes a profile file the simulator accepts
//! (docs/model.md §3) — the step ASET took with its prototype.
//!
//! Method per variant (model × batch B): load with one intra-op thread, run `warmup` batches,
//! then time single batches until both `reps` runs and `min_time` have passed; D_v is the
//! median batch time and C_v = B · 1000 / D_v (back-to-back batches, as the worker runs them).

use crate::inference::{Backend, Manifest, Model, backend, reference_input};
use anyhow::{Context, Result};
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

/// How much to measure.
#[derive(Debug, Clone, Copy)]
pub struct ProfileOptions {
    /// Untimed runs first.
    pub warmup: usize,
    /// Least timed runs.
    pub reps: usize,
    /// Least timed duration per variant.
    pub min_time: Duration,
    /// Most timed runs. assumption: 2000 bounds the time spent on the smallest variants.
    pub max_reps: usize,
}

impl Default for ProfileOptions {
    fn default() -> Self {
        // assumption: 5 warm-up runs reach steady state; 30 runs and 1 s give a stable median.
        Self {
            warmup: 5,
            reps: 30,
            min_time: Duration::from_secs(1),
            max_reps: 2000,
        }
    }
}

/// The measurement of one variant.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Model name.
    pub model: String,
    /// Batch size.
    pub batch: u32,
    /// Median batch time, ms.
    pub median_ms: f64,
    /// 90th percentile batch time, ms.
    pub p90_ms: f64,
    /// Timed runs.
    pub reps: usize,
    /// Input bytes of one item.
    pub item_bytes: usize,
}

impl Measurement {
    /// Variant name: `{model}-b{batch}`.
    pub fn variant(&self) -> String {
        format!("{}-b{}", self.model, self.batch)
    }

    /// Capacity C_v = B · 1000 / median, qps.
    pub fn capacity_qps(&self) -> f64 {
        f64::from(self.batch) * 1000.0 / self.median_ms
    }
}

/// Measures every (model, batch) of the manifest.
pub fn measure(manifest: &Manifest, opts: &ProfileOptions) -> Result<Vec<Measurement>> {
    let mut out = Vec::new();
    for m in &manifest.models {
        let mut model = Model::load(&manifest.path_of(m), 1, &m.input)?;
        for &b in &m.batches {
            let n = b as usize;
            let x = reference_input(n, &m.input);
            for _ in 0..opts.warmup {
                model.run(n, &x)?;
            }
            let mut times = Vec::new();
            let start = Instant::now();
            while times.len() < opts.max_reps.max(1)
                && (times.len() < opts.reps.max(1) || start.elapsed() < opts.min_time)
            {
                let t = Instant::now();
                model.run(n, &x)?;
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
            times.sort_by(f64::total_cmp);
            let meas = Measurement {
                model: m.name.clone(),
                batch: b,
                median_ms: times[times.len() / 2],
                p90_ms: times[(times.len() * 9 / 10).min(times.len() - 1)],
                reps: times.len(),
                item_bytes: m.input.iter().product::<usize>() * 4,
            };
            tracing::info!(variant = %meas.variant(), median_ms = meas.median_ms, reps = meas.reps, "measured");
            out.push(meas);
        }
    }
    Ok(out)
}

/// Writes the measurements as a profile file (YAML with comments giving the method).
pub fn to_yaml(manifest: &Manifest, meas: &[Measurement], backend: &Backend) -> String {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Written by `continuum profile --models {}`: measured on this machine ({cpus} logical CPUs),\n\
         # backend {}, one intra-op thread per replica. Do not edit by hand; measure again.\n\
         #\n\
         # base_ms: median time of one batch of `batch` images over `reps` timed runs after warm-up\n\
         #   (p90 in the comment). per_kb_ms = 0: every query is one fixed-size FP32 tensor, so the\n\
         #   delay does not depend on the query size here.\n\
         # ref_kb: the size of one input image as sent (3×64×64 FP32 = 48 KB).\n\
         # capacity_qps: batch · 1000 / base_ms, back-to-back full batches (no headroom).\n\
         # resources: cpu 1 = the one intra-op thread measured; mem_gb 0.25: assumption, a model of\n\
         #   < 1 MB plus the runtime fits well within it.",
        manifest.dir.display(),
        backend
    );
    let _ = writeln!(
        s,
        "\nschema: {}\ntasks:\n  - name: {}\n    metric: \"{}\"",
        continuum_core::config::SCHEMA,
        manifest.task,
        manifest.metric
    );
    let _ = writeln!(s, "\nmodels:");
    for m in &manifest.models {
        let _ = writeln!(
            s,
            "  - name: {}\n    task: {}\n    accuracy: {}    # stands in for {}: {}",
            m.name, manifest.task, m.accuracy, m.stands_in_for, m.accuracy_source
        );
    }
    let _ = writeln!(s, "\nvariants:");
    for x in meas {
        let _ = writeln!(
            s,
            "  - name: {}\n    model: {}\n    runtime: {}\n    device: cpu\n    batch: {}\n    \
             delay: {{base_ms: {:.4}, per_kb_ms: 0.0}}    # median of {} runs; p90 {:.4} ms\n    \
             ref_kb: {}\n    capacity_qps: {:.1}\n    resources: {{cpu: 1, mem_gb: 0.25}}",
            x.variant(),
            x.model,
            backend.name(),
            x.batch,
            x.median_ms.max(0.0001),
            x.reps,
            x.p90_ms,
            x.item_bytes as f64 / 1024.0,
            x.capacity_qps(),
        );
    }
    s
}

/// The measurements as a borderless table laid out by `comfy-table`: a row per variant and
/// batch size, every figure under its header whatever the variant's name and the terminal.
fn measurements_table(meas: &[Measurement]) -> String {
    let mut t = continuum_term::text_table::new_table(&[
        "variant",
        "batch",
        "median_ms",
        "p90_ms",
        "capacity_qps",
    ]);
    for x in meas {
        t.add_row(vec![
            x.variant(),
            x.batch.to_string(),
            format!("{:.3}", x.median_ms),
            format!("{:.3}", x.p90_ms),
            format!("{:.1}", x.capacity_qps()),
        ]);
    }
    continuum_term::text_table::render(&mut t, 0, &[0])
}

/// Carries out `continuum profile`.
pub fn run_cli(models: &Path, out: &Path, opts: &ProfileOptions) -> Result<()> {
    let (file, warning) = continuum_core::config::prepare_out(out, "local.yaml", &["yaml", "yml"])
        .map_err(anyhow::Error::msg)?;
    if let Some(w) = warning {
        eprintln!("{w}");
    }
    let out = file.as_path();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        // Colour codes only where a person reads them, not in a log file.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
    let b = backend::init(crate::inference::BackendChoice::from_env()?)?;
    tracing::info!(backend = %b, "inference backend");
    let manifest = Manifest::load(models)?;
    let meas = measure(&manifest, opts)?;
    let yaml = to_yaml(&manifest, &meas, b);
    std::fs::write(out, &yaml).with_context(|| format!("cannot write {}", out.display()))?;
    print!("{}", measurements_table(&meas));
    println!(
        "wrote {} ({} variants, backend {})",
        out.display(),
        meas.len(),
        b.name()
    );
    Ok(())
}
