//! ISP-shaped topologies of any size (`continuum topology generate`): antennas under central
//! offices under regional DCs under one cloud, with fan-outs, link delays and compute per layer
//! as parameters and a seed for what varies between sites (which antennas carry a GPU, each
//! link's delay within a spread). The output is an ordinary topology file: it goes through the
//! same validation as a hand-written one.
//!
//! Defaults are `topologies/full-edge.yaml`'s (16 antennas, 4 per central office, 2 central
//! offices per regional DC; its link delays, capacities and deployment mix), so that
//! `--antennas 16` gives a topology of the same shape and per-site resources.

use continuum_core::rng::{Purpose, stream_rng};
use rand::Rng;
use std::fmt::Write;

/// GPU replica mix of a central office, per 10 GPUs: `topologies/full-edge.yaml`'s.
pub(crate) const CO_GPU_MIX: [(&str, f64); 6] = [
    ("tiny-yolov2-gpu-b8", 2.0),
    ("mobilenet-ssd-gpu-b8", 2.0),
    ("mobilenet-ssd-gpu-b1", 1.0),
    ("yolov3-gpu-b8", 1.0),
    ("yolov3-gpu-b4", 3.0),
    ("yolov3-gpu-b1", 1.0),
];
/// GPU replica mix of a regional DC, per 24 GPUs: `topologies/full-edge.yaml`'s.
pub(crate) const RDC_GPU_MIX: [(&str, f64); 4] = [
    ("yolov3-gpu-b8", 12.0),
    ("yolov3-gpu-b4", 7.0),
    ("yolov3-gpu-b1", 2.0),
    ("mobilenet-ssd-gpu-b8", 3.0),
];
/// GPU replica mix of the cloud, per 32 GPUs: `topologies/full-edge.yaml`'s.
pub(crate) const CLOUD_GPU_MIX: [(&str, f64); 3] = [
    ("yolov3-gpu-b8", 20.0),
    ("yolov3-gpu-b4", 6.0),
    ("mobilenet-ssd-gpu-b8", 6.0),
];
/// Memory per core, GB: every site of `topologies/full-edge.yaml` has 4 GB per core.
const MEM_GB_PER_CPU: f64 = 4.0;

/// What to generate. Variant names are those of `profiles/object-detection.yaml`.
#[derive(Debug, Clone, PartialEq)]
pub struct GenerateOptions {
    /// Topology name.
    pub name: String,
    /// Antennas (one scheduler each).
    pub antennas: usize,
    /// Antennas per central office.
    pub antennas_per_co: usize,
    /// Central offices per regional DC.
    pub cos_per_rdc: usize,
    /// One-way link delay means, ms: antenna → CO, CO → regional DC, regional DC → cloud.
    pub link_ms: [f64; 3],
    /// Jitter as a fraction of each link's mean.
    pub jitter: f64,
    /// Each link's mean is drawn uniformly within ± this fraction of its layer's mean.
    pub link_spread: f64,
    /// Cores per site: antenna, CO, regional DC, cloud.
    pub cpu: [f64; 4],
    /// GPUs per site: CO, regional DC, cloud.
    pub gpu: [u32; 3],
    /// Share of antennas with one small GPU (drawn per antenna with the seed).
    pub antenna_gpu_share: f64,
    /// Seed of the per-site draws.
    pub seed: u64,
    /// Routing scope written as the file's `max_reach_ms` (`None`: every worker reachable).
    pub max_reach_ms: Option<f64>,
    /// Antennas and central offices only forward traffic: no compute below the regional DCs
    /// (`topologies/dc-cloud.yaml`'s shape; `cpu[0..2]`, `gpu[0]` and the antenna GPUs unused).
    pub bare_edge: bool,
}

impl Default for GenerateOptions {
    fn default() -> Self {
        Self {
            name: "generated".into(),
            antennas: 16,
            antennas_per_co: 4,
            cos_per_rdc: 2,
            link_ms: [1.5, 6.0, 20.0],
            jitter: 0.2,
            link_spread: 0.0,
            cpu: [16.0, 64.0, 128.0, 256.0],
            gpu: [10, 24, 32],
            antenna_gpu_share: 0.5,
            seed: 1,
            max_reach_ms: None,
            bare_edge: false,
        }
    }
}

impl GenerateOptions {
    /// Checks the options; the message names the option.
    pub fn validate(&self) -> Result<(), String> {
        if self.antennas == 0 || self.antennas_per_co == 0 || self.cos_per_rdc == 0 {
            return Err(
                "--antennas, --antennas-per-co and --cos-per-rdc must be at least 1".into(),
            );
        }
        if self.link_ms.iter().any(|x| !(x.is_finite() && *x >= 0.0)) {
            return Err("--link-ms: expected three delays >= 0".into());
        }
        if !(self.jitter.is_finite() && self.jitter >= 0.0) {
            return Err("--jitter: expected a fraction >= 0".into());
        }
        if !(0.0..1.0).contains(&self.link_spread) {
            return Err("--link-spread: expected a fraction in [0, 1)".into());
        }
        if self.cpu.iter().any(|x| !(x.is_finite() && *x > 0.0)) {
            return Err("--cpu: expected four core counts > 0".into());
        }
        if self
            .max_reach_ms
            .is_some_and(|m| !(m.is_finite() && m > 0.0))
        {
            return Err("--max-reach-ms: expected a distance in ms > 0".into());
        }
        if !(0.0..=1.0).contains(&self.antenna_gpu_share) {
            return Err("--antenna-gpu-share: expected a fraction in [0, 1]".into());
        }
        Ok(())
    }

    /// Central offices and regional DCs the fan-outs give.
    pub fn counts(&self) -> (usize, usize) {
        let cos = self.antennas.div_ceil(self.antennas_per_co);
        (cos, cos.div_ceil(self.cos_per_rdc))
    }
}

/// Splits `total` GPUs among `mix` in proportion to its weights (largest remainder; ties to
/// the earlier entry).
fn apportion(total: u32, mix: &[(&'static str, f64)]) -> Vec<(&'static str, u32)> {
    let sum: f64 = mix.iter().map(|m| m.1).sum();
    let exact: Vec<f64> = mix.iter().map(|m| total as f64 * m.1 / sum).collect();
    let mut n: Vec<u32> = exact.iter().map(|x| x.floor() as u32).collect();
    let mut left = total - n.iter().sum::<u32>();
    let mut order: Vec<usize> = (0..mix.len()).collect();
    order.sort_by(|&a, &b| {
        let (ra, rb) = (exact[a] - exact[a].floor(), exact[b] - exact[b].floor());
        rb.total_cmp(&ra).then(a.cmp(&b))
    });
    for i in order {
        if left == 0 {
            break;
        }
        n[i] += 1;
        left -= 1;
    }
    mix.iter()
        .zip(n)
        .filter(|(_, k)| *k > 0)
        .map(|(m, k)| (m.0, k))
        .collect()
}

pub(crate) fn capacity(cpu: f64, gpu: u32) -> String {
    let mem = cpu * MEM_GB_PER_CPU;
    if gpu > 0 {
        format!("{{cpu: {cpu}, gpu: {gpu}, mem_gb: {mem}}}")
    } else {
        format!("{{cpu: {cpu}, mem_gb: {mem}}}")
    }
}

pub(crate) fn deploy(gpus: u32, mix: &[(&'static str, f64)], fill: &str) -> String {
    let replicas = apportion(gpus, mix)
        .iter()
        .map(|(v, k)| format!("{v}: {k}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!("{{replicas: {{{replicas}}}, fill: [{fill}]}}")
}

pub(crate) fn link(mean: f64, jitter: f64) -> String {
    // Two decimals: a generated file reads like a hand-written one.
    let m = (mean * 100.0).round() / 100.0;
    let j = (mean * jitter * 100.0).round() / 100.0;
    format!("{{mean_ms: {m}, jitter_ms: {j}}}")
}

/// The fields that give an antenna with `cpu` cores one small GPU (empty without one).
pub(crate) fn antenna_gpu(gpu: bool, cpu: f64) -> String {
    if gpu {
        format!(
            ", capacity: {}, deploy: {{replicas: {{tiny-yolov2-gpu-b1: 1}}, fill: [mobilenet-ssd-cpu-b1]}}",
            capacity(cpu, 1)
        )
    } else {
        String::new()
    }
}

/// Writes the `layers:` defaults (access, central office, regional DC: links from
/// `o.link_ms`, per-site resources and deployment mixes) and opens `clusters:` with the cloud.
pub(crate) fn write_layers_and_cloud(w: &mut String, o: &GenerateOptions) {
    let _ = writeln!(w, "layers:");
    let [la, lc, lr] = o.link_ms;
    let [ca, cc, cr, cl] = o.cpu;
    let [gc, gr, gl] = o.gpu;
    let _ = writeln!(w, "  access:");
    let _ = writeln!(w, "    link: {}", link(la, o.jitter));
    if !o.bare_edge {
        let _ = writeln!(w, "    capacity: {}", capacity(ca, 0));
        let _ = writeln!(
            w,
            "    deploy: {{replicas: {{mobilenet-ssd-cpu-b4: 1}}, fill: [mobilenet-ssd-cpu-b1]}}"
        );
    }
    let _ = writeln!(w, "  central-office:");
    let _ = writeln!(w, "    link: {}", link(lc, o.jitter));
    if !o.bare_edge {
        let _ = writeln!(w, "    capacity: {}", capacity(cc, gc));
        let _ = writeln!(
            w,
            "    deploy: {}",
            deploy(
                gc,
                &CO_GPU_MIX,
                "mobilenet-ssd-cpu-b1, mobilenet-ssd-cpu-b4"
            )
        );
    }
    let _ = writeln!(w, "  regional-dc:");
    let _ = writeln!(w, "    link: {}", link(lr, o.jitter));
    let _ = writeln!(w, "    capacity: {}", capacity(cr, gr));
    let _ = writeln!(
        w,
        "    deploy: {}",
        deploy(gr, &RDC_GPU_MIX, "mobilenet-ssd-cpu-b4, yolov3-cpu-b1")
    );
    let _ = writeln!(w, "clusters:");
    let _ = writeln!(
        w,
        "  - {{id: cloud, layer: cloud, capacity: {}, deploy: {}}}",
        capacity(cl, gl),
        deploy(gl, &CLOUD_GPU_MIX, "yolov3-cpu-b1, mobilenet-ssd-cpu-b4")
    );
}

/// The topology file for `o` (YAML text). Call [`GenerateOptions::validate`] first.
pub fn generate(o: &GenerateOptions) -> String {
    let (cos, rdcs) = o.counts();
    let mut gpu_rng = stream_rng(o.seed, Purpose::Other, 0x746f_706f, 0);
    let mut link_rng = stream_rng(o.seed, Purpose::Other, 0x746f_706f, 1);
    let mut spread = |mean: f64| {
        if o.link_spread > 0.0 {
            mean * link_rng.random_range(1.0 - o.link_spread..1.0 + o.link_spread)
        } else {
            mean
        }
    };
    let mut y = String::new();
    let w = &mut y;
    let _ = writeln!(
        w,
        "# Generated by `continuum topology generate` (seed {}): {} antennas, {cos} central \
         offices, {rdcs} regional DCs, 1 cloud.\n# Per-site resources and deployment mix: \
         topologies/full-edge.yaml's unless the options changed them; variant names are those \
         of profiles/object-detection.yaml.",
        o.seed, o.antennas
    );
    let _ = writeln!(w, "schema: {}", continuum_core::config::SCHEMA);
    let _ = writeln!(w, "name: {}", o.name);
    if let Some(m) = o.max_reach_ms {
        let _ = writeln!(
            w,
            "max_reach_ms: {m}   # routing scope: workers farther than this (d + 2σ) are no scheduler's candidates"
        );
    }
    write_layers_and_cloud(w, o);
    let [la, lc, lr] = o.link_ms;
    let ca = o.cpu[0];
    let digits = |n: usize| (n.max(2) - 1).to_string().len();
    let (dr, dc, da) = (digits(rdcs), digits(cos), digits(o.antennas));
    for r in 0..rdcs {
        let _ = writeln!(
            w,
            "  - {{id: rdc-{r:0dr$}, layer: regional-dc, parent: cloud, link: {}}}",
            link(spread(lr), o.jitter)
        );
    }
    for c in 0..cos {
        let _ = writeln!(
            w,
            "  - {{id: co-{c:0dc$}, layer: central-office, parent: rdc-{:0dr$}, link: {}}}",
            c / o.cos_per_rdc,
            link(spread(lc), o.jitter)
        );
    }
    for a in 0..o.antennas {
        let gpu = gpu_rng.random_bool(o.antenna_gpu_share) && !o.bare_edge;
        let extra = antenna_gpu(gpu, ca);
        let _ = writeln!(
            w,
            "  - {{id: ant-{a:0da$}, layer: access, parent: co-{:0dc$}, link: {}{extra}}}",
            a / o.antennas_per_co,
            link(spread(la), o.jitter)
        );
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;
    use continuum_core::config::Source;
    use continuum_core::profiles::Profiles;
    use continuum_core::topology::Topology;
    use std::path::Path;

    fn load(text: &str) -> Topology {
        let profiles = Profiles::load(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../profiles/object-detection.yaml"),
        )
        .unwrap();
        Topology::from_source(&Source::inline("generated.yaml", text), &profiles).unwrap()
    }

    #[test]
    fn apportion_keeps_the_total_and_the_reference_mix() {
        assert_eq!(
            apportion(10, &CO_GPU_MIX).iter().map(|x| x.1).sum::<u32>(),
            10
        );
        assert_eq!(
            apportion(24, &RDC_GPU_MIX),
            vec![
                ("yolov3-gpu-b8", 12),
                ("yolov3-gpu-b4", 7),
                ("yolov3-gpu-b1", 2),
                ("mobilenet-ssd-gpu-b8", 3)
            ]
        );
        assert_eq!(apportion(1, &CLOUD_GPU_MIX), vec![("yolov3-gpu-b8", 1)]);
        assert!(apportion(0, &CO_GPU_MIX).is_empty());
    }

    #[test]
    fn generated_files_load_with_the_shape_asked_for() {
        let o = GenerateOptions {
            antennas: 10,
            antennas_per_co: 3,
            cos_per_rdc: 2,
            link_spread: 0.3,
            seed: 7,
            ..Default::default()
        };
        o.validate().unwrap();
        let text = generate(&o);
        let t = load(&text);
        // 10 antennas → 4 COs (3, 3, 3, 1) → 2 regional DCs → 1 cloud.
        assert_eq!(o.counts(), (4, 2));
        assert_eq!(t.clusters.len(), 1 + 2 + 4 + 10);
        assert_eq!(t.schedulers.len(), 10);
        // Seeded: the same seed gives the same file, another seed another one.
        assert_eq!(text, generate(&o));
        assert_ne!(
            text,
            generate(&GenerateOptions {
                seed: 8,
                ..o.clone()
            })
        );
    }

    #[test]
    fn the_default_matches_full_edge_resources() {
        let t = load(&generate(&GenerateOptions::default()));
        let r = load(
            &std::fs::read_to_string(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../../topologies/full-edge.yaml"),
            )
            .unwrap(),
        );
        assert_eq!(t.clusters.len(), r.clusters.len());
        // Same per-layer resources; only which antennas carry a GPU is drawn (full-edge: every
        // other one; here half of them on average).
        let (tc, rc) = (t.total_capacity(), r.total_capacity());
        assert_eq!(tc["cpu"], rc["cpu"]);
        assert_eq!(tc["mem_gb"], rc["mem_gb"]);
        assert!(
            (tc["gpu"] - rc["gpu"]).abs() <= 8.0,
            "{} vs {}",
            tc["gpu"],
            rc["gpu"]
        );
    }

    /// With a routing scope that takes in the own regional DC and the cloud, a scheduler's
    /// candidates do not grow with the country: the same count at 16 and at 64 antennas.
    #[test]
    fn a_bare_edge_has_workers_only_in_the_regional_dcs_and_the_cloud() {
        let t = load(&generate(&GenerateOptions {
            bare_edge: true,
            antenna_gpu_share: 1.0,
            ..Default::default()
        }));
        assert!(!t.workers.is_empty());
        for w in &t.workers {
            let id = &t.clusters[w.cluster].id;
            assert!(id == "cloud" || id.starts_with("rdc-"), "{id}");
        }
        assert_eq!(t.schedulers.len(), 16);
    }

    #[test]
    fn a_routing_scope_keeps_reach_lists_flat() {
        let reach = |antennas| {
            let t = load(&generate(&GenerateOptions {
                antennas,
                max_reach_ms: Some(40.0),
                antenna_gpu_share: 1.0,
                ..Default::default()
            }));
            let n: Vec<usize> = t.schedulers.iter().map(|s| s.reach.len()).collect();
            (
                *n.iter().min().unwrap(),
                *n.iter().max().unwrap(),
                t.workers.len(),
            )
        };
        let (small, large) = (reach(16), reach(64));
        assert_eq!((small.0, small.1), (large.0, large.1));
        assert!(large.2 > 3 * small.2 && small.1 < small.2);
    }

    #[test]
    fn bad_options_are_named() {
        let o = GenerateOptions {
            antennas: 0,
            ..Default::default()
        };
        assert!(o.validate().unwrap_err().contains("--antennas"));
        let o = GenerateOptions {
            link_spread: 1.5,
            ..Default::default()
        };
        assert!(o.validate().unwrap_err().contains("--link-spread"));
        let o = GenerateOptions {
            max_reach_ms: Some(0.0),
            ..Default::default()
        };
        assert!(o.validate().unwrap_err().contains("--max-reach-ms"));
    }
}
